// spec_text.sh js: the ES module and the .d.ts generated from hostile.yaml at a hostile path.
//   node check_js.mjs <generated dir> <the spec path as visible text> <line of `require`>
// Importing st.js must run no planted code and export the API only; a failed `require` must
// quote the rule and the path as visible text. Outside comments and string literals, st.d.ts
// must hold the API's declarations and nothing else.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, visible, requireLine] = process.argv.slice(2);
function fail(msg) {
  console.log(`FAIL: ${msg}`);
  process.exit(1);
}

const mod = await import(pathToFileURL(path.resolve(dir, 'st.js')).href);
if ('TG_PWNED' in globalThis) fail(`importing st.js ran planted code (TG_PWNED = ${globalThis.TG_PWNED})`);
const names = Object.keys(mod).sort().join(' ');
if (names !== 'TilegenError st_hostile') fail(`st.js exports ${names}`);
// The argument checks run before any WebGPU call: a stand-in device will do.
const device = { createComputePipelineAsync() {}, features: new Set(), limits: {} };
let msg = '';
try {
  await mod.st_hostile(device, { X: {}, Y: {}, M: 4, alpha: -1 });
} catch (e) {
  msg = e.message;
}
const expected = `st_hostile: alpha = -1, but the kernel requires alpha > 0 && alpha < 1000 (${visible}:${requireLine})`;
if (msg !== expected) fail(`require message\n  got      ${JSON.stringify(msg)}\n  expected ${JSON.stringify(expected)}`);
if ('TG_PWNED' in globalThis) fail('calling st_hostile ran planted code');

// st.d.ts without its comments and string literals (a declaration file has no template
// literals or regular expressions). Line terminators end // comments: LF, CR, U+2028, U+2029.
function code(text) {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const c = text[i], two = text.slice(i, i + 2);
    if (two === '//') {
      while (i < text.length && !'\n\r\u2028\u2029'.includes(text[i])) ++i;
    } else if (two === '/*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) fail('st.d.ts: unterminated comment');
      i = end + 2;
      out += ' ';
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) fail('st.d.ts: unterminated string');
      out += c + c;
      i = j + 1;
    } else if (c === '`') {
      fail('st.d.ts: a template literal');
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}
const dts = code(fs.readFileSync(path.join(dir, 'st.d.ts'), 'utf8'));
const planted = dts.match(/TG_PWNED|tg_pwn|__attribute__|globalThis|#error/);
if (planted) fail(`st.d.ts has '${planted[0]}' outside its comments`);
const decls = [...dts.matchAll(/^export (?:declare )?(?:class|interface|function) (\w+)/gm)].map((m) => m[1]);
if (decls.join(' ') !== 'TilegenError TilegenDispatch st_hostile') fail(`st.d.ts declares ${decls.join(' ')}`);
const statements = dts.split('\n').filter((l) => /^\S/.test(l) && !/^(export |\})/.test(l));
if (statements.length) fail(`st.d.ts has top-level text outside the declarations: ${JSON.stringify(statements)}`);
console.log('JS: st.js imports with no planted code and quotes the rule and the path as visible text; st.d.ts declares the API only');
