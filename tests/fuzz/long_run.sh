#!/usr/bin/env bash
# The fuzzers' long run (tests/fuzz/README.md): the libFuzzer target and the grammar-based
# program fuzzer side by side for SECONDS (default 1800), against a sanitized build, then one
# report of both. New findings are minimized and saved under OUT/*/findings; known open ones
# (tests/fuzz/known_findings.txt) are counted.
#
#   tests/fuzz/long_run.sh ASAN_BUILD [SECONDS] [OUT] [SEED]
#
# ASAN_BUILD is a TILEGEN_SANITIZE build folder with tilegen and tilegen_fuzz_spec built
# (docs/testing.md). Set TIMING_TILEGEN to a release tilegen to time slow runs with it, WGSL_NPM
# to tests/wgsl's npm folder to validate WGSL, JOBS for the program fuzzer's workers (default:
# half the cores, at least 1; libFuzzer takes one more).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: long_run.sh ASAN_BUILD [SECONDS] [OUT] [SEED]}" && pwd)
seconds=${2:-1800}
out=${3:-"$PWD/fuzz-long-$(date +%Y%m%d-%H%M%S)"}
seed=${4:-$(date +%s)}
jobs=${JOBS:-$(( ($(nproc) + 1) / 2 ))}
mkdir -p "$out"
echo "long run: $seconds s, seed $seed, $jobs program workers + libFuzzer; output in $out"

extra=()
[ -n "${TIMING_TILEGEN:-}" ] && extra+=(--timing-tilegen "$TIMING_TILEGEN")
[ -n "${WGSL_NPM:-}" ] && extra+=(--wgsl-npm "$WGSL_NPM")

lf_extra=()
[ -n "${TIMING_TILEGEN:-}" ] && lf_extra+=(--timing-tilegen "$TIMING_TILEGEN")
python3 "$here/run_libfuzzer.py" --fuzzer "$build/tests/fuzz/tilegen_fuzz_spec" --seed "$seed" \
  --seconds "$seconds" --work "$out/libfuzzer" "${lf_extra[@]}" > "$out/libfuzzer.log" 2>&1 &
lf=$!
python3 "$here/fuzz_programs.py" --tilegen "$build/generator/tools/tilegen" --seed "$seed" \
  --duration "$seconds" --jobs "$jobs" --out "$out/programs" "${extra[@]}" > "$out/programs.log" 2>&1 &
pg=$!
wait $lf; lf_status=$?
wait $pg; pg_status=$?

echo "== libFuzzer target (tilegen_fuzz_spec) =="
sed -n '/^run_libfuzzer: [0-9]* inputs/,$p' "$out/libfuzzer.log"
echo "== grammar-based program fuzzer (fuzz_programs.py) =="
sed -n '/^fuzz_programs: [0-9]* programs/,$p' "$out/programs.log"
echo "logs: $out/libfuzzer.log $out/programs.log"
[ $lf_status -eq 0 ] && [ $pg_status -eq 0 ]
