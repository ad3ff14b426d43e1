# Incremental builds of an add_tile_kernels() project (installed package, Ninja):
#  1. after a full build, a second build has nothing to do;
#  2. touching a spec re-runs generation, but the unchanged outputs keep their mtime and
#     nothing is recompiled; afterwards the build is a no-op again;
#  3. a spec edit that changes one target's variants recompiles those and nothing else.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir noop_build)
cp -r "$TILEGEN_SRC/tests/cmake/project" "$d/src"
cp "$TILEGEN_SRC/kernels/gemm.yaml" "$d/src/gemm.yaml"
"$CMAKE" -S "$d/src" -B "$d/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
"$NINJA" -C "$d/build" >/dev/null
"$d/build/noop_main"
gen="$d/build/noop_tilegen"

# 1. Nothing to do, and nothing runs.
"$NINJA" -C "$d/build" -n | tee "$d/n1.log" | grep -q "no work to do" ||
  { cat "$d/n1.log"; fail "second build is not a no-op"; }
"$NINJA" -C "$d/build" | grep -q "no work to do" || fail "second real build did something"

# 2. Touch the spec: generation re-runs (after a reconfigure: the file list may depend on the
#    spec), writes nothing, compiles nothing.
before=$(snapshot "$gen")
sleep 1.1 # mtime granularity of some file systems
touch "$d/src/gemm.yaml"
"$NINJA" -C "$d/build" -d explain > "$d/touch.log" 2>&1
grep -q "tilegen: generating noop" "$d/touch.log" || { cat "$d/touch.log"; fail "touching the spec did not regenerate"; }
if grep -q "Building C object" "$d/touch.log"; then
  cat "$d/touch.log"
  fail "regenerating identical sources recompiled something"
fi
after=$(snapshot "$gen")
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after"); fail "identical outputs were rewritten"; }
"$NINJA" -C "$d/build" -n | grep -q "no work to do" || fail "build after regeneration is not a no-op"

# 3. A real change that concerns one target (its own tile candidates for c_avx2) recompiles
#    the c_avx2 variants and leaves the c variants alone.
#    (Same line count: generated comments cite spec lines, so shifting lines changes every file.)
#    The c_avx2 entry replaces the first comment line of the schedule's `targets:` block.
awk '/^  targets:$/ { t = 1 } t && !done && /^    #/ { print "    c_avx2: {BM: [64], BN: [64], BK: [64]}"; done = 1; next } { print }' \
  "$d/src/gemm.yaml" > "$d/gemm.edited" && mv "$d/gemm.edited" "$d/src/gemm.yaml"
grep -q 'c_avx2: {BM: \[64\]' "$d/src/gemm.yaml" || fail "test setup: spec edit did not apply"
"$NINJA" -C "$d/build" > "$d/edit.log" 2>&1 || { cat "$d/edit.log"; fail "build after spec edit"; }
grep -q "noop__gemm__f32__c_avx2.c.o" "$d/edit.log" || { cat "$d/edit.log"; fail "changed variant not recompiled"; }
if grep -q "noop__gemm__f32__c.c.o" "$d/edit.log"; then
  cat "$d/edit.log"
  fail "unchanged c variant was recompiled"
fi
"$d/build/noop_main"

# 4. TUNING_DB: an entry for gemm f32 on c takes the rule's second configuration; the file is a
#    build dependency, so editing it (the third configuration) regenerates the library.
list=$("$TILEGEN" tune --list --target c --instance f32 "$d/src/gemm.yaml")
hash=$(echo "$list" | sed -n 's/.*spec_hash //p')
second=$(echo "$list" | sed -n 's/^  2\. //p')
third=$(echo "$list" | sed -n 's/^  3\. //p')
[ -n "$hash" ] && [ -n "$second" ] && [ -n "$third" ] || { echo "$list"; fail "test setup: tune --list"; }
write_db() { # a configuration "BM=.. BN=.. BK=.." -> db.json
  local config=$(echo "$1" | sed 's/\([A-Za-z_]*\)=\([0-9]*\)/"\1": \2/g; s/ "/, "/g')
  printf '{"format": "tilegen-tuning-db", "version": 1, "entries": [{"kernel": "gemm", "instance": "f32", "target": "c", "class": "large", "spec_hash": "%s", "config": {%s}}]}\n' \
    "$hash" "$config" > "$d/db.json"
}
write_db "$second"
"$CMAKE" "$d/build" -DNOOP_TUNING_DB="$d/db.json" >/dev/null
"$NINJA" -C "$d/build" > "$d/db.log" 2>&1 || { cat "$d/db.log"; fail "build with TUNING_DB"; }
grep -q "schedule: $second: " "$gen/noop__gemm__f32__c.c" || fail "TUNING_DB entry ($second) not taken"
grep -q "tuning database" "$gen/noop__gemm__f32__c.c" || fail "no tuning database note"
sleep 1.1
write_db "$third"
"$NINJA" -C "$d/build" > "$d/db2.log" 2>&1 || { cat "$d/db2.log"; fail "build after editing the TUNING_DB"; }
grep -q "tilegen: generating noop" "$d/db2.log" || { cat "$d/db2.log"; fail "editing the TUNING_DB did not regenerate"; }
grep -q "schedule: $third: " "$gen/noop__gemm__f32__c.c" || fail "edited TUNING_DB entry ($third) not taken"
"$d/build/noop_main"
echo "no-op build OK"
