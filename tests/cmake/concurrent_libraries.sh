# Two libraries share one output folder and are generated at the same time (a parallel build),
# one of them killed (SIGKILL) at a random moment: the other one's files always end up complete
# (runs on one folder are serialized: neither swaps in a copy of the folder that lacks the other's
# new files), the killed one's are exactly old or exactly new, and the folder holds nothing else.
# CONCURRENT_ROUNDS (default 20) rounds; CONCURRENT_SEED makes the delays reproducible.
source "$(dirname "$0")/lib.sh"
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR
d=$(fresh_dir concurrent_libraries)
rounds=${CONCURRENT_ROUNDS:-20}
seed=${CONCURRENT_SEED:-$$}
RANDOM=$seed
cd "$TILEGEN_SRC"
mkdir "$d/specs"
cp kernels/*.yaml "$d/specs/"
# Library ca (killed) and library cb (not killed), each in two versions that differ in every
# file. Both are generated from the same specs for the same targets, so that their runs take
# as long and write at the same time.
old_args=(--targets c,c_avx2,sm_80,wgsl kernels/gemm.yaml kernels/softmax.yaml kernels/rmsnorm.yaml)
new_args=(--targets c,c_avx512,sm_90,wgsl_f16 "$d"/specs/gemm.yaml "$d"/specs/softmax.yaml "$d"/specs/rmsnorm.yaml)
ca_old=(--lib ca "${old_args[@]}")
ca_new=(--lib ca "${new_args[@]}")
cb_old=(--lib cb "${old_args[@]}")
cb_new=(--lib cb "${new_args[@]}")
out="$d/out"

for v in ca_old ca_new cb_old cb_new; do
  declare -n args=$v
  "$TILEGEN" generate --out "$d/ref_$v" "${args[@]}"
  (cd "$d/ref_$v" && ls -A | sort > "../names_$v" && md5sum $(cat "../names_$v") > "../sums_$v")
done
"$TILEGEN" generate --out "$out" "${ca_old[@]}"
"$TILEGEN" generate --out "$out" "${cb_old[@]}"
echo "/* user notes */" > "$out/notes.txt"

# in_state LIB STATE: LIB's files in the folder are exactly those of STATE.
in_state() {
  local names
  names=$(cd "$out" && ls -A | sort | grep "^$1[._]" || true)
  [ "$names" = "$(cat "$d/names_$1_$2")" ] && (cd "$out" && md5sum -c --quiet "$d/sums_$1_$2" >/dev/null 2>&1)
}
# What the folder holds besides the two libraries' files and the user's (temporaries).
unknown() { (cd "$out" && ls -A | grep -v '^c[ab][._]' | grep -vx 'notes.txt' | tr '\n' ' ' || true); }

# The write phase: from the first change in the folder or next to it until both runs ended.
now() { date +%s%N; }
listing() { { ls -A --full-time "$out" "$d" 2>/dev/null || true; } | md5sum; }
# start_both CA_ARGS_NAME CB_ARGS_NAME: starts both runs (process ids a, b) and returns once the
# first of them begins to write (or both ended).
start_both() {
  declare -n a_args=$1 b_args=$2
  local base
  base=$(listing)
  "$TILEGEN" generate --out "$out" "${a_args[@]}" 2>/dev/null &
  a=$!
  "$TILEGEN" generate --out "$out" "${b_args[@]}" &
  b=$!
  while { kill -0 "$a" || kill -0 "$b"; } 2>/dev/null && [ "$(listing)" = "$base" ]; do :; done
}
start_both ca_new cb_new
t0=$(now)
wait "$a" "$b"
write_ms=$(( ($(now) - t0) / 1000000 + 1 ))
start_both ca_old cb_old
wait "$a" "$b"

echo "seed $seed, $rounds rounds, the write phase of both runs takes ${write_ms} ms"
ca=old cb=old bad=0
for i in $(seq 1 "$rounds"); do
  [ "$ca" = old ] && ca_to=new || ca_to=old
  [ "$cb" = old ] && cb_to=new || cb_to=old
  delay_ms=$(( (RANDOM * 32768 + RANDOM) % (write_ms + 1) ))
  start_both "ca_$ca_to" "cb_$cb_to"
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 "$a" 2>/dev/null || true
  wait "$a" 2>/dev/null || true
  wait "$b" || fail "round $i: the generation of cb failed"
  problems=""
  in_state cb "$cb_to" || problems+=" cb is not complete (lost files of its run);"
  if in_state ca "$ca_to"; then
    ca=$ca_to
  elif ! in_state ca "$ca"; then
    problems+=" ca is neither old nor new;"
  fi
  extra=$(unknown)
  [ -z "$extra" ] || problems+=" $(echo $extra | wc -w) unexpected entries ($extra);"
  [ "$(cat "$out/notes.txt")" = "/* user notes */" ] || problems+=" notes.txt changed;"
  if [ -n "$problems" ]; then
    echo "round $i (ca killed ${delay_ms} ms into the write phase):$problems"
    bad=$((bad + 1))
    # Start the next round from known states.
    (cd "$out" && ls -A | grep -vx 'notes.txt' | xargs -r rm -rf --)
    cp -p "$d/ref_ca_$ca"/* "$d/ref_cb_$cb_to"/* "$out/"
  fi
  cb=$cb_to
done
echo "$bad of $rounds rounds left the folder wrong"
[ "$bad" -eq 0 ] || fail "$bad of $rounds rounds left the folder wrong"
echo "concurrent libraries OK"
