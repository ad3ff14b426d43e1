/* libtgh.so is the static bench library `tgh` linked whole (bench/hip/rocm/CMakeLists.txt); a
 * shared library target needs at least one source of its own. */
const char tgh_shared_note[] = "tilegen ROCm bench library (bench/hip/rocm)";
