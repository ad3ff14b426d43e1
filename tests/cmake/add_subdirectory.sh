# examples/downstream consuming this source tree with add_subdirectory() (tilegen's tests off):
# the in-tree `tilegen` target generates at build time, a host copy lists outputs at configure.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir add_subdirectory)
# A snapshot of the source tree (tracked and untracked, not ignored, files), so that edits made
# while this long test runs cannot make its no-op check flaky.
src="$d/tilegen"
mkdir -p "$src"
if git -C "$TILEGEN_SRC" rev-parse --show-toplevel >/dev/null 2>&1; then
  (cd "$TILEGEN_SRC" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
    tar -xf - -C "$src"
else
  (cd "$TILEGEN_SRC" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$src"
fi
"$CMAKE" -S "$src/examples/downstream" -B "$d/build" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_BUILD_TYPE=Release -DTILEGEN_SOURCE_DIR="$src"
grep -q "TILEGEN_BUILD_TESTS:BOOL=OFF" "$d/build/CMakeCache.txt" || fail "tilegen tests not off"
"$NINJA" -C "$d/build" downstream_demo
"$d/build/downstream_demo"
# Nothing left to do after a full build.
"$NINJA" -C "$d/build" downstream_demo -n | grep -q "no work to do" || fail "second build not a no-op"
echo "add_subdirectory OK"
