#!/usr/bin/env bash
# Nsight Compute, on the device: the warp-stall breakdown (cycles per issued instruction, by
# reason), shared-memory bank conflicts, executed instructions and tensor-pipe use of one launch.
#   bash bench/cuda/micro/stalls.sh KERNEL_REGEX LAUNCHES_TO_SKIP CMD...
# e.g. stalls.sh tg_kernel 1 build-hopper/gemm_check --time 4096x4096x4096
# NCU_NAME_BASE=mangled matches KERNEL_REGEX against mangled names, which carry the variant's
# file (a sweep's cases differ only there: NCU_NAME_BASE=mangled stalls.sh 'sw3_1.*tg_kernel_ws' 0 ...)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
re=$1; skip=$2; shift 2
m=""
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle not_selected selected dispatch_stall no_instruction lg_throttle tex_throttle drain membar sleeping branch_resolving imc_miss misc; do
  m+="smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio,"
done
m+="l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum"
timeout 200 $ncu --clock-control none --kernel-name-base ${NCU_NAME_BASE:-function} -k regex:$re --launch-skip $skip --launch-count 1 --metrics $m "$@" 2>&1 | grep -E "stalled|bank|wavefronts|inst_executed|pipe_tensor|per_second|duration|local" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '{print $1, $(NF)}'
