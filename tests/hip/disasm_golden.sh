#!/usr/bin/env bash
# Golden tests on the disassembly of gfx942 code objects (clang-19 --offload-arch=gfx942 on ROCm
# 5.2's device headers and bitcode, as compile_all.sh; llvm-objdump-19), FileCheck against
# tests/hip/golden/*.check (docs/hip.md "Pipelines", "FP8 on gfx942"):
#  * gemm_f16_gfx942.check: the shipped gemm f16 plan's register-staged 2-stage LDS pipeline in
#    tg_kernel_16: the prologue's LDS stores and barrier, then in the loop the next tile's global
#    loads issued before the MFMAs, the LDS stores into the other stage after them, one barrier;
#  * gemm_fp8_*_gfx942.check: gemm_fp8 e4m3 / e5m2 on gfx942's FP8 MFMA (v_mfma_f32_*_fp8_fp8 /
#    *_bf8_bf8), the FNUZ conversion's integer operations between the LDS reads and the MFMAs,
#    the accumulator's x 1/4 and x 4 outside the k loop, no f16 MFMA and no scratch; and (from
#    llvm-readelf-19's AMDHSA notes) both kernels of each gemm_fp8 file within 288 unified
#    registers (VGPRs + AGPRs): 276 / 272 with the rescale around the loop, 340 / 414 when it
#    was around every k step (docs/hip.md "FP8 on gfx942").
# Usage: disasm_golden.sh TILEGEN KERNELS_DIR GOLDEN_DIR WORK_DIR
# Exit 77 (ctest SKIP) without clang++-19, llvm-objdump-19, llvm-as/dis-19, FileCheck or the
# ROCm bitcode.
set -uo pipefail
tilegen=$1 kernels=$2 golden=$3 work=$4
clang19=${CLANG19:-$(command -v clang++-19 || true)}
objdump=$(command -v llvm-objdump-19 || true)
readelf=$(command -v llvm-readelf-19 || true)
llvm_as=$(command -v llvm-as-19 || true)
llvm_dis=$(command -v llvm-dis-19 || true)
filecheck=${FILECHECK:-$(command -v FileCheck-19 || command -v FileCheck || command -v FileCheck-14 || true)}
bitcode=${ROCM_BITCODE:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
for tool in "$clang19" "$objdump" "$readelf" "$llvm_as" "$llvm_dis" "$filecheck"; do
  if [[ -z $tool || ! -x $tool ]]; then
    echo "SKIP: needs clang++-19, llvm-objdump-19, llvm-readelf-19, llvm-as-19, llvm-dis-19 and FileCheck"
    exit 77
  fi
done
if [[ ! -f $bitcode/ocml.bc || ! -f $bitcode/oclc_isa_version_940.bc ]]; then
  echo "SKIP: no ROCm device bitcode in $bitcode (rocm-device-libs; set ROCM_BITCODE)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/bitcode"
for f in "$bitcode"/*.bc; do ln -s "$f" "$work/bitcode/"; done
"$llvm_dis" "$bitcode/oclc_isa_version_940.bc" -o - | sed "s/i32 9400,/i32 9402,/" |
  "$llvm_as" -o "$work/bitcode/oclc_isa_version_942.bc" || exit 1
"$tilegen" generate --lib g --targets gfx942 --out "$work" "$kernels/gemm.yaml" "$kernels/gemm_fp8.yaml" \
  > "$work/generate.log" 2>&1 || { cat "$work/generate.log"; exit 1; }
fail=0
for pair in gemm_f16_gfx942:g__gemm__f16__gfx942 gemm_fp8_e4m3_gfx942:g__gemm_fp8__e4m3__gfx942 \
            gemm_fp8_e5m2_gfx942:g__gemm_fp8__e5m2__gfx942; do
  check=${pair%%:*} src=$work/${pair##*:}.hip
  "$clang19" -x hip --offload-arch=gfx942 --cuda-device-only --no-gpu-bundle-output -O3 -std=c++17 \
    --rocm-device-lib-path="$work/bitcode" -c "$src" -o "$src.co" > "$src.log" 2>&1 ||
    { echo "FAIL: $check: compile"; cat "$src.log"; fail=1; continue; }
  if "$objdump" -d "$src.co" > "$src.s" && "$filecheck" "$golden/$check.check" < "$src.s"; then
    echo "PASS: $check"
  else
    echo "FAIL: $check ($src.s)"
    fail=1
  fi
  if [[ $check == gemm_fp8_* ]]; then
    regs=$("$readelf" --notes "$src.co" | awk '/\.name:/ {n = $NF} /\.agpr_count:/ {a = $NF}
      /\.vgpr_count:/ {v = $NF} /\.vgpr_spill_count:/ {print n, v, a}')
    [[ $(echo "$regs" | wc -l) == 2 ]] || { echo "FAIL: $check: kernels in the notes: $regs"; fail=1; }
    while read -r kname unified agpr; do
      if [[ $unified -le 288 ]]; then
        echo "PASS: $check $kname: $unified unified registers ($agpr AGPRs) <= 288"
      else
        echo "FAIL: $check $kname: $unified unified registers ($agpr AGPRs) > 288"
        fail=1
      fi
    done <<< "$regs"
  fi
done
exit $fail
