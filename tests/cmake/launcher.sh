# CMAKE_C_COMPILER_LAUNCHER (sccache/ccache/distcc style) wraps the compiles of generated
# sources: a fake launcher logs its arguments and execs the compiler.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir launcher)
cp -r "$TILEGEN_SRC/tests/cmake/project" "$d/src"
cp "$TILEGEN_SRC/kernels/gemm.yaml" "$d/src/gemm.yaml"
cat > "$d/launcher.sh" <<LAUNCH
#!/usr/bin/env bash
echo "\$*" >> "$d/launcher.log"
exec "\$@"
LAUNCH
chmod +x "$d/launcher.sh"
"$CMAKE" -S "$d/src" -B "$d/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_C_COMPILER_LAUNCHER="$d/launcher.sh" >/dev/null
"$NINJA" -C "$d/build" >/dev/null
"$d/build/noop_main"
for f in noop_dispatch.c noop__gemm__f32__c.c noop__gemm__f32__c_avx2.c noop__gemm__bf16__c_avx2.c; do
  grep -q "/$f" "$d/launcher.log" || { cat "$d/launcher.log"; fail "launcher not used for $f"; }
done
# The ISA flags of the target and -O3 reach the variant's compile line.
grep "noop__gemm__f32__c_avx2.c" "$d/launcher.log" | grep -q -- "-O3.*-mavx2" ||
  fail "c_avx2 variant compiled without -O3 -mavx2"
if grep "noop__gemm__f32__c\.c" "$d/launcher.log" | grep -q -- "-mavx2"; then
  fail "portable c variant compiled with -mavx2"
fi
echo "launcher OK"
