#!/usr/bin/env bash
# tests/schema: validates every kernels/*.yaml against schemas/tilegen-spec.schema.json with the
# pinned ajv-cli, and checks that every tests/schema/bad/*.yaml is REJECTED for the reason its
# `# expect:` line names.
#   run_schema_test.sh <source root> <work dir>
# Exit 0: pass; 1: fail; 77: skipped (npm not installed).
set -u
src_root=$1
work=$2
here="$src_root/tests/schema"
schema="$src_root/schemas/tilegen-spec.schema.json"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "SKIP: npm/node not found; the schema test needs them (apt install nodejs npm)"
  exit 77
fi

# Install the pinned tools once per lockfile (npm ci is exact and reproducible).
mkdir -p "$work"
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json" || [ ! -x "$work/node_modules/.bin/ajv" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$work/" || exit 1
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) || {
    echo "FAIL: npm ci in $work failed (is the npm registry reachable?)"
    exit 1
  }
fi
ajv=("$work/node_modules/.bin/ajv" validate --spec=draft7 --strict=true --strict-tuples=false
     -c ajv-formats --all-errors -s "$schema")

failures=0
count=0
for f in "$src_root"/kernels/*.yaml; do
  count=$((count + 1))
  if ! out=$("${ajv[@]}" -d "$f" 2>&1); then
    echo "FAIL: $f does not validate:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $f"
  fi
done
[ "$count" -gt 0 ] || { echo "FAIL: no kernels/*.yaml found"; exit 1; }

for f in "$here"/bad/*.yaml; do
  out="$work/$(basename "$f" .yaml).errors.txt"
  "${ajv[@]}" --errors=json -d "$f" >"$out" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "FAIL: $f was accepted; the schema must reject it"
    failures=$((failures + 1))
  elif [ $rc -ne 1 ]; then
    echo "FAIL: ajv could not check $f (exit $rc):"
    cat "$out"
    failures=$((failures + 1))
  elif ! node "$here/check_errors.js" "$f" "$out"; then
    failures=$((failures + 1))
  else
    echo "ok (rejected): $f"
  fi
done

if [ $failures -ne 0 ]; then
  echo "$failures schema check(s) failed"
  exit 1
fi
echo "all schema checks passed"
