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
ajv=("$work/node_modules/.bin/ajv")
opts=(--spec=draft7 --strict=true --strict-tuples=false -c ajv-formats --all-errors -s "$schema")
failures=0

# 1. Every shipped kernel validates (one ajv-cli run over all of them).
kernels=("$src_root"/kernels/*.yaml)
[ -e "${kernels[0]}" ] || { echo "FAIL: no kernels/*.yaml found"; exit 1; }
if ! "${ajv[@]}" validate "${opts[@]}" -d "$src_root/kernels/*.yaml"; then
  echo "FAIL: a shipped kernel does not validate against the schema"
  failures=$((failures + 1))
fi

# 2. Every bad spec is rejected by ajv-cli ...
if ! "${ajv[@]}" test "${opts[@]}" --errors=no -d "$here/bad/*.yaml" --invalid; then
  echo "FAIL: a spec in tests/schema/bad/ was accepted"
  failures=$((failures + 1))
fi
# 3. ... for the reason its '# expect:' line states (same ajv, same options).
if ! NODE_PATH="$work/node_modules" node "$here/check_errors.js" "$schema" "$here"/bad/*.yaml; then
  failures=$((failures + 1))
fi

# 4. The tuning database schema (docs/tune.md): a database validates; every bad one in
#    tuning_db/bad/ is rejected for the reason its '# expect:' line names.
db_schema="$src_root/schemas/tilegen-tuning-db.schema.json"
db_opts=(--spec=draft7 --strict=true --strict-tuples=false -c ajv-formats --all-errors -s "$db_schema")
if ! "${ajv[@]}" validate "${db_opts[@]}" -d "$here/tuning_db/good.json"; then
  echo "FAIL: tests/schema/tuning_db/good.json does not validate against the tuning database schema"
  failures=$((failures + 1))
fi
if ! "${ajv[@]}" test "${db_opts[@]}" --errors=no -d "$here/tuning_db/bad/*.yaml" --invalid; then
  echo "FAIL: a database in tests/schema/tuning_db/bad/ was accepted"
  failures=$((failures + 1))
fi
if ! NODE_PATH="$work/node_modules" node "$here/check_errors.js" "$db_schema" "$here"/tuning_db/bad/*.yaml; then
  failures=$((failures + 1))
fi

if [ $failures -ne 0 ]; then
  echo "$failures schema check(s) failed"
  exit 1
fi
echo "all schema checks passed"
