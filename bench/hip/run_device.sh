#!/usr/bin/env bash
# The HIP sources of every shipped kernel on an NVIDIA GPU through HIP's NVIDIA platform
# (docs/hip.md "HIP on NVIDIA"): the portable variants (`tilegen generate --targets hip,c`)
# are built with nvcc on HIP's nvidia_detail headers (ROCm 5.2's libamdhip64-dev), linked with
# the generated dispatch code, the C variants and the HIP runtime layer (runtime/src/hip.c built
# for the NVIDIA platform), and bench/hip/hip_check.cpp runs every kernel x type on ragged and
# misaligned shapes against the float64 references of tests/kernels, then under
# compute-sanitizer memcheck and racecheck.
#
#   bench/hip/run_device.sh [--dry-run] [--hip-include DIR] [--arch SM] [--work DIR]
#
#   --hip-include DIR  the directory holding hip/hip_runtime.h (default: bench/hip/third_party/
#                      include, which bench/hip/stage_headers.sh fills from /usr/include/hip on a
#                      machine with libamdhip64-dev, else /usr/include if it has hip/)
#   --arch SM          the GPU's compute capability as nvcc writes it (default 90: H100/H200)
#   --dry-run          build everything, run nothing (a machine with nvcc and no GPU)
#   --work DIR         build directory (default: bench/hip/build)
# TILEGEN=path uses that tilegen; otherwise one is built here (cmake, Release, no tests).
# Logs and a summary (summary.txt) go to the work directory; with $OUT set (the device machine),
# they are copied there on exit (the build tree itself stays out of $OUT: it is large). Exit 0
# only if everything built and every check passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dry=0 arch=90 hip_include="" work=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --dry-run) dry=1 ;;
    --hip-include) hip_include=$2; shift ;;
    --arch) arch=$2; shift ;;
    --work) work=$2; shift ;;
    *) echo "usage: $0 [--dry-run] [--hip-include DIR] [--arch SM] [--work DIR]"; exit 2 ;;
  esac
  shift
done
if [[ -z $hip_include ]]; then
  if [[ -f $here/third_party/include/hip/hip_runtime.h ]]; then hip_include=$here/third_party/include
  elif [[ -f /usr/include/hip/hip_runtime.h ]]; then hip_include=/usr/include
  else
    echo "run_device.sh: no HIP headers: pass --hip-include DIR, or run bench/hip/stage_headers.sh"
    echo "on a machine with libamdhip64-dev and carry bench/hip/third_party"
    exit 2
  fi
fi
[[ -f $hip_include/hip/nvidia_detail/nvidia_hip_runtime.h ]] ||
  { echo "run_device.sh: $hip_include/hip has no nvidia_detail headers"; exit 2; }
work=${work:-$here/build}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [[ -n ${OUT:-} ]]; then
  trap 'mkdir -p "$OUT/hip-nvidia"; cp "$work"/*.log "$work"/summary.txt "$OUT/hip-nvidia/" 2>/dev/null; for f in "$work"/gen/*.nvcc.log; do [ -f "$f" ] && grep -q FAILED "$f" && cp "$f" "$OUT/hip-nvidia/"; done' EXIT
fi
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuda_home=$(cd "$(dirname "$nvcc")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 4)
log=$work/summary.txt
: > "$log"
say() { echo "$*" | tee -a "$log"; }
say "run_device.sh: HIP headers $hip_include, nvcc $("$nvcc" --version | tail -1), sm_$arch, work $work"

# 1. tilegen
tilegen=${TILEGEN:-}
if [[ -z $tilegen ]]; then
  cmake -S "$root" -B "$work/tilegen-build" -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=OFF \
    > "$work/tilegen-build.log" 2>&1 &&
    cmake --build "$work/tilegen-build" --target tilegen -j "$jobs" >> "$work/tilegen-build.log" 2>&1 ||
    { say "FAIL: building tilegen (tilegen-build.log)"; tail -20 "$work/tilegen-build.log"; exit 1; }
  tilegen=$work/tilegen-build/generator/tools/tilegen
fi

# 2. sources: the portable HIP variants and the C ones, one dispatch library
gen=$work/gen
rm -rf "$gen"
"$tilegen" generate --lib tgh --targets hip,c --out "$gen" "$root"/kernels/*.yaml > "$work/generate.log" 2>&1 ||
  { say "FAIL: tilegen generate"; cat "$work/generate.log"; exit 1; }
say "generated: $(ls "$gen"/*.hip | wc -l) .hip, $(ls "$gen"/*.c | wc -l) .c files"

# 3. device passes: nvcc on HIP's nvidia_detail headers, one fatbin (SASS + PTX) per variant
dev=(-x cu -std=c++17 -O3 -D__HIP_PLATFORM_NVIDIA__ -include "$here/nvidia_compat.h"
     -I"$hip_include" -Werror all-warnings -Xptxas -v --fatbin
     "-gencode=arch=compute_$arch,code=[sm_$arch,compute_$arch]")
ls "$gen"/*.hip | xargs -P "$jobs" -n 1 sh -c \
  "'$nvcc' $(printf "'%s' " "${dev[@]}") \"\$0\" -o \"\$0.fatbin\" > \"\$0.nvcc.log\" 2>&1 || echo FAILED >> \"\$0.nvcc.log\""
fail=0 nspill=0
for f in "$gen"/*.hip; do
  if grep -q FAILED "$f.nvcc.log"; then
    say "FAIL: nvcc $(basename "$f")"; grep -m5 -i "error\|warning" "$f.nvcc.log" | tee -a "$log"; fail=1
  elif grep -q "[1-9][0-9]* bytes spill" "$f.nvcc.log"; then
    nspill=$((nspill + 1)); say "spills: $(basename "$f"): $(grep -o '[0-9]* bytes spill stores' "$f.nvcc.log" | sort -u | tr '\n' ' ')"
  fi
done
say "device passes: $(ls "$gen"/*.fatbin 2>/dev/null | wc -l) fatbins, $nspill with spills"

# 4. host passes: each variant's code object embedded (.incbin) and its launch function built
#    by the C++ compiler with no HIP header
for f in "$gen"/*.hip; do
  id=$(basename "$f" .hip | tr -c 'A-Za-z0-9_\n' '_')
  cat > "$f.images.h" <<EOF
/* the code object of $(basename "$f") for HIP's NVIDIA platform (bench/hip/run_device.sh) */
__asm__(".pushsection .rodata\\n.balign 64\\n.globl tgimg_${id}_b\\n.hidden tgimg_${id}_b\\n"
        "tgimg_${id}_b:\\n.incbin \\"$f.fatbin\\"\\n.globl tgimg_${id}_e\\n.hidden tgimg_${id}_e\\n"
        "tgimg_${id}_e:\\n.byte 0\\n.popsection\\n");
extern "C" const unsigned char tgimg_${id}_b[], tgimg_${id}_e[];
static const tg_hip_image tg_hip_images[] = {{"nvidia", tgimg_${id}_b, tgimg_${id}_e}};
EOF
done
cc_host() { "$@" > "$work/host.log.$$" 2>&1 || { cat "$work/host.log.$$" >> "$work/host.log"; echo FAILED >> "$work/host.log"; }; }
: > "$work/host.log"
ls "$gen"/*.hip | xargs -P "$jobs" -n 1 sh -c \
  "g++ -x c++ -std=c++17 -O2 -Wall -Werror -I'$root/runtime/include' -DTG_HIP_IMAGES='\"'\"\$0.images.h\"'\"' -c \"\$0\" -o \"\$0.host.o\" >> '$work/host.log' 2>&1 || echo \"FAILED \$0\" >> '$work/host.log'"
ls "$gen"/*.c | xargs -P "$jobs" -n 1 sh -c \
  "gcc -std=c11 -O2 -fopenmp -fno-trapping-math -I'$root/runtime/include' -I'$gen' -c \"\$0\" -o \"\$0.o\" >> '$work/host.log' 2>&1 || echo \"FAILED \$0\" >> '$work/host.log'"
rt=()
for s in status cpu launch select check scratch; do
  gcc -std=c11 -O2 -I"$root/runtime/include" -c "$root/runtime/src/$s.c" -o "$work/rt_$s.o" >> "$work/host.log" 2>&1 || echo "FAILED $s.c" >> "$work/host.log"
  rt+=("$work/rt_$s.o")
done
gcc -std=c11 -O2 -Wall -Wextra -DTILEGEN_HIP_PLATFORM_NVIDIA -I"$root/runtime/include" -I"$cuda_home/include" \
  -c "$root/runtime/src/hip.c" -o "$work/rt_hip_nvidia.o" >> "$work/host.log" 2>&1 || echo "FAILED hip.c" >> "$work/host.log"
g++ -std=c++17 -O2 -I"$gen" -I"$root/tests/kernels" -I"$root/runtime/include" -I"$cuda_home/include" \
  "$here/hip_check.cpp" "$root/tests/kernels/Numeric.cpp" "$root/tests/kernels/Reference.cpp" \
  "$gen"/*.hip.host.o "$gen"/*.c.o "${rt[@]}" "$work/rt_hip_nvidia.o" \
  -L"$cuda_home/lib64" -lcudart_static -fopenmp -ldl -lpthread -lrt -lm -o "$work/tgh_check" >> "$work/host.log" 2>&1 ||
  echo "FAILED link" >> "$work/host.log"
if grep -q FAILED "$work/host.log"; then
  say "FAIL: host build"; grep -B5 FAILED "$work/host.log" | head -40 | tee -a "$log"; exit 1
fi
say "built $work/tgh_check ($(ls "$gen"/*.hip.host.o | wc -l) HIP variants, $(ls "$gen"/*.c.o | wc -l) C files)"
nm -u "$work/tgh_check" | grep -qi amdhip && { say "FAIL: tgh_check links libamdhip64"; fail=1; }
# 5. runs
run() { # name, command...
  local name=$1; shift
  "$@" > "$work/$name.log" 2>&1
  local rc=$?
  say "$name: rc $rc; $(grep -c ' ok ' "$work/$name.log") ok lines, $(grep -c 'FAIL' "$work/$name.log") FAIL lines; $(grep -E '^tgh_check:|ERROR SUMMARY|RACECHECK SUMMARY' "$work/$name.log" | tr '\n' ' ')"
  [[ $rc == 0 ]] || fail=1
}
# the harness against the library's own C variants (host memory, device -1): its shapes,
# references and tolerances, with no GPU
run check_cpu "$work/tgh_check" --cpu
if [[ $dry == 1 ]]; then
  say "dry run: no GPU run; run_device.sh: $([[ $fail == 0 ]] && echo 'PASS (build + CPU harness)' || echo FAIL)"
  exit $fail
fi
run check "$work/tgh_check"
sanitizer=$(command -v compute-sanitizer || echo "$cuda_home/bin/compute-sanitizer")
if [[ -x $sanitizer ]]; then
  run memcheck "$sanitizer" --tool memcheck --error-exitcode 3 "$work/tgh_check" --quick
  run racecheck "$sanitizer" --tool racecheck --error-exitcode 3 "$work/tgh_check" --quick
else
  say "no compute-sanitizer: memcheck and racecheck not run"; fail=1
fi
say "run_device.sh: $([[ $fail == 0 ]] && echo PASS || echo FAIL)"
exit $fail
