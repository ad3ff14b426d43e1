# Cross builds for 64-bit Arm Linux with Debian's cross compilers (docs/c-backend.md "Arm"):
#   apt-get install gcc-aarch64-linux-gnu      (g++-aarch64-linux-gnu for C++ projects)
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=<tilegen>/cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DTILEGEN_HOST_EXECUTABLE=<a tilegen built for the build machine>
# add_tile_kernels() then defaults to the Arm targets (c c_neon c_sve). Programs run on an
# AArch64 machine or under qemu-user: qemu-aarch64 -L /usr/aarch64-linux-gnu ./program
# TILEGEN_AARCH64_TRIPLE names another compiler prefix (e.g. aarch64-none-linux-gnu).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT TILEGEN_AARCH64_TRIPLE)
  set(TILEGEN_AARCH64_TRIPLE aarch64-linux-gnu)
endif()
# try_compile projects configure with this file too: pass the triple on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TILEGEN_AARCH64_TRIPLE)
set(CMAKE_C_COMPILER ${TILEGEN_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TILEGEN_AARCH64_TRIPLE}-g++)

# Debian's multiarch cross root: headers and libraries of the target, nothing of the host.
set(CMAKE_FIND_ROOT_PATH /usr/${TILEGEN_AARCH64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Executables the build runs (try_run, tests) run under qemu-user where it is installed.
find_program(TILEGEN_QEMU_AARCH64 qemu-aarch64)
if(TILEGEN_QEMU_AARCH64 AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TILEGEN_QEMU_AARCH64} -L /usr/${TILEGEN_AARCH64_TRIPLE})
endif()
