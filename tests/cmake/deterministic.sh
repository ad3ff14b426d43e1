# Two generations of the same specs, into two folders and from two working directories, are
# byte-identical.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir deterministic)
specs=(kernels/gemm.yaml kernels/softmax.yaml kernels/rmsnorm.yaml)
(cd "$TILEGEN_SRC" && "$TILEGEN" generate --lib det --targets c,c_avx2,c_avx512 --out "$d/one" "${specs[@]}")
(cd "$TILEGEN_SRC" && "$TILEGEN" generate --lib det --targets c,c_avx2,c_avx512 --out "$d/two" "${specs[@]}")
diff -r "$d/one" "$d/two" || fail "generation is not deterministic"
n=$(ls "$d/one" | wc -l)
[ "$n" -eq $((2 + 9 * 3)) ] || fail "expected 29 files, got $n"
# `tilegen outputs` names exactly the files generate writes.
(cd "$TILEGEN_SRC" && "$TILEGEN" outputs --lib det --targets c,c_avx2,c_avx512 "${specs[@]}") | sort > "$d/listed"
ls "$d/one" | sort > "$d/written"
diff "$d/listed" "$d/written" || fail "tilegen outputs disagrees with generate"
# A rerun into the same folder rewrites nothing.
before=$(snapshot "$d/one")
sleep 1.1
(cd "$TILEGEN_SRC" && "$TILEGEN" generate --lib det --targets c,c_avx2,c_avx512 --out "$d/one" "${specs[@]}")
[ "$before" = "$(snapshot "$d/one")" ] || fail "rerun touched unchanged files"
# GPU and WGSL targets, every shipped kernel, three separate processes: decisions kept in maps
# keyed by pointers (layouts, panels) must not leak their order into the output (ASLR moves
# the pointers between runs).
for i in 1 2 3; do
  (cd "$TILEGEN_SRC" && "$TILEGEN" generate --lib gpu --targets sm_80,sm_90,sm_90a,wgsl \
     --out "$d/gpu$i" kernels/*.yaml) || fail "GPU generation failed"
done
diff -r "$d/gpu1" "$d/gpu2" >/dev/null && diff -r "$d/gpu1" "$d/gpu3" >/dev/null ||
  fail "GPU/WGSL generation is not deterministic"
echo "deterministic OK"
