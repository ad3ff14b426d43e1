/* tests/lit/emit/hip_grid_fold.test: no code object (tg_hip_launch is a recorder there). */
static const unsigned char tg_no_image[1] = {0};
static const tg_hip_image tg_hip_images[] = {{"gfx90a", tg_no_image, tg_no_image}};
