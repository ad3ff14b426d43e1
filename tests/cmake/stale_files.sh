# Files of the library that a new generation no longer produces are removed, but only if they
# carry tilegen's marker for that library; other files are left alone.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir stale_files)
cd "$TILEGEN_SRC"
"$TILEGEN" generate --lib st --targets c,c_avx2,wgsl --out "$d/out" kernels/gemm.yaml kernels/softmax.yaml
[ -f "$d/out/st__softmax__f32__c_avx2.c" ] || fail "setup: variant missing"
[ -f "$d/out/st.wgsl.json" ] || fail "setup: WGSL manifest missing"
echo "int mine;" > "$d/out/st__mine__x__c.c"             # user file, looks like ours
echo "/* other */" > "$d/out/other__gemm__f32__c.c"       # another library's name
"$TILEGEN" generate --lib stx --targets c --out "$d/out" kernels/gemm.yaml  # another library
touch "$d/out/.st__gemm__f32__c.c.tilegen-tmp-AbC123"    # left by an interrupted run
"$TILEGEN" generate --lib st --targets c --out "$d/out" -v kernels/gemm.yaml > "$d/log"
[ ! -e "$d/out/st__softmax__f32__c_avx2.c" ] || fail "stale variant not removed"
[ ! -e "$d/out/st__gemm__f32__c_avx2.c" ] || fail "stale target's variant not removed"
[ ! -e "$d/out/.st__gemm__f32__c.c.tilegen-tmp-AbC123" ] || fail "stale temporary not removed"
# Without the wgsl target: the WGSL variants, the ES module, its types and the manifest (whose
# marker is its JSON "generated" member, not a comment) go too.
for f in st__softmax__f32__wgsl.wgsl st.js st.d.ts st.wgsl.json; do
  [ ! -e "$d/out/$f" ] || fail "stale $f not removed"
done
[ -f "$d/out/st__gemm__f32__c.c" ] || fail "current variant removed"
[ -f "$d/out/st__mine__x__c.c" ] || fail "user file without the marker was removed"
[ -f "$d/out/other__gemm__f32__c.c" ] || fail "unrelated file removed"
[ -f "$d/out/stx__gemm__f32__c.c" ] || fail "another library's file removed"
grep -q "removed st__softmax__f32__c_avx2.c" "$d/log" || fail "removal not reported by -v"
grep -q "removed st.wgsl.json" "$d/log" || fail "manifest removal not reported by -v"
# A manifest of the library that tilegen did not write (no "generated" member) stays.
echo '{"library": "st"}' > "$d/out/st.wgsl.json"
"$TILEGEN" generate --lib st --targets c --out "$d/out" kernels/gemm.yaml
[ -f "$d/out/st.wgsl.json" ] || fail "a user's st.wgsl.json was removed"
echo "stale files OK"
