/* libtgb.so is the static bench library `tgb` linked whole (bench/cuda/CMakeLists.txt); a
 * shared library target needs at least one source of its own. */
const char tgb_shared_note[] = "tilegen bench library (bench/cuda)";
