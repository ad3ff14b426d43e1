#!/usr/bin/env bash
# device: tune the unpinned specs on sm_90a with the pinned choices as baselines
export LD_LIBRARY_PATH=$PWD/build-exp/tune1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; which cc nvcc; nproc
timeout ${BUDGET:-540} bash build-exp/tune1/jobs.sh
python3 build-exp/tune1/summary.py $OUT/tune1 > $OUT/tune1/summary.txt
grep -h "tilegen tune:" $OUT/tune1/*.txt > $OUT/tune1/times.txt
(cd $OUT && tar czf tune1.tgz tune1 && rm -rf tune1)
tar xzf $OUT/tune1.tgz -O tune1/summary.txt tune1/times.txt
