#!/usr/bin/env bash
# bench/metal/run.sh METAL_CPP_DIR [ITERS]: builds and runs bench_metal on macOS (never run;
# docs/metal.md). Report the printed table with the Mac model and macOS version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ "$(uname)" = Darwin ] || { echo "bench/metal needs macOS" >&2; exit 1; }
cpp=${1:?usage: run.sh METAL_CPP_DIR [ITERS]}
build=${BUILD:-$here/../../build-bench-metal}
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_METAL_CPP_DIR="$cpp"
ninja -C "$build" bench_metal
sysctl -n machdep.cpu.brand_string; sw_vers -productVersion
"$build/bench_metal" "${2:-20}"
