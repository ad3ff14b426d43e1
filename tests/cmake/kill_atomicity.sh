# A generation killed with SIGKILL at any moment leaves, in the output folder, the library's
# files exactly as before the run or exactly as after it (byte for byte, and the same set of
# names), no temporary file, and every other file untouched; the next run cleans up what the
# killed one left next to the folder.
#
# Two generations of the same library `kk` that differ in every file and in the set of files:
# "old" is kernels/*.yaml for one set of targets, "new" the same specs copied to another folder
# (generated comments cite the spec path) for another set. Each run goes from the folder's
# present state to the other one and is killed after a random delay, spread over the length of
# an unkilled run (and a bit past it, so that some runs finish). KILL_RUNS (default 66) runs;
# KILL_SEED makes the delays reproducible.
source "$(dirname "$0")/lib.sh"
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR
d=$(fresh_dir kill_atomicity)
runs=${KILL_RUNS:-66}
seed=${KILL_SEED:-$$}
RANDOM=$seed
cd "$TILEGEN_SRC"
mkdir "$d/specs"
cp kernels/*.yaml "$d/specs/"
old_args=(--targets c,c_avx2,sm_80,wgsl kernels/*.yaml)
new_args=(--targets c,c_avx512,sm_90,wgsl_f16 "$d"/specs/*.yaml)
out="$d/out"

now() { date +%s%N; }
t0=$(now)
"$TILEGEN" generate --lib kk --out "$d/ref_old" "${old_args[@]}"
t1=$(now)
"$TILEGEN" generate --lib kk --out "$d/ref_new" "${new_args[@]}"
t2=$(now)
run_ms=$(( ((t1 - t0) > (t2 - t1) ? (t1 - t0) : (t2 - t1)) / 1000000 ))

# The library's files of each state: names, then checksums.
(cd "$d/ref_old" && ls -A | sort > ../names_old && md5sum $(cat ../names_old) > ../sums_old)
(cd "$d/ref_new" && ls -A | sort > ../names_new && md5sum $(cat ../names_new) > ../sums_new)
cmp -s "$d/names_old" "$d/names_new" && fail "setup: old and new generations have the same files"
[ "$(wc -l < "$d/names_old")" -gt 100 ] || fail "setup: too few outputs to exercise the write phase"

# The output folder: the old library, another library's files, files of the user (one named
# like the library's own, without tilegen's marker).
"$TILEGEN" generate --lib other --targets c --out "$out" kernels/softmax.yaml
"$TILEGEN" generate --lib kk --out "$out" "${old_args[@]}"
echo "/* user notes */" > "$out/notes.txt"
echo "int mine;" > "$out/kk__mine__x__c.c"
mkfifo "$out/a_fifo" 2>/dev/null || true
(cd "$out" && ls -A | sort) | comm -23 - "$d/names_old" > "$d/names_user"
user_snapshot() {
  (cd "$out" && while read -r f; do
     [ -f "$f" ] && echo "$f $(stat -c '%i %s %Y' "$f") $(md5sum < "$f")" || echo "$f $(stat -c '%F %i' "$f")"
   done < "$d/names_user")
}
user_before=$(user_snapshot)

# state: "old", "new", or what is wrong with the folder.
state() {
  local names
  names=$(cd "$out" && ls -A | sort | comm -23 - "$d/names_user")
  for s in old new; do
    if [ "$names" = "$(cat "$d/names_$s")" ]; then
      if (cd "$out" && md5sum -c --quiet "$d/sums_$s" >/dev/null 2>&1); then
        echo "$s"
        return
      fi
      echo "mixed:contents-differ-from-$s"
      return
    fi
  done
  local tmp
  tmp=$(echo "$names" | grep -c 'tilegen-tmp' || true)
  if [ "$tmp" -gt 0 ]; then
    echo "temporaries:$tmp"
  else
    echo "mixed:names"
  fi
}

# Puts the library back into state $1 after a failed check (so that the next runs count too).
restore() {
  (cd "$out" && ls -A | sort | comm -23 - "$d/names_user" | xargs -r rm -rf --)
  cp -p "$d/ref_$1"/* "$out/"
}

# The write phase: from the first change in the output folder or next to it (a temporary, a lock
# file, a staging folder) to the end of the run.
listing() { { ls -A --full-time "$out" "$d" 2>/dev/null || true; } | md5sum; }
# start_run ARGS...: starts a generation into $out (its process id in pid) and returns once its
# write phase has begun (or it ended).
start_run() {
  local base
  base=$(listing)
  "$TILEGEN" generate --lib kk --out "$out" "$@" 2>/dev/null &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$(listing)" = "$base" ]; do :; done
}
t0=$(now)
start_run "${new_args[@]}"
t1=$(now)
wait "$pid"
t2=$(now)
write_ms=$(( (t2 - t1) / 1000000 + 1 ))
"$TILEGEN" generate --lib kk --out "$out" "${old_args[@]}"

echo "seed $seed, $runs runs, an unkilled run takes ${run_ms} ms, its write phase ${write_ms} ms"
n_old=0 n_new=0 n_left=0 n_bad=0 n_tmp=0 n_mix=0 max_tmp=0
cur=old
for i in $(seq 1 "$runs"); do
  [ "$cur" = old ] && args=("${new_args[@]}") || args=("${old_args[@]}")
  # A third of the kills come after a delay spread over the whole run (up to 15% past its
  # length); the others once the write phase has begun, spread over it (up to 20% past it).
  r=$(( RANDOM * 32768 + RANDOM ))
  if [ $((RANDOM % 3)) -eq 0 ]; then
    delay_ms=$(( r % (run_ms * 115 / 100 + 1) ))
    "$TILEGEN" generate --lib kk --out "$out" "${args[@]}" 2>/dev/null &
    pid=$!
    what="after ${delay_ms} ms"
  else
    delay_ms=$(( r % (write_ms * 120 / 100 + 1) ))
    start_run "${args[@]}"
    what="${delay_ms} ms into the write phase"
  fi
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # What a kill can leave next to the folder (tilegen's lock file, its staging folder or the old
  # tree) is removed by the next run: never more than one staging folder.
  staged=$(ls -A "$d" | grep -c '^\.out\.tilegen-stage-' || true)
  [ "$staged" -le 1 ] || fail "run $i: $staged staging folders next to the output folder"
  [ "$staged" -eq 1 ] && n_left=$((n_left + 1))
  s=$(state)
  case "$s" in
    old) n_old=$((n_old + 1)); cur=old ;;
    new) n_new=$((n_new + 1)); cur=new ;;
    *)
      n_bad=$((n_bad + 1))
      echo "run $i (killed $what, from $cur): $s"
      case "$s" in
        temporaries:*) n_tmp=$((n_tmp + 1)); k=${s#temporaries:}; [ "$k" -gt "$max_tmp" ] && max_tmp=$k ;;
        *) n_mix=$((n_mix + 1)) ;;
      esac
      [ "$cur" = old ] && cur=new || cur=old
      restore "$cur"
      ;;
  esac
  if [ "$(user_snapshot)" != "$user_before" ]; then
    diff <(echo "$user_before") <(user_snapshot) || true
    fail "run $i (killed $what): files that are not the library's changed"
  fi
done
echo "after $runs kills: $n_old old, $n_new new, $n_bad broken ($n_tmp with temporaries, up to" \
     "$max_tmp; $n_mix with a mix of old and new); $n_left were killed while a staging folder" \
     "existed next to it"

# An unkilled run finishes the job and cleans up what killed runs left next to the folder.
[ "$cur" = old ] && args=("${new_args[@]}") || args=("${old_args[@]}")
"$TILEGEN" generate --lib kk --out "$out" "${args[@]}"
[ "$cur" = old ] && cur=new || cur=old
[ "$(state)" = "$cur" ] || fail "the final run left the folder $(state)"
left=$(ls -A "$d" | grep '^\.out\.tilegen' || true)
[ -z "$left" ] || fail "the final run left next to the output folder: $left"
[ "$(user_snapshot)" = "$user_before" ] || fail "the final run changed files that are not the library's"
[ "$n_bad" -eq 0 ] || fail "$n_bad of $runs killed runs left the output folder broken"
echo "kill atomicity OK"
