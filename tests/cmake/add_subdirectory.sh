# examples/downstream consuming this source tree with add_subdirectory() (tilegen's tests off):
# a host copy of tilegen, built at configure time, lists the outputs then and generates at build
# time, so the generator is compiled once (the in-tree `tilegen` target is not built); a change
# to the generator's sources reaches the next build, and a build after a build does nothing.
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
# The consumer's build folder sits one level below the snapshot, as scripts/test.sh's does below
# the source tree: with ccache and CCACHE_BASEDIR over both, the host copy's compile commands
# are the same as those of the host copy the test run built at configure time, and hit.
b="$src/build"
"$CMAKE" -S "$src/examples/downstream" -B "$b" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_BUILD_TYPE=Release -DTILEGEN_SOURCE_DIR="$src"
grep -q "TILEGEN_BUILD_TESTS:BOOL=OFF" "$b/CMakeCache.txt" || fail "tilegen tests not off"
"$NINJA" -C "$b" downstream_demo
"$b/downstream_demo"
# Nothing left to do after a full build.
"$NINJA" -C "$b" downstream_demo -n | grep -q "no work to do" || fail "second build not a no-op"
[ -x "$b/_tilegen_host/generator/tools/tilegen" ] || fail "no host tilegen in _tilegen_host"
[ ! -e "$b/tilegen/generator/tools/tilegen" ] ||
  fail "the in-tree tilegen target was built as well: the generator was compiled twice"
# A generator change: the host copy is rebuilt and the library regenerated, then no-op again.
touch "$src/generator/tools/tilegen.cpp"
"$NINJA" -C "$b" downstream_demo > "$d/rebuild.log" || fail "rebuild after a generator change failed"
grep -q "updating the host tilegen" "$d/rebuild.log" || fail "a generator change did not update the host tilegen"
grep -q "generating mykernels" "$d/rebuild.log" || fail "a generator change did not regenerate the library"
"$NINJA" -C "$b" downstream_demo -n | grep -q "no work to do" || fail "build after the rebuild not a no-op"
echo "add_subdirectory OK"
