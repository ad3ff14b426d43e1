#!/usr/bin/env bash
# tests/arm/run.sh <tilegen source> <host tilegen> <work dir>: see CMakeLists.txt here.
# Exit 77 (ctest: skipped) with the reason when the cross compiler or qemu-user is missing.
set -euo pipefail
src=$1 tilegen=$2 work=$3
CMAKE=${CMAKE:-cmake}
triple=aarch64-linux-gnu
missing=()
command -v "$triple-gcc" >/dev/null || missing+=("$triple-gcc (Debian: gcc-aarch64-linux-gnu)")
command -v qemu-aarch64 >/dev/null || missing+=("qemu-aarch64 (Debian: qemu-user)")
if ((${#missing[@]})); then
  echo "arm.qemu: SKIPPED: not installed: ${missing[*]} (scripts/install-deps.sh installs them)"
  exit 77
fi
start=$(date +%s)

# One configure and one build (ninja -j2: the CI machines have 2 cores): each variant is
# compiled once; a re-run only rebuilds what changed.
gen=()
[ -n "${NINJA:-}" ] && gen=(-G Ninja "-DCMAKE_MAKE_PROGRAM=$NINJA")
"$CMAKE" -S "$src/tests/arm/project" -B "$work" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_TOOLCHAIN_FILE=$src/cmake/toolchains/aarch64-linux-gnu.cmake" \
  "-DTILEGEN_HOST_EXECUTABLE=$tilegen" "-DTILEGEN_SOURCE_DIR=$src" >"$work.configure.log" 2>&1 ||
  { cat "$work.configure.log"; exit 1; }
grep -E "add_tile_kernels\(armmix\)" "$work.configure.log" || true
"$CMAKE" --build "$work" -j 2 >"$work.build.log" 2>&1 || { tail -50 "$work.build.log"; exit 1; }
built=$(date +%s)
echo "arm.qemu: cross build $((built - start)) s ($(grep -c 'Building C object' "$work.build.log" || true) C compiles)"

# Variants per target in the default library: c, c_neon and c_sve each compiled; the x86 rows
# of armmix generated but not compiled.
for t in c c_neon c_sve; do
  n=$(ls "$work"/armk_tilegen/armk__*__"$t".c | wc -l)
  echo "arm.qemu: armk: $n $t variants"
  [ "$n" -gt 0 ] || { echo "arm.qemu: FAIL: no $t variants in the default library"; exit 1; }
done
if find "$work" -name 'armmix__*__c_avx512.c.o' | grep -q .; then
  echo "arm.qemu: FAIL: the x86 variants of armmix were compiled for aarch64"; exit 1
fi
file "$work/arm_numeric" 2>/dev/null | grep -q aarch64 || [ ! -x "$(command -v file)" ] ||
  { echo "arm.qemu: FAIL: arm_numeric is not an aarch64 executable"; exit 1; }

qemu=(qemu-aarch64 -L "/usr/$triple")
export OMP_NUM_THREADS=2
status=0
run() { # <label> <expected target> <qemu -cpu> [env...]
  local label=$1 expect=$2 cpu=$3
  shift 3
  echo "== $label: qemu-aarch64 -cpu $cpu ${*:+($*)}, expecting $expect"
  local t0=$(date +%s)
  if env "$@" "${qemu[@]}" -cpu "$cpu" "$work/arm_numeric" "$expect" >"$work.$expect.log" 2>&1; then
    grep -E "CPU features|selection:|checks," "$work.$expect.log"
  else
    status=1
    cat "$work.$expect.log"
  fi
  echo "   ($(( $(date +%s) - t0 )) s)"
}
run "SVE (256-bit)" c_sve max,sve256=on
run "SVE masked off" c_neon max,sve256=on TILEGEN_CPU_DISABLE=sve
run "Armv8.0 core" c cortex-a53
echo "arm.qemu: total $(( $(date +%s) - start )) s"
exit $status
