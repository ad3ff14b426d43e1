// Checks that every deliberately bad spec is rejected for the reason it states.
//   node check_errors.js <schema.json> <bad.yaml>...
// Each `# expect: <instancePath|(root)> <keyword> [<param value>]` line of a spec must match one
// error reported for it (same instancePath and keyword, and, if given, a params value equal to
// <param value>). Uses the ajv and js-yaml that the pinned ajv-cli installs, with the options
// run_schema_test.sh gives ajv-cli, so the errors are the ones ajv-cli reports.
"use strict";
const fs = require("fs");
const Ajv = require("ajv");
const addFormats = require("ajv-formats");
const yaml = require("js-yaml");

const [schemaPath, ...specs] = process.argv.slice(2);
const ajv = new Ajv({ strict: true, strictTuples: false, allErrors: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, "utf8")));

let failures = 0;
for (const specPath of specs) {
  const text = fs.readFileSync(specPath, "utf8");
  const expectations = [...text.matchAll(/^# expect: (\S+) (\S+)(?: (\S+))?\s*$/gm)].map((m) => ({
    path: m[1] === "(root)" ? "" : m[1],
    keyword: m[2],
    param: m[3],
  }));
  if (expectations.length === 0) {
    console.error(`FAIL: ${specPath}: no '# expect:' line; every bad spec must say why it is bad`);
    failures++;
    continue;
  }
  if (validate(yaml.safeLoad(text))) {
    console.error(`FAIL: ${specPath} was accepted; the schema must reject it`);
    failures++;
    continue;
  }
  const errors = validate.errors;
  let ok = true;
  for (const want of expectations) {
    const hit = errors.some(
      (e) =>
        e.instancePath === want.path &&
        e.keyword === want.keyword &&
        (want.param === undefined || Object.values(e.params || {}).map(String).includes(want.param))
    );
    if (!hit) {
      ok = false;
      const seen = errors.map((e) => `  ${e.instancePath || "(root)"} ${e.keyword} ${JSON.stringify(e.params)}`);
      console.error(
        `FAIL: ${specPath}: expected an error '${want.path || "(root)"} ${want.keyword}` +
          `${want.param ? " " + want.param : ""}', ajv reported:\n${seen.join("\n")}`
      );
    }
  }
  if (ok) console.log(`ok (rejected for the stated reason): ${specPath}`);
  else failures++;
}
process.exit(failures ? 1 : 0);
