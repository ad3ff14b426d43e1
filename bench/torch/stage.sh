#!/usr/bin/env bash
# Stages what run_device.sh needs from this machine into build-torch-stage/ (ignored by git;
# name it in the device call's carry list): the tilegen executable and the libyaml-cpp it
# links (the device machine has none).
#
#   bash bench/torch/stage.sh [TILEGEN]     # default: build/generator/tools/tilegen
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tilegen=${1:-$root/build/generator/tools/tilegen}
stage=$root/build-torch-stage
[[ -x $tilegen ]] || { echo "stage.sh: no tilegen at $tilegen (nice ninja -C build tilegen)" >&2; exit 1; }
rm -rf "$stage"
mkdir -p "$stage"
cp "$tilegen" "$stage/tilegen"
ldd "$tilegen" | awk '/libyaml-cpp/ {print $3}' | while read -r lib; do cp -L "$lib" "$stage/"; done
(cd "$root" && git rev-parse HEAD) > "$stage/COMMIT"
ls -la "$stage"
du -sh "$stage"
