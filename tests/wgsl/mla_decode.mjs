// WGSL run of kernels/mla_decode.yaml on the adapter at hand (SwiftShader on CI): a small paged
// case (H 3: two WGSL tiles of 2 heads, the second ragged; lengths 0, 1, 5 and 67 in one call,
// the last over two pages of 64; pages dealt out of order, unused table columns out of range),
// bf16 and f16, core and subgroups variants, against a float64 reference computed here from
// the same rounded inputs (the tolerance of docs/kernels.md's decode tests: |V| < 1, so the
// max abs error over all of o).
//   node mla_decode.mjs <generated dir (tgw.js)>
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DTYPES, getAdapter, makeBuffer, readBuffer, rng } from './common.mjs';

const [genDir] = process.argv.slice(2);
const lib = await import(pathToFileURL(path.join(genDir, 'tgw.js')).href);
const seed = process.env.TGW_SEED ? Number(process.env.TGW_SEED) : (Date.now() ^ (process.pid << 16)) >>> 0;
console.log(`seed ${seed} (rerun with TGW_SEED=${seed})`);
const rand = rng(seed);

const adapter = await getAdapter();
if (!adapter) {
  console.log('SKIP: no WebGPU adapter (set VK_ICD_FILENAMES to a Vulkan ICD, e.g. SwiftShader)');
  process.exit(77);
}
const devices = [['wgsl', await adapter.requestDevice()]];
if (adapter.features.has('subgroups'))
  devices.push(['wgsl_subgroups', await (await getAdapter()).requestDevice({ requiredFeatures: ['subgroups'] })]);

const PAGE = 64, DL = 512, DR = 64, D = DL + DR, H = 3;
const lens = [0, 1, 5, 67];
const B = lens.length;
const pages = lens.map((n) => Math.ceil(n / PAGE));
const MP = Math.max(1, ...pages);
const NP = pages.reduce((a, b) => a + b, 0) + 2;
const pool = Array.from({ length: NP }, (_, i) => i);
for (let i = NP - 1; i > 0; --i) {
  const j = Math.floor(rand() * (i + 1));
  [pool[i], pool[j]] = [pool[j], pool[i]];
}
const table = new Int32Array(B * MP).fill(1 << 30);
let next = 0;
for (let b = 0; b < B; ++b) for (let k = 0; k < pages[b]; ++k) table[b * MP + k] = pool[next++];
const scale = 1 / Math.sqrt(192);
const TOL = { bf16: 1.2e-2, f16: 1.5e-3 };

let failures = 0;
for (const type of ['bf16', 'f16']) {
  const dt = DTYPES[type];
  // inputs rounded to the type: the reference uses exactly what the kernel reads
  const qBytes = dt.encode(Array.from({ length: B * H * D }, () => 2 * rand() - 1));
  const kvBytes = dt.encode(Array.from({ length: NP * PAGE * D }, () => 2 * rand() - 1));
  const q = dt.decode(qBytes), kv = dt.decode(kvBytes);
  const ref = new Float64Array(B * H * DL);
  for (let b = 0; b < B; ++b)
    for (let h = 0; h < H; ++h) {
      const n = lens[b];
      if (n === 0) continue;
      const row = (j) => (table[b * MP + Math.floor(j / PAGE)] * PAGE + (j % PAGE)) * D;
      const s = [];
      for (let j = 0; j < n; ++j) {
        let dot = 0;
        for (let d = 0; d < D; ++d) dot += q[(b * H + h) * D + d] * kv[row(j) + d];
        s.push(dot * scale);
      }
      const m = Math.max(...s);
      const p = s.map((x) => Math.exp(x - m));
      const l = p.reduce((a, x) => a + x, 0);
      for (let j = 0; j < n; ++j)
        for (let d = 0; d < DL; ++d) ref[(b * H + h) * DL + d] += p[j] / l * kv[row(j) + d];
    }
  for (const [want, device] of devices) {
    const oInit = dt.encode(new Array(B * H * DL).fill(NaN));
    const bufs = {
      q: makeBuffer(device, qBytes), KV_cache: makeBuffer(device, kvBytes),
      block_table: makeBuffer(device, new Uint8Array(table.buffer)),
      seq_lens: makeBuffer(device, new Uint8Array(Int32Array.from(lens).buffer)),
      o: makeBuffer(device, oInit),
    };
    const label = `tgw_mla_decode_${type}(B=${B}, H=${H}, lens ${lens}) on ${want}`;
    try {
      const res = await lib[`tgw_mla_decode_${type}`](device, { ...bufs, B, H, NP, MP, PAGE, DL, DR, sm_scale: scale });
      if (res.target !== want) throw new Error(`ran target ${res.target}, expected ${want}`);
      const got = dt.decode(await readBuffer(device, bufs.o, oInit.byteLength));
      let err = 0, bad = -1;
      for (let i = 0; i < got.length; ++i) {
        const e = Math.abs(got[i] - ref[i]);
        if (!(e <= TOL[type])) { if (bad < 0) bad = i; } else err = Math.max(err, e);
      }
      if (bad >= 0) throw new Error(`o[${bad}] = ${got[bad]}, expected ${ref[bad]}`);
      console.log(`ok   ${label}: max abs err ${err.toExponential(2)} (tol ${TOL[type]})`);
    } catch (e) {
      ++failures;
      console.log(`FAIL ${label}: ${e.message}`);
    }
    for (const b of Object.values(bufs)) b.destroy();
  }
}
console.log(failures ? `${failures} failure(s)` : 'all passed');
process.exit(failures ? 1 : 0);
