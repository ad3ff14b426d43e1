# add_tile_kernels with HIP targets on a build machine without an AMD GPU (tests/cmake/
# hip_project, the README tutorial's scale_rows.yaml), against the installed package:
#  1. TARGETS gfx90a gfx1100 hip c in a C project: every .hip variant's device pass becomes a
#     code object for its arch (gfx90a by hipcc, gfx1100 by clang-19; the portable `hip` one
#     for each gfx arch of the library), embedded in its host pass; the binary does not need
#     libamdhip64 at load time; the default launch runs the C variant and _query says why:
#     with the real libamdhip64 and no GPU ("no HIP device: ..."), and with
#     TILEGEN_HIP_LIBRARY naming no library ("no HIP runtime: ...").
#  2. The installed, exported library links TileGen::runtime_hip.
#  3. A HIP project (`project(... LANGUAGES C HIP)`, clang 15 as CMake's HIP compiler) without
#     TARGETS: the gfx targets come from CMAKE_HIP_ARCHITECTURES (a feature suffix dropped, an
#     arch without a tilegen row skipped with a warning; clang 15 knows no gfx942, so gfx90a
#     and gfx1100), beside the host's C targets, and the
#     library builds and falls back to C as in 1. Debian's ROCm 5.2 installs its CMake packages
#     under lib/x86_64-linux-gnu/cmake, where CMake 3.25's HIP support (which looks in
#     <ROCm root>/lib/cmake/hip-lang) and its first try-compile (no library architecture known
#     yet) do not look: the step gives CMake a ROCm root of links to those package folders,
#     CMAKE_PREFIX_PATH to it, and clang the --rocm-path hipcc would pass. A machine with a
#     complete ROCm needs none of this.
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
# 3. Defaults from CMAKE_HIP_ARCHITECTURES in a HIP project.
if command -v clang++-15 >/dev/null; then
  usr_cmake=/usr/lib/x86_64-linux-gnu/cmake
  rocm="$d/rocm-root"
  mkdir -p "$rocm/lib/cmake"
  for p in hip-lang amd_comgr hsa-runtime64; do
    [ -d "$usr_cmake/$p" ] && ln -sfn "$usr_cmake/$p" "$rocm/lib/cmake/$p"
  done
  CMAKE_PREFIX_PATH="$rocm" "$CMAKE" -S "$d/src" -B "$d/default" "${common[@]}" -DMODE=default \
    -DCMAKE_HIP_COMPILER=clang++-15 "-DCMAKE_HIP_COMPILER_ROCM_ROOT=$rocm" \
    "-DCMAKE_HIP_FLAGS=--rocm-path=/usr --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode" \
    "-DCMAKE_HIP_ARCHITECTURES=gfx90a:xnack-;gfx1100;gfx908" >"$d/default.log" 2>&1 ||
    { cat "$d/default.log"; fail "configure a HIP project without TARGETS"; }
  grep -q "are skipped: gfx908" "$d/default.log" ||
    { cat "$d/default.log"; fail "no warning for gfx908, which has no tilegen row"; }
  "$NINJA" -C "$d/default" >"$d/default-build.log" 2>&1 ||
    { tail -50 "$d/default-build.log"; fail "build of the HIP project without TARGETS"; }
  gen=$d/default/hipk_tilegen
  for v in f32__gfx90a.hip.gfx90a f32__gfx1100.hip.gfx1100; do
    [ -s "$gen/hipk__scale_rows__$v.co" ] || fail "no code object hipk__scale_rows__$v.co from CMAKE_HIP_ARCHITECTURES"
  done
  ls "$gen" | grep -q "gfx908\|__hip\.hip\|gfx942" && fail "a variant CMAKE_HIP_ARCHITECTURES did not name"
  ls "$gen" | grep -q "hipk__scale_rows__f32__c\.c" || fail "no C variant beside the HIP ones"
  out=$("$d/default/hip_main") || { echo "$out"; fail "hip_main of the HIP project"; }
  echo "$out" | grep -q "^fallback: ok$" || { echo "$out"; fail "fallback run of the HIP project"; }
  echo "HIP project without TARGETS: $(ls "$gen" | grep -c '\.co$') code objects (gfx90a, gfx1100), C fallback ok"
else
  echo "SKIP (step 3): no clang++-15, CMake's HIP compiler here"
fi
echo "hip_targets OK"
