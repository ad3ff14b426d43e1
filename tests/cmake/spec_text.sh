# Spec text and command-line text cannot leave the comments and literals of generated output
# (docs/spec.md "Spec text in generated code"). spec_text/hostile.yaml, copied to a spec path
# that is itself hostile, is generated for one output language per mode; the output is then
# compiled or parsed, and the planted payloads must be inert:
#   spec_text.sh c        C variant + dispatch (gcc -std=c11, trigraphs on, -Wall -Wextra -Werror),
#                         the header from C++, a program linked against them: the constructors
#                         planted in comments must not run, the kernel must, and a failed
#                         `require` reports the rule and the path as visible text
#   spec_text.sh cuda     the sm_80 and sm_90a .cu compile with nvcc (exit 77 without nvcc)
#   spec_text.sh js       node imports the ES module: no planted global, the expected exports, the
#                         `require` message; the .d.ts holds only the declared API outside comments
#   spec_text.sh json     the .wgsl.json manifest parses (python3, strict UTF-8) with the path
#   spec_text.sh records  `tilegen outputs --format=cmake` parsed as cmake/TileGen.cmake does
#                         (cmake -P) names exactly the files generate writes
#   spec_text.sh metal    every .metal type-checks against cmake/metal/metal_stdlib and, compiled
#                         against the simulator's metal_stdlib, holds no planted symbol; so does
#                         the launchers' C file
#   spec_text.sh wgsl     the WGSL has no code outside its comments; Tint (Dawn's Null backend)
#                         validates it and tsc --strict takes the .d.ts (NPM_DIR: tests/wgsl's
#                         pinned npm folder; exit 77 without it)
# Every generated file must also be valid UTF-8 with no control character but LF.
source "$(dirname "$0")/lib.sh"
mode=$1
here="$TILEGEN_SRC/tests/cmake/spec_text"
d=$(fresh_dir "spec_text_$mode")
cd "$d"

# The spec path: each component tries one way out of the places a path is printed in.
parts=(
  'h*'                                                                      # ends a /* */ comment,
  ' __attribute__((constructor)) static void tg_pwn_path(void) { __builtin_trap(); } '
  '*'                                                                       # and opens the next
  $'\n#error path line break\n'                                             # ends a // comment
  $'u\xe2\x80\xa8#error path U+2028 '                                       # ends WGSL's (and JS's)
  $'c\x1b[31m\x7f\xc2\x85\xff'                                              # ESC, DEL, NEL, not UTF-8
  'q"\%n ??'                                                                # C string, printf, ??/
  '` ${globalThis.TG_PWNED=1}'                                              # JS template literal
)
dir=$(IFS=/; echo "${parts[*]}")
mkdir -p "$dir"
cp "$here/hostile.yaml" "$dir/hostile.yaml"
spec="$dir/hostile.yaml"
# The same path as generated code shows it (support/TextEscape.h: visible_text).
visible='h*/ __attribute__((constructor)) static void tg_pwn_path(void) { __builtin_trap(); } /*/\n#error path line break\n/u\u2028#error path U+2028 /c\x1b[31m\x7f\u0085\xff/q"\%n ??/` ${globalThis.TG_PWNED=1}/hostile.yaml'
# The line of the rule (a block scalar: the line after `require: |`).
require_line=$(grep -n '^      alpha > 0 &&$' "$here/hostile.yaml" | cut -d: -f1)

generate() { # generate LIB TARGETS OUT
  "$TILEGEN" generate --lib "$1" --targets "$2" --out "$3" "$spec" || fail "tilegen generate --targets $2"
}

# Valid UTF-8, no control character but LF, no C1 control, line/paragraph separator or bidi
# control, in every file of a folder.
check_text() {
  python3 - "$1" <<'EOF' || fail "a generated file holds bytes spec text must not put there"
import os, re, sys
bad = re.compile('[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]')
ok = True
for name in sorted(os.listdir(sys.argv[1])):
    data = open(os.path.join(sys.argv[1], name), 'rb').read()
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        print(f'{name}: not UTF-8 ({e})'); ok = False; continue
    for m in bad.finditer(text):
        line = text.count('\n', 0, m.start()) + 1
        print(f'{name}:{line}: control character U+{ord(m.group()):04X}'); ok = False; break
sys.exit(0 if ok else 1)
EOF
}

no_payload_symbols() { # no_payload_symbols OBJECT...
  if nm "$@" | grep -i 'tg_pwn'; then
    fail "a planted function was compiled: spec text left its comment"
  fi
}

case "$mode" in
c)
  generate st c gen
  check_text gen
  cflags=(-std=c11 -O2 -fopenmp -Wall -Wextra -Werror -I gen -I "$TILEGEN_SRC/runtime/include")
  for f in gen/*.c; do
    "$CC" "${cflags[@]}" -c "$f" -o "$f.o" || fail "$f does not compile"
  done
  "$CXX" -std=c++17 -Wall -Wextra -Werror -I gen -I "$TILEGEN_SRC/runtime/include" \
    "$here/header.cpp" -o header_cpp || fail "st.h does not compile as C++"
  "$CC" "${cflags[@]}" "$here/main.c" gen/*.o "$RUNTIME_LIB" -lm -o prog || fail "link"
  no_payload_symbols gen/*.o
  reason=$(./prog) || fail "the program failed: $reason"
  expected="alpha = -1, but the kernel requires alpha > 0 && alpha < 1000 ($visible:$require_line)"
  # tg_selection.reason holds 255 bytes: a longer sentence is cut by the generator, "..." at
  # its end (else gcc -Wformat-truncation rejects the snprintf)
  [[ $reason == "$expected" || ($reason == *... && $expected == "${reason%...}"*) ]] ||
    fail "require message: got '$reason', expected '$expected' (or its start, then ...)"
  [ ${#reason} -le 255 ] || fail "require message longer than tg_selection.reason"
  # With GPU rows: the shape-class function and the class descriptions (string literals).
  generate st c,sm_80 gen_gpu
  check_text gen_gpu
  "$CC" "${cflags[@]}" -c gen_gpu/st_dispatch.c -o gen_gpu/st_dispatch.o ||
    fail "the GPU library's dispatch source does not compile"
  no_payload_symbols gen_gpu/st_dispatch.o
  grep -q '"class small (M <= 4096 && M >= 1)",' gen_gpu/st_dispatch.c ||
    fail "the class description is not the predicate on one line"
  echo "C: $(ls gen/*.c gen/*.h | wc -l) files compile (gcc -std=c11 -Wall -Wextra -Werror, header as C++), the program ran the kernel and no planted constructor"
  ;;
cuda)
  nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  if [[ ! -x $nvcc ]]; then
    echo "SKIP: no nvcc (set CUDACXX); the CUDA sources of hostile text were not compiled"
    exit 77
  fi
  generate st sm_80,sm_90a gen
  check_text gen
  for a in 80 90a; do
    f=$(ls gen/*__sm_$a.cu)
    "$nvcc" -std=c++17 -arch=sm_$a -Werror all-warnings -I "$TILEGEN_SRC/runtime/include" -c "$f" \
      -o "$f.o" || fail "$f does not compile"
    no_payload_symbols "$f.o"
  done
  echo "CUDA: the sm_80 and sm_90a variants compile with nvcc, no planted code"
  ;;
js)
  generate st wgsl gen
  check_text gen
  node "$here/check_js.mjs" gen "$visible" "$require_line" || fail "the ES module or its .d.ts"
  ;;
json)
  generate st wgsl gen
  check_text gen
  python3 - gen/st.wgsl.json "$visible" <<'EOF' || fail "the manifest"
import json, sys
with open(sys.argv[1], encoding='utf-8', errors='strict') as f:
    m = json.load(f)
fn = m['functions'][0]
assert fn['spec'] == sys.argv[2], f"spec is {fn['spec']!r}, expected {sys.argv[2]!r}"
assert fn['kernel'] == 'hostile' and fn['function'] == 'st_hostile', fn
print(f"JSON: st.wgsl.json parses (strict UTF-8); its spec path is the visible text")
EOF
  ;;
records)
  targets=c,sm_80,wgsl
  "$TILEGEN" outputs --lib st --targets $targets --format=cmake "$spec" > records ||
    fail "tilegen outputs"
  generate st $targets gen
  "$CMAKE" -DRECORDS=records -DOUT=listed -P "$here/records.cmake" || fail "records.cmake"
  ls gen | sort > written
  sort listed > listed.sorted
  diff listed.sorted written || fail "the cmake records do not name the generated files"
  echo "CMake: $(wc -l < records) records parse as TileGen.cmake splits them and name the $(wc -l < written) generated files"
  ;;
wgsl)
  generate tgw wgsl,wgsl_f16,wgsl_subgroups gen
  check_text gen
  node "$here/check_wgsl.mjs" gen || fail "WGSL code outside comments"
  if [[ -z ${NPM_DIR:-} || ! -d $NPM_DIR/node_modules/webgpu ]]; then
    echo "SKIP: no Dawn for Node (tests/wgsl's npm folder, wgsl.setup); Tint and tsc did not run"
    exit 77
  fi
  node "$NPM_DIR/validate.mjs" gen || fail "Tint rejects WGSL generated from hostile text"
  rm -rf "$NPM_DIR/spec_text_gen" && cp -r gen "$NPM_DIR/spec_text_gen"
  cp "$here/types_check.ts" "$NPM_DIR/spec_text_types.ts"
  (cd "$NPM_DIR" && ./node_modules/.bin/tsc --noEmit --strict --target es2022 --module es2022 \
     --moduleResolution bundler --types @webgpu/types spec_text_types.ts) ||
    fail "tsc --strict rejects the .d.ts generated from hostile text"
  echo "WGSL: Tint validates the variants, tsc --strict takes tgw.d.ts"
  ;;
metal)
  generate tgm metal,c gen
  check_text gen
  # Every .metal type-checks against the shim, and compiled for the CPU against the simulator's
  # metal_stdlib (as tests/metal runs them) holds no planted symbol; nor do the launchers.
  clang=$(command -v clang++ || command -v clang++-14) || fail "no clang++"
  n=0
  for f in gen/*.metal; do
    "$clang" -x c++ -std=c++20 -fms-extensions -fsyntax-only -nostdinc -nostdinc++ \
      -isystem "$TILEGEN_SRC/cmake/metal" -Wno-unknown-attributes -Werror "$f" ||
      fail "$f does not type-check against cmake/metal/metal_stdlib"
    "$clang" -x c++ -std=c++20 -c -Wno-unknown-attributes -I "$TILEGEN_SRC/tests/metal/sim" \
      "$f" -o "${f%.metal}.o" || fail "$f does not compile against the simulator's metal_stdlib"
    n=$((n + 1))
  done
  gcc -std=c11 -Wall -Wextra -Werror -c -I "$TILEGEN_SRC/runtime/include" gen/tgm_metal.c \
    -o gen/tgm_metal.o || fail "tgm_metal.c does not compile"
  no_payload_symbols gen/*.o
  echo "Metal: $n variants type-check and compile without planted code; tgm_metal.c compiles"
  ;;
*)
  fail "usage: spec_text.sh c|cuda|js|json|records|wgsl|metal"
  ;;
esac
