#!/bin/bash
# browser.explain: `tilegen explain` pages open in a browser. Renders the HTML of gemm on sm_80
# and sm_90a and the SVG of flash attention on sm_90a in headless Chromium (Debian's `chromium`)
# and checks each screenshot is not blank (png_variety.py: distinct colors and non-background
# pixels). Skips (exit 77) where chromium is missing.
# usage: render.sh TILEGEN SOURCE_DIR WORK_DIR
set -euo pipefail
tilegen=$1 src=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: no chromium on PATH (Debian: apt-get install chromium)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/profile"
render() { # NAME FILE: screenshot FILE into NAME.png and check it
  local name=$1 file=$2
  timeout 180 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
    --disable-background-networking --disable-extensions --hide-scrollbars \
    --user-data-dir="$work/profile" --window-size=1600,1200 \
    --screenshot="$work/$name.png" "file://$file" > "$work/$name.log" 2>&1 || {
    cat "$work/$name.log"; echo "FAIL: chromium could not render $file"; exit 1; }
  [ -s "$work/$name.png" ] || { cat "$work/$name.log"; echo "FAIL: no screenshot of $file"; exit 1; }
  python3 "$src/tests/browser/png_variety.py" "$work/$name.png" 24 0.05
}
"$tilegen" explain --target sm_80 --instance bf16 --out "$work/gemm_sm80.html" "$src/kernels/gemm.yaml"
render gemm_sm80 "$work/gemm_sm80.html"
"$tilegen" explain --target sm_90a --instance bf16 --out "$work/gemm_sm90a.html" "$src/kernels/gemm.yaml"
render gemm_sm90a "$work/gemm_sm90a.html"
"$tilegen" explain --target sm_90a --instance bf16_causal0_D128 --format svg --out "$work/attn_sm90a.svg" \
  "$src/kernels/flash_attention_fwd.yaml"
render attn_sm90a "$work/attn_sm90a.svg"
# A blank page must fail the check (the check itself can fail).
printf '<!DOCTYPE html><html><body style="background:#fff"></body></html>\n' > "$work/blank.html"
render_blank_fails() {
  timeout 180 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
    --user-data-dir="$work/profile" --window-size=800,600 \
    --screenshot="$work/blank.png" "file://$work/blank.html" > "$work/blank.log" 2>&1
  if python3 "$src/tests/browser/png_variety.py" "$work/blank.png" 24 0.05; then
    echo "FAIL: a blank page passed the check"; exit 1
  fi
}
render_blank_fails
echo "OK"
