#!/usr/bin/env bash
# Type check of generated Metal sources without Apple's compiler (docs/metal.md): clang in C++
# mode against the declaration shim cmake/metal/metal_stdlib.
#   typecheck.sh check  CLANGXX SHIM_DIR GEN_DIR      every GEN_DIR/*.metal must compile
#   typecheck.sh plant  CLANGXX SHIM_DIR FILE WORK    FILE must compile, and each planted type
#                                                     error in a copy of it must be rejected
set -u
mode=$1 clang=$2 shim=$3
flags=(-x c++ -std=c++20 -fms-extensions -fsyntax-only -nostdinc -nostdinc++ -isystem "$shim"
       -Wno-unknown-attributes -Werror)

case $mode in
check)
  gen=$4 n=0 bad=0
  for f in "$gen"/*.metal; do
    n=$((n + 1))
    if ! out=$("$clang" "${flags[@]}" "$f" 2>&1); then
      bad=$((bad + 1))
      echo "FAIL: $f"
      echo "$out" | head -20
    fi
  done
  echo "metal.typecheck: $((n - bad)) of $n variants type-check against $shim/metal_stdlib"
  [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
  ;;
plant)
  file=$4 work=$5
  mkdir -p "$work"
  if ! "$clang" "${flags[@]}" "$file"; then
    echo "FAIL: the unmodified $file does not type-check"
    exit 1
  fi
  # name | sed expression | what MSL's compiler would say
  plants=(
    "implicit_bfloat|0,/= float(A_s\[/s//= (A_s[/|a bfloat read into a float without a conversion"
    "address_space|s/^  threadgroup bfloat\* A_s = (threadgroup bfloat\*)/  device bfloat* A_s = (threadgroup bfloat*)/|a threadgroup pointer stored into a device pointer"
    "device_to_thread|/^  const uint tg_tid = /a\\  thread const bfloat* tg_planted = A; (void)tg_planted;|a device pointer stored into a thread pointer"
    "unknown_function|0,/simdgroup_multiply_accumulate(/s//simdgroup_multiply_accumulat(/|a misspelled SIMD-group function"
    "bad_arity|0,/threadgroup_barrier(mem_flags::mem_threadgroup)/s//threadgroup_barrier()/|a barrier without its memory flags"
  )
  fails=0
  for p in "${plants[@]}"; do
    IFS='|' read -r name expr what <<< "$p"
    out="$work/$name.metal"
    sed "$expr" "$file" > "$out"
    if cmp -s "$file" "$out"; then
      echo "FAIL: planting '$name' changed nothing in $file"
      fails=$((fails + 1))
      continue
    fi
    if "$clang" "${flags[@]}" "$out" > "$work/$name.log" 2>&1; then
      echo "FAIL: planted error '$name' ($what) was accepted"
      fails=$((fails + 1))
    else
      echo "ok: planted error '$name' ($what) rejected: $(grep -m1 'error:' "$work/$name.log" | sed 's/.*error: //')"
    fi
  done
  [ "$fails" -eq 0 ]
  ;;
*)
  echo "usage: $0 check|plant ..." >&2
  exit 2
  ;;
esac
