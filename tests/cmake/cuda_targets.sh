# add_tile_kernels with CUDA targets on a build machine without a GPU (tests/cmake/cuda_project,
# the README tutorial's scale_rows.yaml), against the installed package:
#  1. TARGETS sm_80 sm_90 c in a C project: the CUDA language gets enabled, each target's .cu
#     variants are compiled for its own architecture (SASS + PTX), the program runs the C
#     variant with the default launch, _query says why, _desc has nothing to describe, and the
#     binary does not need libcuda (nor a shared cudart).
#  2. No TARGETS in a CUDA project: the CUDA targets come from CMAKE_CUDA_ARCHITECTURES (an
#     entry without a tilegen target is skipped with a warning), the C ones from the host.
#  3. A CUDA target without a CUDA compiler: a configure error that says so.
# Where a GPU is present the program runs and checks the GPU variant instead of the fallback,
# and the script exits 77 (ctest: skipped) at the end, since the fallback was not tested.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir cuda_targets)
cp -r "$TILEGEN_SRC/tests/cmake/cuda_project" "$d/src"
cp "$TILEGEN_SRC/examples/downstream/scale_rows.yaml" "$d/src/"
common=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC"
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX")

# ---- 1. explicit targets ----
"$CMAKE" -S "$d/src" -B "$d/explicit" "${common[@]}" -DMODE=explicit >"$d/explicit.log" 2>&1 ||
  { cat "$d/explicit.log"; fail "configure with TARGETS sm_80 sm_90 c"; }
"$NINJA" -C "$d/explicit" >"$d/explicit-build.log" 2>&1 ||
  { tail -50 "$d/explicit-build.log"; fail "build with TARGETS sm_80 sm_90 c"; }
"$NINJA" -C "$d/explicit" -t commands cuda_main >"$d/explicit-commands.txt"
for t in 80 90; do
  line=$(grep -- "-c .*cudak__scale_rows__f32__sm_$t\.cu" "$d/explicit-commands.txt") ||
    fail "no compile command for the sm_$t variant"
  echo "$line" | grep -q -- "arch=compute_$t,code=\[compute_$t,sm_$t\]" ||
    { echo "$line"; fail "sm_$t variant not compiled for sm_$t SASS + compute_$t PTX"; }
  other=$((t == 80 ? 90 : 80))
  if echo "$line" | grep -q -- "compute_$other"; then
    echo "$line"
    fail "sm_$t variant also compiled for compute_$other"
  fi
done
grep -- "cudak__scale_rows__f32__c\.c" "$d/explicit-commands.txt" | grep -q -- "-O3" ||
  fail "C variant not compiled with -O3"
out=$("$d/explicit/cuda_main") || { echo "$out"; fail "cuda_main"; }
echo "$out"
gpu=0
if echo "$out" | grep -q "^gpu: sm_[0-9]* ok$"; then
  gpu=1 # a GPU machine: the GPU variant ran and was checked; the fallback cannot be tested
else
  echo "$out" | grep -q "^default launch -> c (no CUDA device: cudaGetDeviceCount returned cudaError[A-Za-z]*; fell back to c: " ||
    fail "the query did not report the CPU fallback and its reason"
  echo "$out" | grep -q "^fallback: ok$" || fail "fallback run"
fi
needed=$(readelf -d "$d/explicit/cuda_main" | grep NEEDED)
echo "$needed"
if echo "$needed" | grep -Eq "libcuda\.so|libcudart\.so"; then
  fail "cuda_main needs libcuda/libcudart at load time"
fi

# The installed, exported library links TileGen::runtime_cuda; its objects are in the archive.
"$CMAKE" --install "$d/explicit" --prefix "$d/install" >/dev/null || fail "install"
grep -q "TileGen::runtime_cuda" "$d"/install/lib*/cmake/cudak/cudakTargets.cmake ||
  fail "exported cudak does not link TileGen::runtime_cuda"
nm "$d"/install/lib*/libcudak.a >"$d/nm.txt" # (not piped into grep -q: pipefail + SIGPIPE)
grep -q " T tgv_cudak__scale_rows__f32__sm_90$" "$d/nm.txt" ||
  fail "the sm_90 variant is not in the installed archive"

# ---- 2. targets from CMAKE_CUDA_ARCHITECTURES ----
"$CMAKE" -S "$d/src" -B "$d/default" "${common[@]}" -DMODE=default \
  "-DCMAKE_CUDA_ARCHITECTURES=86;89-real;75" >"$d/default.log" 2>&1 ||
  { cat "$d/default.log"; fail "configure without TARGETS in a CUDA project"; }
grep -q "CMAKE_CUDA_ARCHITECTURES entries without a" "$d/default.log" ||
  fail "no warning about the architecture without a tilegen target (75)"
"$NINJA" -C "$d/default" >"$d/default-build.log" 2>&1 ||
  { tail -50 "$d/default-build.log"; fail "build without TARGETS"; }
host_c="c"
case "$(uname -m)" in x86_64|amd64) host_c="c, c_avx2, c_avx512" ;; aarch64|arm64) host_c="c, c_neon, c_sve" ;; esac
grep -q " \* Targets: sm_86, sm_89, $host_c\." "$d/default/cudak_tilegen/cudak.h" ||
  { grep "Targets:" "$d/default/cudak_tilegen/cudak.h"; fail "default targets"; }
"$NINJA" -C "$d/default" -t commands cuda_main >"$d/default-commands.txt"
grep -- "__sm_89\.cu" "$d/default-commands.txt" |
  grep -q -- "arch=compute_89,code=\[compute_89,sm_89\]" || fail "sm_89 variant arch"
"$d/default/cuda_main" >/dev/null || fail "cuda_main (default targets)"

# ---- 3. no CUDA compiler ----
if CUDACXX=/nonexistent/nvcc "$CMAKE" -S "$d/src" -B "$d/nocuda" "${common[@]}" \
     -DMODE=explicit >"$d/nocuda.log" 2>&1; then
  fail "configure with CUDA targets and no CUDA compiler succeeded"
fi
grep -q "TARGETS lists CUDA targets" "$d/nocuda.log" ||
  { cat "$d/nocuda.log"; fail "no clear error without a CUDA compiler"; }
if [ "$gpu" = 1 ]; then
  echo "cuda_targets: OK on a GPU (the no-GPU fallback was not tested)"
  exit 77
fi
echo "cuda_targets OK"
