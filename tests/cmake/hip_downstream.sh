# examples/hip_downstream against the installed package: a library with gfx90a, gfx942, gfx1100
# and C variants built on a machine without an AMD GPU, installed and exported; then
# examples/hip_downstream/consumer finds it (find_package(hipscale)), links it and calls it:
# the default launch falls back to the C variant and _query says why (no HIP device, or no HIP
# runtime with TILEGEN_HIP_LIBRARY naming none), the binary has no libamdhip64 in NEEDED, and
# the installed archive holds the three gfx variants. Skipped (77) without hipcc, clang++-19
# and llvm-as-19 (as hip_targets.sh).
source "$(dirname "$0")/lib.sh"
command -v hipcc >/dev/null && command -v clang++-19 >/dev/null && command -v llvm-as-19 >/dev/null ||
  { echo "SKIP: needs hipcc, clang++-19 and llvm-as-19"; exit 77; }
d=$(fresh_dir hip_downstream)
start=$(date +%s)
common=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX"
        -DCMAKE_BUILD_TYPE=Release)
"$CMAKE" -S "$TILEGEN_SRC/examples/hip_downstream" -B "$d/lib" "${common[@]}" \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_INSTALL_PREFIX="$d/install" >"$d/lib.log" 2>&1 ||
  { cat "$d/lib.log"; fail "configure examples/hip_downstream"; }
"$NINJA" -C "$d/lib" >"$d/lib-build.log" 2>&1 || { tail -50 "$d/lib-build.log"; fail "build examples/hip_downstream"; }
for v in gfx90a gfx942 gfx1100; do
  co=$d/lib/hipscale_tilegen/hipscale__scale_rows__f32__$v.hip.$v.co
  [ -s "$co" ] || fail "no code object $co"
done
"$CMAKE" --install "$d/lib" >/dev/null || fail "install examples/hip_downstream"
for f in include/hipscale.h lib/cmake/hipscale/hipscaleTargets.cmake lib/cmake/hipscale/hipscaleConfig.cmake; do
  [ -f "$d/install/$f" ] || fail "missing $d/install/$f"
done
grep -q "TileGen::runtime_hip" "$d"/install/lib/cmake/hipscale/hipscaleTargets.cmake ||
  fail "the exported hipscale does not link TileGen::runtime_hip"
nm "$d"/install/lib*/libhipscale.a >"$d/nm.txt"
for v in gfx90a gfx942 gfx1100 c; do
  grep -q " T tgv_hipscale__scale_rows__f32__$v$" "$d/nm.txt" || fail "no $v variant in the installed archive"
done
# the consumer: only the installed library and tilegen's package
"$CMAKE" -S "$TILEGEN_SRC/examples/hip_downstream/consumer" -B "$d/consumer" "${common[@]}" \
  "-DCMAKE_PREFIX_PATH=$d/install;$PREFIX" >"$d/consumer.log" 2>&1 ||
  { cat "$d/consumer.log"; fail "configure the consumer"; }
"$NINJA" -C "$d/consumer" >"$d/consumer-build.log" 2>&1 || { cat "$d/consumer-build.log"; fail "build the consumer"; }
needed=$(readelf -d "$d/consumer/hipscale_demo" | grep NEEDED)
echo "$needed" | grep -q "amdhip" && fail "hipscale_demo needs libamdhip64 at load time"
out=$("$d/consumer/hipscale_demo") || { echo "$out"; fail "hipscale_demo"; }
echo "$out"
echo "$out" | grep -q "^default launch -> tgv_hipscale__scale_rows__f32__c[_a-z0-9]* \[c[_a-z0-9]*\] (no HIP variant runs: no HIP " ||
  fail "the query did not report the CPU fallback and why the HIP variants did not run"
echo "$out" | grep -q "^default launch (CPU fallback): ok$" || fail "the fallback run"
echo "$out" | grep -q "^device -1: ok$" || fail "the CPU run"
out=$(TILEGEN_HIP_LIBRARY=/nonexistent/libamdhip64.so "$d/consumer/hipscale_demo") || { echo "$out"; fail "hipscale_demo without a HIP runtime"; }
echo "$out" | grep -q "(no HIP variant runs: no HIP runtime: /nonexistent/libamdhip64.so" ||
  { echo "$out"; fail "the query did not say that no HIP runtime was found"; }
echo "hip_downstream OK ($(($(date +%s) - start)) s)"
