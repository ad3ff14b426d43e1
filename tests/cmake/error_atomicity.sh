# A generation that fails (an error in one spec) leaves the output folder exactly as it was:
# no new, changed or temporary files; into a new folder, it creates nothing.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir error_atomicity)
good=(kernels/gemm.yaml kernels/softmax.yaml)
cd "$TILEGEN_SRC"
"$TILEGEN" generate --lib at --targets c,c_avx2 --out "$d/out" "${good[@]}"
echo "/* user notes */" > "$d/out/notes.txt"
before=$(snapshot "$d/out")

# A spec with an error found late (in a body op), after other specs were fine.
sed 's/gemm: {a: A_s, b: B_s, c: acc}/gemm: {a: A_s, b: B_nope, c: acc}/' kernels/gemm.yaml > "$d/broken.yaml"
grep -q B_nope "$d/broken.yaml" || fail "test setup: broken spec not made"
set +e
"$TILEGEN" generate --lib at --targets c,c_avx2 --out "$d/out" kernels/softmax.yaml "$d/broken.yaml" 2> "$d/err.log"
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$d/err.log"; fail "expected exit 1, got $rc"; }
grep -q "broken.yaml:[0-9]*:[0-9]*: error:" "$d/err.log" || { cat "$d/err.log"; fail "no located error"; }
[ "$before" = "$(snapshot "$d/out")" ] || { diff <(echo "$before") <(snapshot "$d/out"); fail "output folder changed"; }

# An unsatisfiable schedule (found during instantiation, for one target only).
sed -E 's/- "BM \* BN >= [^"]*"/- "BM * BN >= 1024 * 1024"/' kernels/gemm.yaml > "$d/unsat.yaml"
grep -q '"BM \* BN >= 1024 \* 1024"' "$d/unsat.yaml" || fail "gemm.yaml's requirement was not found to replace"
set +e
"$TILEGEN" generate --lib at --targets c,c_avx2 --out "$d/out" kernels/softmax.yaml "$d/unsat.yaml" 2> "$d/err2.log"
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$d/err2.log"; fail "unsatisfiable schedule: expected exit 1, got $rc"; }
[ "$before" = "$(snapshot "$d/out")" ] || fail "output folder changed after an instantiation error"

# Into a folder that does not exist yet: it is not created.
set +e
"$TILEGEN" generate --lib at --targets c --out "$d/new" "$d/broken.yaml" 2>/dev/null
set -e
[ ! -e "$d/new" ] || fail "a failed generation created its output folder"
# Usage errors exit 2 and write nothing either.
set +e
"$TILEGEN" generate --lib at --targets c,sm_99 --out "$d/out" "${good[@]}" 2>/dev/null
rc=$?
set -e
[ $rc -eq 2 ] || fail "unknown target: expected exit 2, got $rc"
[ "$before" = "$(snapshot "$d/out")" ] || fail "output folder changed after a usage error"
echo "error atomicity OK"
