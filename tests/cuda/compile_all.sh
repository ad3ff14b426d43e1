#!/usr/bin/env bash
# Every shipped kernel's CUDA variants compile for sm_80, sm_86, sm_89 and sm_90 (SASS of the
# variant's own architecture, as add_tile_kernels builds them), and ptxas reports no
# local-memory spills for any kernel of any variant (the vectorized and the scalar kernel) and
# no "Potential Performance Loss" (C75xx: wgmma serialized, the sm_90a kernels' worst case);
# nvcc prints no warning (users compile these sources with their own flags). A file whose code
# is the same as a file of an earlier architecture in the list (comment lines aside, architecture
# names masked) is listed as such and not compiled again. sm_86 and sm_89 files come from
# sm_80's lowering, whose host code (launch, checks, fallbacks) differs from sm_80's only in
# tile constants: for them only the device code is compiled (-cubin: cicc and ptxas, where the
# spills and device warnings are), which saves the host pass (cudafe++ and the host compiler,
# about a third of a compile); sm_80, sm_90 and sm_90a files are compiled whole (-c).
# Usage: compile_all.sh TILEGEN KERNELS_DIR RUNTIME_INCLUDE WORK_DIR [ARCH...]
# An ARCH written `keys:A` is generated but not compiled: its files only mark code as seen, so
# that `keys:90 90a` compiles just the sm_90a files whose code is not sm_90's (cuda.compile_all
# compiles sm_90's): the warp-specialized kernels, the wgmma ones outside them and the tiles
# sm_90a chose differently.
# COMPILE_ALL_GREP=STRING compiles only the variant files containing STRING.
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
  keys_only=0
  [[ $a == keys:* ]] && keys_only=1 a=${a#keys:}
  out="$work/sm_$a"
  mkdir -p "$out"
  "$tilegen" generate --lib ck --targets "sm_$a" --out "$out" "$kernels"/*.yaml || { echo "FAIL: generate sm_$a"; fail=1; continue; }
  # mla_decode: its bf16 instance only (the f16 one differs in the element type alone; CI time)
  rm -f "$out"/*__mla_decode__f16_*.cu
  if [[ -n ${COMPILE_ALL_GREP:-} ]]; then
    for f in "$out"/*.cu; do grep -q "$COMPILE_ALL_GREP" "$f" || rm -f "$f"; done
  fi
  # a file whose code is an earlier architecture's file's (the same source once the '//'
  # comment lines are dropped and architecture names masked: sm_86 and sm_89 variants that
  # took sm_80's tiles) was compiled there; it is listed, not compiled again
  : > "$out/.compile"
  for f in "$out"/*.cu; do
    key=$(sed -E '/^[[:space:]]*\/\//d; s/sm_[0-9]+a?/sm_X/g' "$f" | sha1sum | cut -c1-40)
    if grep -q "^$key " "$work/.keys" 2>/dev/null; then
      echo "same code as $(grep -m1 "^$key " "$work/.keys" | cut -d' ' -f2-)" > "$f.same"
    else
      echo "$key $(basename "$(dirname "$f")")/$(basename "$f")" >> "$work/.keys"
      ((keys_only)) || echo "$f" >> "$out/.compile"
    fi
  done
  case $a in
    86 | 89) mode=-cubin ;;
    *) mode=-c ;;
  esac
  xargs -P "$jobs" -I{} sh -c \
    "'$nvcc' -std=c++17 -O3 -gencode=arch=compute_$a,code=sm_$a -Xptxas -v -I'$include' $mode '{}' -o '{}.o' > '{}.log' 2>&1 || echo FAILED >> '{}.log'" < "$out/.compile"
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
for same in "$work"/sm_*/*.cu.same; do
  [[ -e $same ]] || continue
  printf '%-62s %6s %6s %s\n' "$(basename "$same" .cu.same)" - - "$(cat "$same")"
done
n=$(ls "$work"/sm_*/*.cu | wc -l)
d=$(ls "$work"/sm_*/*.cu.same 2>/dev/null | wc -l)
echo "$n variant files for: $archs; $((n - d)) compiled, $d the same code as a file compiled for an earlier architecture"
exit $fail
