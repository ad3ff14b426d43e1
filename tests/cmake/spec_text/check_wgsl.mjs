// spec_text.sh wgsl: every .wgsl file generated from hostile text holds no planted text outside
// its comments. WGSL comments: // up to a line break (LF, VT, FF, CR, NEL, U+2028, U+2029),
// and /* */, which nest.   node check_wgsl.mjs <generated dir>
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
function code(text) {
  let out = '';
  for (let i = 0; i < text.length; ) {
    const two = text.slice(i, i + 2);
    if (two === '//') {
      while (i < text.length && !'\n\x0b\x0c\r\x85\u2028\u2029'.includes(text[i])) ++i;
    } else if (two === '/*') {
      let depth = 0;
      do {
        if (text.startsWith('/*', i)) ++depth, (i += 2);
        else if (text.startsWith('*/', i)) --depth, (i += 2);
        else if (i < text.length) ++i;
        else throw new Error('unterminated block comment');
      } while (depth > 0);
      out += ' ';
    } else {
      out += text[i++];
    }
  }
  return out;
}
let files = 0, bad = 0;
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.wgsl'))) {
  ++files;
  const m = code(fs.readFileSync(path.join(dir, f), 'utf8')).match(/#error|tg_pwn|__attribute__|globalThis|TG_PWNED/);
  if (m) {
    ++bad;
    console.log(`FAIL: ${f}: '${m[0]}' outside comments`);
  }
}
if (!files) {
  console.log('FAIL: no .wgsl file');
  process.exit(1);
}
console.log(`${files - bad} of ${files} WGSL files hold no planted text outside comments`);
process.exit(bad ? 1 : 0);
