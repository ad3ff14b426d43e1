#!/usr/bin/env bash
# tests/wgsl names check (ctest wgsl.names): the specs of tests/lit/names/Inputs, whose names lie
# next to reserved ones (docs/spec.md, "Names and scopes"), generated for every WGSL target;
# every variant validated by Tint (validate.mjs, Dawn's Null backend) and the ES module parsed.
#   names_check.sh <src root> <work dir> <tilegen>
# Exit 0: pass; 1: fail; 77: skipped (wgsl.setup did not install Dawn for Node).
set -u
src=$1
work=$2
tilegen=$3
npm_dir="$work/npm"
gen="$work/names"
if ! command -v node >/dev/null 2>&1 || [ ! -f "$npm_dir/validate.mjs" ] || [ ! -d "$npm_dir/node_modules/webgpu" ]; then
  echo "SKIP: node or the pinned Dawn for Node is missing (wgsl.setup installs it)"
  exit 77
fi
rm -rf "$gen"
"$tilegen" generate --lib tgw --targets wgsl,wgsl_f16,wgsl_subgroups,wgsl_f16_subgroups --out "$gen" \
  "$src"/tests/lit/names/Inputs/*.yaml || { echo "FAIL: tilegen generate"; exit 1; }
cp "$gen/tgw.js" "$work/names_module.mjs" || exit 1
node --check "$work/names_module.mjs" || { echo "FAIL: the ES module does not parse"; exit 1; }
node "$npm_dir/validate.mjs" "$gen"
