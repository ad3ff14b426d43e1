#!/usr/bin/env bash
# The shipped kernels' HIP variants timed against rocBLAS / hipBLASLt and PyTorch on ROCm
# (docs/hip.md "Timing on ROCm"), for someone with an AMD GPU (MI300X: gfx942).
#
#   bench/hip/run_rocm.sh [--dry-run] [--arch ARCH] [--work DIR] [--quick] [--cases K1,K2]
#                         [--specs K1,K2]
#
#   --arch ARCH   the gfx target the library is built for (default gfx942; the portable `hip`
#                 target and `c` are always built beside it)
#   --work DIR    build directory (default build-bench-rocm at the top of the tree)
#   --quick       small shapes (a smoke run); --cases keeps only the named kernels
#   --specs K,..  build only kernels/K.yaml, ... (default: every shipped kernel)
#   --dry-run     build what this machine can (tilegen, the library with every HIP device pass)
#                 and run nothing that needs ROCm's PyTorch or an AMD GPU; says what it skipped
#
# TILEGEN=path: that tilegen lists the outputs at configure time (skips building a host copy).
# Steps: (1) configure bench/hip/rocm with tilegen's tree as a subdirectory and build libtgh.so:
# add_tile_kernels(tgh SPECS kernels/*.yaml TARGETS ARCH hip c), the device passes by hipcc
# (gfx90a) or clang-19 (gfx942, gfx1100), as docs/hip.md says; TILEGEN_HIPCC /
# TILEGEN_HIP_CLANG pick other compilers (a ROCm 6 install: TILEGEN_HIP_CLANG=
# /opt/rocm/llvm/bin/clang++). (2) bench/hip/rocm_bench.py: every case verified once, then ours
# and the anchor timed in the same process with hipEvents (torch.cuda.Event on ROCm), ratios
# printed. Exit 0 only if everything built and every case ran on a HIP variant and verified.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dry=0 arch=gfx942 work="" quick="" cases="" specs=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --dry-run) dry=1 ;;
    --arch) arch=$2; shift ;;
    --work) work=$2; shift ;;
    --quick) quick=--quick ;;
    --cases) cases=$2; shift ;;
    --specs) specs=$2; shift ;;
    *) echo "usage: $0 [--dry-run] [--arch ARCH] [--work DIR] [--quick] [--cases K1,K2] [--specs K1,K2]"; exit 2 ;;
  esac
  shift
done
case $arch in gfx90a | gfx942 | gfx1100) ;; *) echo "run_rocm.sh: --arch $arch has no target row (gfx90a, gfx942, gfx1100)"; exit 2 ;; esac
work=${work:-$root/build-bench-rocm}
mkdir -p "$work"
skipped=()
status=0

echo "== build: add_tile_kernels(tgh ... TARGETS $arch hip c) in $work"
gen=(-G Ninja)
command -v ninja >/dev/null || gen=()
if ! cmake -S "$here/rocm" -B "$work" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DTILEGEN_SOURCE_DIR="$root" "-DTGH_TARGETS=$arch;hip;c" "-DTGH_SPECS=${specs//,/;}" \
    ${TILEGEN:+"-DTILEGEN_HOST_EXECUTABLE=$TILEGEN"} \
    > "$work/configure.log" 2>&1; then
  tail -30 "$work/configure.log"
  echo "run_rocm.sh: configure failed ($work/configure.log)"
  exit 1
fi
if ! nice cmake --build "$work" --target tgh_shared -j "$(nproc 2>/dev/null || echo 2)" > "$work/build.log" 2>&1; then
  grep -m20 -i "error" "$work/build.log"
  echo "run_rocm.sh: build failed ($work/build.log)"
  exit 1
fi
so=$(find "$work" -maxdepth 1 -name 'libtgh.so' | head -1)
hdr=$(find "$work" -name 'tgh.h' -path '*tgh_tilegen*' | head -1)
[[ -n $so && -n $hdr ]] || { echo "run_rocm.sh: no libtgh.so / tgh.h under $work"; exit 1; }
cp "$hdr" "$work/tgh.h" 2>/dev/null || true
n_co=$(find "$work" -name '*.co' | wc -l)
n_var=$(grep -c "^tg_status tgh_" "$work/tgh.h" || true)
echo "built: $so ($n_co code objects, $n_var public functions)"
if [[ -n $(command -v llvm-objdump-19 || true) ]]; then
  n_mfma=$(for co in $(find "$work" -name "*__${arch}.hip.${arch}.co"); do llvm-objdump-19 -d "$co"; done |
           grep -c "v_mfma\|v_wmma" || true)
  echo "matrix instructions in the $arch code objects: $n_mfma"
fi

echo "== environment"
why=$(python3 "$here/rocm_bench.py" --check-env 2>&1)
env_ok=$?
[[ -n $why ]] && echo "$why"
if [[ -z $(command -v rocm-smi || command -v amd-smi || true) ]]; then
  echo "no rocm-smi / amd-smi: no ROCm driver tools on this machine"
fi

if [[ $dry -eq 1 ]]; then
  skipped+=("timing and verification (rocm_bench.py): --dry-run")
elif [[ $env_ok -ne 0 ]]; then
  skipped+=("timing and verification (rocm_bench.py): this machine cannot run them (above)")
  status=1
else
  echo "== timing (ours vs rocBLAS / hipBLASLt / PyTorch, same process, hipEvents)"
  python3 "$here/rocm_bench.py" --lib "$work" $quick ${cases:+--cases "$cases"} | tee "$work/results.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi
for s in "${skipped[@]}"; do echo "skipped: $s"; done
[[ $dry -eq 1 && $env_ok -ne 0 ]] && echo "dry run: built; nothing timed (no ROCm PyTorch / AMD GPU here)"
exit $status
