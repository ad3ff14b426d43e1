#!/usr/bin/env bash
# Every shipped kernel's CUDA variants compile for sm_80, sm_86, sm_89 and sm_90 (SASS of the
# variant's own architecture, as add_tile_kernels builds them), and ptxas reports no
# local-memory spills for any kernel of any variant (the vectorized and the scalar kernel) and
# no "Potential Performance Loss" (C75xx: wgmma serialized, the sm_90a kernels' worst case);
# nvcc prints no warning (users compile these sources with their own flags).
# Usage: compile_all.sh TILEGEN KERNELS_DIR RUNTIME_INCLUDE WORK_DIR [ARCH...]
# COMPILE_ALL_GREP=STRING compiles only the variant files containing STRING (sm_90a: the
# warp-specialized ones, `tg_kernel_ws`; the rest are the sm_90 lowering, compiled for sm_90).
# Exit 77 (ctest SKIP) when no nvcc is found.
set -uo pipefail
tilegen=$1 kernels=$2 include=$3 work=$4
shift 4
archs=${*:-"80 86 89 90"}
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [[ ! -x $nvcc ]]; then
  echo "SKIP: no nvcc (set CUDACXX); the CUDA variants were not compiled"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
jobs=$(nproc 2>/dev/null || echo 2)
fail=0
for a in $archs; do
  out="$work/sm_$a"
  mkdir -p "$out"
  "$tilegen" generate --lib ck --targets "sm_$a" --out "$out" "$kernels"/*.yaml || { echo "FAIL: generate sm_$a"; fail=1; continue; }
  if [[ -n ${COMPILE_ALL_GREP:-} ]]; then
    for f in "$out"/*.cu; do grep -q "$COMPILE_ALL_GREP" "$f" || rm -f "$f"; done
  fi
  ls "$out"/*.cu | xargs -P "$jobs" -I{} sh -c \
    "'$nvcc' -std=c++17 -O3 -gencode=arch=compute_$a,code=sm_$a -Xptxas -v -I'$include' -c '{}' -o '{}.o' > '{}.log' 2>&1 || echo FAILED >> '{}.log'"
done
printf '%-62s %6s %6s %s\n' "variant" "regs" "spill" "result"
for log in "$work"/sm_*/*.cu.log; do
  v=$(basename "$log" .cu.log)
  arch=$(basename "$(dirname "$log")")
  if grep -q "FAILED\|error" "$log"; then
    printf '%-62s %6s %6s %s\n' "$v" - - "COMPILE ERROR"
    grep -m5 "error" "$log"
    fail=1
    continue
  fi
  regs=$(grep -o "Used [0-9]* registers" "$log" | awk '{print $2}' | sort -n | tail -1)
  spill=$(grep -o "[0-9]* bytes spill stores" "$log" | awk '{s += $1} END {print s + 0}')
  res=ok
  if ((spill > 0)); then res="SPILLS"; fail=1; fi
  if grep -q "Potential Performance Loss" "$log"; then
    res="SERIALIZED"
    fail=1
    grep -m2 -o "(C75[0-9]*)[^:]*" "$log"
  elif grep -q "warning" "$log"; then
    res="WARNINGS"
    fail=1
    grep -m3 "warning" "$log"
  fi
  printf '%-62s %6s %6s %s\n' "$v" "$regs" "$spill" "$res"
done
n=$(ls "$work"/sm_*/*.cu | wc -l)
echo "$n variant files compiled for: $archs"
exit $fail
