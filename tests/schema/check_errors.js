// Checks that ajv-cli rejected a deliberately bad spec for the expected reason.
//   node check_errors.js <bad.yaml> <ajv-output.txt>
// Each `# expect: <instancePath|(root)> <keyword> [<param value>]` line of the spec must match
// one error in ajv's `--errors=json` output (same instancePath and keyword, and, if given, a
// params value equal to <param value>). A rejection for some other reason fails the test.
"use strict";
const fs = require("fs");

const [specPath, outPath] = process.argv.slice(2);
const spec = fs.readFileSync(specPath, "utf8");
const out = fs.readFileSync(outPath, "utf8");

const expectations = [...spec.matchAll(/^# expect: (\S+) (\S+)(?: (\S+))?\s*$/gm)].map((m) => ({
  path: m[1] === "(root)" ? "" : m[1],
  keyword: m[2],
  param: m[3],
}));
if (expectations.length === 0) {
  console.error(`${specPath}: no '# expect:' line; every bad spec must say why it is bad`);
  process.exit(1);
}

const start = out.indexOf("[");
let errors;
try {
  errors = JSON.parse(out.slice(start));
} catch (e) {
  console.error(`${specPath}: could not read ajv's JSON errors (${e.message}):\n${out}`);
  process.exit(1);
}

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
      `${specPath}: expected an error '${want.path || "(root)"} ${want.keyword}` +
        `${want.param ? " " + want.param : ""}', ajv reported:\n${seen.join("\n")}`
    );
  }
}
process.exit(ok ? 0 : 1);
