#!/usr/bin/env bash
# Every shipped kernel's HIP variants compile with AMD's compilers, without an AMD GPU:
#  * the portable row `hip` (the family that also runs on HIP's NVIDIA platform) for gfx90a
#    with Debian's hipcc (ROCm 5.2, clang 15);
#  * gfx90a variants with hipcc --offload-arch=gfx90a, gfx942 and gfx1100 variants with
#    clang-19 (ROCm 5.2 does not know these archs) on ROCm 5.2's device headers and bitcode
#    libraries (the oclc_isa_version_942/1100 files ROCm 5.2 lacks are made from its 940 one:
#    they hold nothing but the ISA version number).
# One code object per variant file (device pass only, --no-gpu-bundle-output), compiled in
# parallel. Then, per code object (llvm-objdump-19 / llvm-readelf-19 on its AMDHSA metadata):
# no scratch (private_segment_fixed_size 0, no VGPR/SGPR spills), the file's LDS within 64 KiB,
# and the matrix instructions exactly where the plan put them: a variant whose source calls an
# MFMA/WMMA helper (its comment names the mnemonic) has that mnemonic in its disassembly, one
# without has none. Prints a table (VGPR/AGPR counts) and a summary line.
# Usage: compile_all.sh TILEGEN KERNELS_DIR WORK_DIR
# Exit 77 (ctest SKIP) when hipcc, clang-19, llvm-objdump-19 or the ROCm bitcode is missing.
set -uo pipefail
tilegen=$1 kernels=$2 work=$3
hipcc=${HIPCC:-$(command -v hipcc || true)}
clang19=${CLANG19:-$(command -v clang++-19 || true)}
objdump=$(command -v llvm-objdump-19 || true)
readelf=$(command -v llvm-readelf-19 || true)
llvm_as=$(command -v llvm-as-19 || true)
llvm_dis=$(command -v llvm-dis-19 || true)
bitcode=${ROCM_BITCODE:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
for tool in "$hipcc" "$clang19" "$objdump" "$readelf" "$llvm_as" "$llvm_dis"; do
  if [[ -z $tool || ! -x $tool ]]; then
    echo "SKIP: needs hipcc, clang++-19, llvm-objdump-19, llvm-readelf-19, llvm-as-19, llvm-dis-19"
    exit 77
  fi
done
if [[ ! -f $bitcode/ocml.bc || ! -f $bitcode/oclc_isa_version_940.bc ]]; then
  echo "SKIP: no ROCm device bitcode in $bitcode (rocm-device-libs; set ROCM_BITCODE)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/bitcode"
for f in "$bitcode"/*.bc; do ln -s "$f" "$work/bitcode/"; done
for v in 942:9402 1100:11000; do
  "$llvm_dis" "$bitcode/oclc_isa_version_940.bc" -o - | sed "s/i32 9400,/i32 ${v##*:},/" |
    "$llvm_as" -o "$work/bitcode/oclc_isa_version_${v%%:*}.bc" || exit 1
done
jobs=$(nproc 2>/dev/null || echo 2)
fail=0
: > "$work/jobs"
for t in hip gfx90a gfx942 gfx1100; do
  out="$work/$t"
  mkdir -p "$out"
  "$tilegen" generate --lib ck --targets "$t" --out "$out" "$kernels"/*.yaml > "$out/generate.log" 2>&1 ||
    { echo "FAIL: generate $t"; cat "$out/generate.log"; fail=1; continue; }
  # mla_decode: its bf16 instance only (the f16 one differs in the element type alone; CI time)
  rm -f "$out"/*__mla_decode__f16_*.hip
  case $t in
    hip | gfx90a) arch=gfx90a cc=$hipcc extra="" ;;
    *) arch=$t cc=$clang19 extra="--rocm-device-lib-path=$work/bitcode" ;;
  esac
  for f in "$out"/*.hip; do
    # a file whose code equals an earlier target's (comment lines dropped, target names masked:
    # f32 variants, which use no matrix instruction, are often the same on gfx90a and gfx942)
    # was compiled there; it is listed, not compiled again
    key=$(sed -E '/^[[:space:]]*\/\//d; s/gfx[0-9a-f]+|\bhip\b/T/g' "$f" | sha1sum | cut -c1-40)
    if grep -q "^$key " "$work/keys" 2>/dev/null; then
      echo "$(basename "$f") ($t): same code as $(grep -m1 "^$key " "$work/keys" | cut -d' ' -f2-)" >> "$work/same"
      continue
    fi
    echo "$key $t/$(basename "$f")" >> "$work/keys"
    echo "$cc -x hip --offload-arch=$arch --cuda-device-only --no-gpu-bundle-output -O3 -std=c++17 $extra -c $f -o $f.$arch.co" >> "$work/jobs"
  done
done
xargs -d '\n' -P "$jobs" -n 1 bash -c 'eval "$1" > "${1##* }.log" 2>&1 || echo FAILED >> "${1##* }.log"' _ < "$work/jobs"

printf '%-58s %-7s %5s %5s %7s %6s %s\n' variant arch vgpr agpr scratch lds result
n=0 nmx=0
for job in $(awk '{print $NF}' "$work/jobs"); do
  co=$job src=${job%.*.co} arch=${job%.co}; arch=${arch##*.}
  v=$(basename "$src" .hip)
  n=$((n + 1))
  if grep -q "FAILED\|error:" "$co.log" || [[ ! -s $co ]]; then
    printf '%-58s %-7s %5s %5s %7s %6s %s\n' "$v" "$arch" - - - - "COMPILE ERROR"
    grep -m5 "error" "$co.log"
    fail=1
    continue
  fi
  meta=$("$readelf" --notes "$co")
  vgpr=$(echo "$meta" | awk '/\.vgpr_count:/ {print $NF}' | sort -n | tail -1)
  agpr=$(echo "$meta" | awk '/\.agpr_count:/ {print $NF}' | sort -n | tail -1)
  scratch=$(echo "$meta" | awk '/\.private_segment_fixed_size:/ {s += $NF} END {print s + 0}')
  spills=$(echo "$meta" | awk '/_spill_count:/ {s += $NF} END {print s + 0}')
  lds=$(sed -n 's/^static const size_t tg_smem_bytes = \([0-9]*\);/\1/p' "$src")
  res=ok
  if [[ $scratch != 0 || $spills != 0 ]]; then res="SCRATCH ($scratch B, $spills spills)"; fail=1; fi
  if [[ -z $lds || $lds -gt 65536 ]]; then res="LDS ${lds:-?} B"; fail=1; fi
  planned=$(grep -o '^/\* v_[a-z0-9_]*' "$src" | sed 's|^/\* ||' | sort -u)
  disasm=$("$objdump" -d "$co" | grep -o 'v_\(mfma\|wmma\)_[a-z0-9_]*' | sort -u)
  if [[ "$planned" != "$disasm" ]]; then
    res="MATRIX planned [${planned//$'\n'/ }] found [${disasm//$'\n'/ }]"
    fail=1
  fi
  [[ -n $planned ]] && nmx=$((nmx + 1))
  printf '%-58s %-7s %5s %5s %7s %6s %s\n' "$v" "$arch" "${vgpr:-?}" "${agpr:-0}" "$scratch" "$lds" "$res"
done
[[ -f $work/same ]] && cat "$work/same"
echo "hip.compile_all: $n code objects ($nmx with matrix instructions), $(cat "$work/same" 2>/dev/null | wc -l) files the same code as one of them; $([[ $fail == 0 ]] && echo PASS || echo FAIL)"
exit $fail
