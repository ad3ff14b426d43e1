#!/usr/bin/env bash
# tests/wgsl driver (registered with ctest by CMakeLists.txt).
#   run_wgsl_test.sh setup    <src root> <work dir> <tilegen>   npm ci (pinned) + generate the library
#   run_wgsl_test.sh validate <src root> <work dir>             Tint validation of every variant
#   run_wgsl_test.sh numeric  <src root> <work dir> <runner> <kernel|api>   Dawn on SwiftShader vs C
#   run_wgsl_test.sh script   <src root> <work dir> <name>.mjs  a test with its own reference
#                                                               (grouped_gemm.mjs, mla_decode.mjs), SwiftShader
#   run_wgsl_test.sh arith    <src root> <work dir>             the module's integer helpers vs BigInt
#   run_wgsl_test.sh chromium <src root> <work dir>             headless Chromium page test
#   run_wgsl_test.sh limit    <src root> <work dir> <tilegen>   over_limit.yaml is refused (exit 1)
#   run_wgsl_test.sh types    <src root> <work dir>             tsc --strict over types_check.ts
#   run_wgsl_test.sh outputs  <src root> <work dir> <tilegen>   `tilegen outputs` names exactly
#                                                               the generated files; a second
#                                                               generation is byte-identical
# Exit 0: pass; 1: fail; 77: skipped, with the reason (what to install) on stdout.
set -u
mode=$1
src=$2
work=$3
here="$src/tests/wgsl"
npm_dir="$work/npm"
gen="$work/gen"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node/npm not found; the WGSL tests need them (bash scripts/install-deps.sh)"
  exit 77
fi
# SwiftShader's Vulkan ICD ships with Debian's chromium package; the Vulkan loader is libvulkan1.
icd="${TGW_VK_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}"
need_swiftshader() {
  if [ ! -f "$icd" ]; then
    echo "SKIP: no SwiftShader Vulkan ICD at $icd (apt install chromium, or set TGW_VK_ICD)"
    exit 77
  fi
  if ! compgen -G "/usr/lib/*/libvulkan.so.1" >/dev/null && ! compgen -G "/usr/lib*/libvulkan.so.1" >/dev/null &&
     ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libvulkan\.so\.1'; then
    echo "SKIP: the Vulkan loader libvulkan.so.1 is missing (apt install libvulkan1)"
    exit 77
  fi
}

case "$mode" in
setup)
  tilegen=$4
  mkdir -p "$npm_dir"
  if ! cmp -s "$here/package-lock.json" "$npm_dir/package-lock.json" || [ ! -d "$npm_dir/node_modules/webgpu" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$npm_dir/" || exit 1
    (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error) || {
      echo "FAIL: npm ci in $npm_dir failed (is the npm registry reachable?)"
      exit 1
    }
  fi
  cp "$here"/*.mjs "$here"/types_check.ts "$here"/e2e/* "$npm_dir/" || exit 1
  rm -rf "$gen"
  (cd "$src" && "$tilegen" generate --lib tgw --targets wgsl,wgsl_f16,wgsl_subgroups,wgsl_f16_subgroups \
     --out "$gen" kernels/*.yaml tests/wgsl/fp8_convert.yaml tests/wgsl/int_div.yaml \
     tests/lit/emit/Inputs/bitwise.yaml tests/lit/emit/Inputs/unsigned32.yaml \
     tests/lit/emit/Inputs/packed8.yaml) || { echo "FAIL: tilegen generate"; exit 1; }
  echo "generated $(ls "$gen" | grep -c '\.wgsl$') WGSL variants and $(cd "$gen" && ls tgw.js tgw.d.ts tgw.wgsl.json | tr '\n' ' ')"
  ;;
validate)
  node "$npm_dir/validate.mjs" "$gen"
  ;;
arith)
  node "$here/arith.mjs" "$gen"
  ;;
numeric)
  runner=$4
  need_swiftshader
  VK_ICD_FILENAMES="$icd" node "$npm_dir/numeric.mjs" "$gen" "$runner" "$work/scratch-$5" "$5"
  ;;
script)
  need_swiftshader
  VK_ICD_FILENAMES="$icd" node "$npm_dir/$4" "$gen"
  ;;
chromium)
  chromium_bin="${TGW_CHROMIUM:-$(command -v chromium || true)}"
  if [ -z "$chromium_bin" ]; then
    echo "SKIP: chromium not found (apt install chromium)"
    exit 77
  fi
  node "$npm_dir/e2e.mjs" "$gen" "$chromium_bin" "$work/chromium-profile"
  ;;
limit)
  out="$work/limit-out"
  rm -rf "$out"
  msg=$(cd "$src" && "$4" generate --lib ol --targets c,wgsl --out "$out" tests/wgsl/over_limit.yaml 2>&1)
  rc=$?
  echo "$msg"
  [ $rc -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
  [ ! -e "$out" ] || { echo "FAIL: a refused run wrote $out"; exit 1; }
  echo "$msg" | grep -q "^tests/wgsl/over_limit.yaml:3:9: error: kernel 'big' needs 32768 B of workgroup memory (t=32768), more than the 16384 B of target 'wgsl'" ||
    { echo "FAIL: not the expected message"; exit 1; }
  ;;
types)
  rm -rf "$npm_dir/gen" && cp -r "$gen" "$npm_dir/gen" || exit 1
  (cd "$npm_dir" && ./node_modules/.bin/tsc --noEmit --strict --target es2022 --module es2022 \
     --moduleResolution bundler --types @webgpu/types types_check.ts) && echo "tgw.d.ts type-checks (tsc --strict)"
  ;;
outputs)
  tilegen=$4
  targets=wgsl,wgsl_f16,wgsl_subgroups,wgsl_f16_subgroups
  a="$work/outputs-a"
  b="$work/outputs-b"
  rm -rf "$a" "$b"
  (cd "$src" && "$tilegen" generate --lib tgw --targets $targets --out "$a" kernels/*.yaml &&
     "$tilegen" generate --lib tgw --targets $targets --out "$b" kernels/*.yaml) || exit 1
  listed=$(cd "$src" && "$tilegen" outputs --lib tgw --targets $targets kernels/*.yaml | sort) || exit 1
  actual=$(ls "$a" | sort)
  if [ "$listed" != "$actual" ]; then
    echo "FAIL: tilegen outputs and the generated folder differ:"
    diff <(echo "$listed") <(echo "$actual")
    exit 1
  fi
  diff -r "$a" "$b" >/dev/null || { echo "FAIL: a second generation differs"; diff -r "$a" "$b" | head; exit 1; }
  echo "$(echo "$listed" | wc -l) files: listed by tilegen outputs, generated, and identical when generated again"
  ;;
*)
  echo "usage: run_wgsl_test.sh setup|validate|numeric|chromium <src root> <work dir> ..."
  exit 2
  ;;
esac
