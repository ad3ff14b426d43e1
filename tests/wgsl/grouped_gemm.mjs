// WGSL numeric test of kernels/grouped_gemm.yaml (MoE expert GEMMs; docs/kernels.md): the
// generated ES module's tgw_grouped_gemm_bf16 on the adapter at hand (SwiftShader on CI), core
// and subgroups devices, against a float64 reference computed here from the bf16 inputs, at small
// shapes with uneven groups, empty experts, groups smaller than a tile (BM 64) and several in
// one tile, E = 1, every expert empty, N and K that are no multiple of the tile, and rows past the
// last offset, which must keep their NaN fill (as must every row when all experts are empty).
//   node grouped_gemm.mjs <generated dir>
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
for (const [, dev] of devices) dev.addEventListener?.('uncapturederror', (e) => { console.log('UNCAPTURED', e.error.message); process.exitCode = 1; });

// [group sizes, M, N, K]: M >= the sum (rows past the last offset are not written)
const CASES = [
  [[0, 70, 3, 0, 90, 0], 180, 70, 40],
  [[5, 0, 7, 64, 1, 0, 30, 20], 140, 33, 17],
  [[65], 65, 64, 32],
  [[1, 2, 3, 4, 5, 6, 7, 8], 40, 9, 70],
  [[0, 0, 0], 20, 16, 8],
];
const bf16 = DTYPES.bf16;
let cases = 0, failures = 0, worst = 0;
for (const [sizes, M, N, K] of CASES) {
  const E = sizes.length;
  const offs = new Int32Array(E);
  sizes.reduce((end, n, e) => (offs[e] = end + n), 0);
  const end = E ? offs[E - 1] : 0;
  const A = bf16.encode(Array.from({ length: M * K }, () => rand() * 2 - 1));
  const W = bf16.encode(Array.from({ length: E * K * N }, () => rand() * 2 - 1));
  const Av = bf16.decode(A), Wv = bf16.decode(W);
  const ref = new Float64Array(M * N);
  for (let e = 0, lo = 0; e < E; lo = offs[e++])
    for (let i = lo; i < offs[e]; ++i)
      for (let j = 0; j < N; ++j) {
        let s = 0;
        for (let k = 0; k < K; ++k) s += Av[i * K + k] * Wv[(e * K + k) * N + j];
        ref[i * N + j] = s;
      }
  const scale = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 1e-30);
  const Cinit = bf16.encode(new Array(M * N).fill(NaN));
  for (const [want, device] of devices) {
    const label = `tgw_grouped_gemm_bf16(M=${M}, N=${N}, K=${K}, groups ${sizes}) on ${want}`;
    const bufs = { A: makeBuffer(device, A), W: makeBuffer(device, W), offs: makeBuffer(device, new Uint8Array(offs.buffer)),
                   C: makeBuffer(device, Cinit) };
    ++cases;
    try {
      const res = await lib.tgw_grouped_gemm_bf16(device, { ...bufs, M, N, K, E });
      if (res.target !== want) throw new Error(`ran target ${res.target}, expected ${want}`);
      const got = bf16.decode(await readBuffer(device, bufs.C, Cinit.byteLength));
      for (let i = 0; i < M * N; ++i) {
        if (i >= end * N) {
          if (!Number.isNaN(got[i])) throw new Error(`C[${Math.floor(i / N)}, ${i % N}] = ${got[i]}: a row past the last offset ${end} was written`);
          continue;
        }
        const err = Math.abs(got[i] - ref[i]) / scale;
        // bf16 output (2^-9 relative) plus f32 sums in any order
        if (!(err <= 1e-2)) throw new Error(`C[${Math.floor(i / N)}, ${i % N}] = ${got[i]}, float64 ${ref[i]}`);
        worst = Math.max(worst, err);
      }
    } catch (e) {
      ++failures;
      console.log(`FAIL ${label}: ${e.message}`);
    }
    for (const b of Object.values(bufs)) b.destroy();
  }
}
console.log(`grouped_gemm bf16: ${cases} cases on ${devices.map(([n]) => n).join(', ')}, ${failures} failed; worst error ${worst.toExponential(2)} of max |ref| (tol 1e-2)`);
process.exit(failures ? 1 : process.exitCode ?? 0);
