#!/usr/bin/env bash
# Prints the two header-derived lists of generator/support/ReservedNamesData.cpp, from the
# toolchain on this machine (GCC, glibc, OpenMP, and the CUDA toolkit if nvcc is found):
#   1. header_macros(): macros without a leading '_' that GCC predefines in its GNU modes or that
#      the headers generated sources include define (C: math.h stdbool.h stddef.h stdint.h
#      string.h stdio.h omp.h, as C and C++; CUDA: cuda_runtime.h cuda_bf16.h cuda_fp16.h
#      cuda_fp8.h cuda.h math_constants.h, host and device);
#   2. c_header_identifiers(): file-scope identifiers the C headers declare (default feature
#      macros), C keywords and struct members that are no file-scope names left out.
# Names a family of ReservedNames.cpp covers (tg, tilegen, omp_/OMP_, the CUDA API prefixes,
# nv_/NV_, a leading '_' or "__") are dropped. Paste the output into ReservedNamesData.cpp after
# a toolchain upgrade; then TILEGEN_UPDATE_RESERVED_DOC=1 spec_tests --gtest_filter=ReservedNames.*
# regenerates the list in docs/spec.md.
#   scripts/reserved_names_from_headers.sh > lists.txt
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <math.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n#include <stdio.h>\n#include <omp.h>\n' > "$tmp/c.c"
{
  gcc -std=gnu17 -fopenmp -dM -E "$tmp/c.c"
  g++ -std=gnu++17 -fopenmp -dM -E -x c++ "$tmp/c.c"
} | awk '$1 == "#define" { sub(/\(.*/, "", $2); print $2 }' > "$tmp/macros.txt"
if command -v nvcc > /dev/null 2>&1; then
  printf '#include <cuda_runtime.h>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <cuda_fp8.h>\n#include <cuda.h>\n#include <math_constants.h>\n#include <stdint.h>\n' > "$tmp/cu.cu"
  for dev in "" "-D__CUDA_ARCH__=900"; do
    nvcc -E -Xcompiler -dM $dev "$tmp/cu.cu" -o - 2>/dev/null |
      awk '$1 == "#define" { sub(/\(.*/, "", $2); print $2 }' >> "$tmp/macros.txt"
  done
else
  echo "warning: nvcc not found: the CUDA headers' macros are missing from list 1" >&2
fi
gcc -std=gnu17 -fopenmp -E -P "$tmp/c.c" | sed 's/"[^"]*"//g' | grep -oE '\b[A-Za-z][A-Za-z0-9_]*\b' > "$tmp/ids.txt"
python3 - "$tmp/macros.txt" "$tmp/ids.txt" <<'PY'
import re, sys
def family(n):
    return re.match(r'(_|[tT][gG]|[tT][iI][lL][eE][gG][eE][nN]|omp_|OMP_|cuda|CUDA|CU_|CU[a-z]|cu[A-Z]|cuuint|nv_|NV_)', n) or '__' in n
keywords = set('''auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch typedef union
unsigned void volatile while'''.split())
members = {'key', 'value'}  # fields of omp_alloctrait_t
macros = sorted({n for n in open(sys.argv[1]).read().split() if not family(n)})
ids = sorted({n for n in open(sys.argv[2]).read().split()
              if not family(n) and n not in keywords and n not in members and n not in macros})
def emit(title, words):
    print('// ' + title)
    line = '     '
    for w in words:
        tok = ' "%s",' % w
        if len(line) + len(tok) > 98:
            print(line)
            line = '     '
        line += tok
    print(line)
emit('header_macros() (%d)' % len(macros), macros)
emit('c_header_identifiers() (%d)' % len(ids), ids)
PY
