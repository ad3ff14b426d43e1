// The integer arithmetic of the generated ES module (its runtime part: iadd, isub, imul, idiv,
// imod, icdiv, used for tensor shapes, grids and scalar requirements; docs/spec.md "Operators
// and typing"), against BigInt: floor division and modulo for divisors of either sign, a / 0 =
// 0, a % 0 = a, cdiv(a, 0) = 0, and a result past 2^53 refused with 'unsupported-shape' (a
// double would round it). Needs node only (no WebGPU).
//   node arith.mjs <dir with tgw.js>
import { readFileSync } from 'node:fs';

const src = readFileSync(`${process.argv[2]}/tgw.js`, 'utf8');
const start = src.indexOf('function exact(');
const end = src.indexOf('\n// One pipeline');
if (start < 0 || end < start) throw new Error('tgw.js has no integer helpers');
class TilegenError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}
const h = new Function('TilegenError', `${src.slice(start, end)}\nreturn { iadd, isub, imul, idiv, imod, icdiv };`)(TilegenError);

const B = (x) => BigInt(x);
const floorDiv = (a, b) => (b === 0n ? 0n : (a / b) - ((a % b !== 0n && (a < 0n) !== (b < 0n)) ? 1n : 0n));
const ref = {
  iadd: (a, b) => a + b,
  isub: (a, b) => a - b,
  imul: (a, b) => a * b,
  idiv: floorDiv,
  imod: (a, b) => (b === 0n ? a : a - b * floorDiv(a, b)),
  icdiv: (a, b) => (b === 0n ? 0n : -floorDiv(-a, b)),
};
const P53 = 2 ** 53;
const vals = [-(P53 - 1), -(2 ** 31), -1000003, -64, -7, -2, -1, 0, 1, 2, 3, 7, 64, 1000003, 2 ** 31 - 1, 2 ** 31, 2 ** 40 + 1, P53 - 1];
let cases = 0, failures = 0;
for (const [name, fn] of Object.entries(h))
  for (const a of vals)
    for (const b of vals) {
      ++cases;
      const want = ref[name](B(a), B(b));
      const safe = want >= -B(P53 - 1) && want <= B(P53 - 1);
      let got, err;
      try { got = fn(a, b); } catch (e) { err = e; }
      const ok = safe ? err === undefined && got === Number(want) : err !== undefined && err.status === 'unsupported-shape';
      if (!ok) {
        ++failures;
        console.log(`FAIL ${name}(${a}, ${b}): got ${err ? `${err.status}: ${err.message}` : got}, want ${safe ? want : "'unsupported-shape'"}`);
      }
    }
console.log(`${cases} cases, ${failures} failed`);
process.exit(failures ? 1 : 0);
