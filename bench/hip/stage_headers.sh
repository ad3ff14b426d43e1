#!/usr/bin/env bash
# Copies HIP's headers (ROCm 5.2's libamdhip64-dev: /usr/include/hip, with nvidia_detail/) into
# bench/hip/third_party/include/hip (ignored by git), for a machine that has no libamdhip64-dev:
# run it where the package is installed, then carry bench/hip/third_party with the tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-/usr/include/hip}
[[ -f $src/nvidia_detail/nvidia_hip_runtime.h ]] || { echo "no HIP headers with nvidia_detail in $src"; exit 1; }
rm -rf "$here/third_party/include/hip"
mkdir -p "$here/third_party/include"
cp -r "$src" "$here/third_party/include/hip"
echo "staged $(find "$here/third_party/include/hip" -type f | wc -l) headers ($(du -sh "$here/third_party" | cut -f1)) from $src"
