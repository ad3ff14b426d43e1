# add_tile_kernels with HIP targets on a build machine without an AMD GPU (tests/cmake/
# hip_project, the README tutorial's scale_rows.yaml), against the installed package:
#  1. TARGETS gfx90a gfx1100 hip c in a C project: every .hip variant's device pass becomes a
#     code object for its arch (gfx90a by hipcc, gfx1100 by clang-19; the portable `hip` one
#     for each gfx arch of the library), embedded in its host pass; the binary does not need
#     libamdhip64 at load time; the default launch runs the C variant and _query says why:
#     with the real libamdhip64 and no GPU ("no HIP device: ..."), and with
#     TILEGEN_HIP_LIBRARY naming no library ("no HIP runtime: ...").
#  2. The installed, exported library links TileGen::runtime_hip.
# Skipped (77) without hipcc or clang++-19 and ROCm's device bitcode.
source "$(dirname "$0")/lib.sh"
command -v hipcc >/dev/null && command -v clang++-19 >/dev/null && command -v llvm-as-19 >/dev/null ||
  { echo "SKIP: needs hipcc, clang++-19 and llvm-as-19"; exit 77; }
d=$(fresh_dir hip_targets)
cp -r "$TILEGEN_SRC/tests/cmake/hip_project" "$d/src"
cp "$TILEGEN_SRC/examples/downstream/scale_rows.yaml" "$d/src/"
common=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX"
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX")
"$CMAKE" -S "$d/src" -B "$d/explicit" "${common[@]}" -DMODE=explicit \
  "-DTILEGEN_TEST_TARGETS=gfx90a;gfx1100;hip;c" >"$d/explicit.log" 2>&1 ||
  { cat "$d/explicit.log"; fail "configure with TARGETS gfx90a gfx1100 hip c"; }
"$NINJA" -C "$d/explicit" >"$d/explicit-build.log" 2>&1 ||
  { tail -50 "$d/explicit-build.log"; fail "build with TARGETS gfx90a gfx1100 hip c"; }
gen=$d/explicit/hipk_tilegen
for v in f32__gfx90a.hip.gfx90a f32__gfx1100.hip.gfx1100 f32__hip.hip.gfx90a f32__hip.hip.gfx1100; do
  co=$gen/hipk__scale_rows__$v.co
  [ -s "$co" ] || fail "no code object $co"
  file "$co" | grep -q "ELF 64-bit" || fail "$co is not an ELF code object"
done
[ ! -e "$gen/hipk__scale_rows__f32__gfx90a.hip.gfx1100.co" ] || fail "gfx90a variant built for gfx1100"
grep -q '"gfx1100"' "$gen/hipk__scale_rows__f32__hip.hip.images.h" || fail "portable images"
needed=$(readelf -d "$d/explicit/hip_main" | grep NEEDED)
echo "$needed"
echo "$needed" | grep -q "amdhip" && fail "hip_main needs libamdhip64 at load time"
out=$("$d/explicit/hip_main") || { echo "$out"; fail "hip_main"; }
echo "$out"
echo "$out" | grep -q "^default launch -> c[_a-z0-9]* (no HIP variant runs: no HIP [a-z ]*" ||
  fail "the query did not report the CPU fallback and why the HIP variants did not run"
echo "$out" | grep -q "^fallback: ok$" || fail "fallback run"
out=$(TILEGEN_HIP_LIBRARY=/nonexistent/libamdhip64.so "$d/explicit/hip_main") || { echo "$out"; fail "hip_main without a HIP runtime"; }
echo "$out"
echo "$out" | grep -q "no HIP variant runs: no HIP runtime: /nonexistent/libamdhip64.so" ||
  fail "the query did not say that no HIP runtime was found"
"$CMAKE" --install "$d/explicit" --prefix "$d/install" >/dev/null || fail "install"
grep -q "TileGen::runtime_hip" "$d"/install/lib*/cmake/hipk/hipkTargets.cmake ||
  fail "exported hipk does not link TileGen::runtime_hip"
nm "$d"/install/lib*/libhipk.a >"$d/nm.txt"
grep -q " T tgv_hipk__scale_rows__f32__gfx1100$" "$d/nm.txt" ||
  fail "the gfx1100 variant is not in the installed archive"
echo "hip_targets OK"
