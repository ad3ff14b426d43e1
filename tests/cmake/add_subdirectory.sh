# examples/downstream consuming this source tree with add_subdirectory() (tilegen's tests off):
# the in-tree `tilegen` target generates at build time, a host copy lists outputs at configure.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir add_subdirectory)
"$CMAKE" -S "$TILEGEN_SRC/examples/downstream" -B "$d/build" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_BUILD_TYPE=Release -DTILEGEN_SOURCE_DIR="$TILEGEN_SRC"
grep -q "TILEGEN_BUILD_TESTS:BOOL=OFF" "$d/build/CMakeCache.txt" || fail "tilegen tests not off"
"$NINJA" -C "$d/build" downstream_demo
"$d/build/downstream_demo"
# Nothing left to do after a full build.
"$NINJA" -C "$d/build" downstream_demo -n | grep -q "no work to do" || fail "second build not a no-op"
echo "add_subdirectory OK"
