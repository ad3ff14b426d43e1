// WGSL numeric test: every shipped kernel x type runs through the generated ES module in Dawn
// (npm `webgpu`) on the adapter at hand (SwiftShader on CI) and is compared with the C backend
// (tgw_ref_runner) on the same fresh random inputs, at ragged and empty sizes. Each case runs
// on a core device (variant `wgsl`) and, when the adapter has `subgroups`, on a device with it
// (variant `wgsl_subgroups`). Then the module's argument checks are exercised.
//   node numeric.mjs <generated dir> <tgw_ref_runner> <scratch dir> [<kernel> | api]
// (one kernel's cases, or only the argument checks; all of it without the last argument)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DTYPES, f32Bits, f32FromBits, fp8Codes, fp8Encode, fp8Value, getAdapter, makeBuffer, readBuffer, rng } from './common.mjs';

const [genDir, runner, scratch, only] = process.argv.slice(2);
fs.mkdirSync(scratch, { recursive: true });
const lib = await import(pathToFileURL(path.join(genDir, 'tgw.js')).href);
const seed = process.env.TGW_SEED ? Number(process.env.TGW_SEED) : (Date.now() ^ (process.pid << 16)) >>> 0;
console.log(`seed ${seed} (rerun with TGW_SEED=${seed})`);
const rand = rng(seed);
const uniform = (lo, hi) => lo + (hi - lo) * rand();

// Kernels: tensors (name, role, element count, value range, fixed type), dims, scalars, flags,
// shapes, and the types (instances) when not f32, f16 and bf16.
const KERNELS = {
  gemm: {
    tensors: [['A', 'in', (d) => d.M * d.K], ['B', 'in', (d) => d.K * d.N], ['C', 'out', (d) => d.M * d.N]],
    dims: ['M', 'N', 'K'],
    shapes: [[1, 1, 1], [7, 13, 5], [64, 64, 32], [65, 130, 33], [100, 37, 129], [3, 200, 1], [0, 5, 5], [5, 0, 5], [5, 5, 0]],
  },
  gemm_bias_gelu: {
    tensors: [['A', 'in', (d) => d.M * d.K], ['B', 'in', (d) => d.K * d.N], ['bias', 'in', (d) => d.N],
              ['C', 'out', (d) => d.M * d.N]],
    dims: ['M', 'N', 'K'],
    shapes: [[1, 1, 1], [9, 70, 40], [64, 64, 64], [130, 65, 17], [0, 3, 3], [4, 4, 0]],
  },
  softmax: {
    tensors: [['X', 'in', (d) => d.M * d.N, 4], ['Y', 'out', (d) => d.M * d.N]],
    dims: ['M', 'N'],
    shapes: [[1, 1], [3, 7], [5, 1000], [9, 1025], [2, 3000], [6, 257], [0, 5], [4, 0]],
  },
  rmsnorm: {
    tensors: [['X', 'in', (d) => d.M * d.N, 2], ['W', 'in', (d) => d.N], ['Y', 'out', (d) => d.M * d.N]],
    dims: ['M', 'N'], scalars: [['eps', () => 1e-5]],
    shapes: [[1, 1], [3, 7], [5, 1000], [9, 1025], [2, 3000], [0, 5], [4, 0]],
  },
  // FP8 A [M, K] and B [N, K] (codes drawn uniformly among |x| in [2^-4, 4], both signs), bf16 C.
  gemm_fp8: {
    tensors: [['A', 'in', (d) => d.M * d.K], ['B', 'in', (d) => d.N * d.K], ['C', 'out', (d) => d.M * d.N, 1, 'bf16']],
    dims: ['M', 'N', 'K'], scalars: [['scale_a', () => 0.37], ['scale_b', () => 2.5]],
    types: ['e4m3', 'e5m2'],
    shapes: [[1, 1, 1], [7, 13, 5], [64, 64, 32], [65, 130, 33], [100, 37, 129], [3, 200, 1], [0, 5, 5], [5, 0, 5], [5, 5, 0]],
  },
  flash_attention_fwd: {
    tensors: ['Q', 'K', 'V'].map((n) => [n, 'in', (d) => d.B * d.H * d.S * d.D]).concat([['O', 'out', (d) => d.B * d.H * d.S * d.D]]),
    dims: ['B', 'H', 'S', 'D'], scalars: [['sm_scale', (d) => 1 / Math.sqrt(d.D)]], flags: ['causal'],
    shapes: [[1, 1, 1, 64, 0], [1, 2, 17, 64, 1], [2, 1, 33, 128, 0], [1, 1, 40, 128, 1], [1, 1, 9, 64, 0], [1, 1, 0, 64, 1]],
  },
};
// Agreement of two f32 implementations (different exp, summation order, and for 16-bit
// outputs a rounding that may land on the neighbouring value): |w - c| <= atol * scale +
// rtol * |c|, scale = max |c| of the output (docs/wgsl.md).
const TOL = { f32: [2e-5, 2e-5], f16: [1.5e-3, 1.5e-3], bf16: [1e-2, 1e-2] };

function runC(fn, d, scalars, flags, inputs, outBytes) {
  const dir = fs.mkdtempSync(path.join(scratch, 'case-'));
  const spec = fn.spec ?? KERNELS[fn.kernel];
  fs.writeFileSync(path.join(dir, 'args.txt'), `dims ${spec.dims.map((n) => d[n]).join(' ')}\n` +
    `scalars ${scalars.join(' ')}\nflags ${flags.join(' ')}\n`);
  spec.tensors.forEach(([name, role], i) =>
    fs.writeFileSync(path.join(dir, `t${i}.bin`), role === 'in' ? inputs[name] : outBytes[name]));
  const r = spawnSync(runner, [`${fn.kernel}_${fn.type}`, dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`C runner failed: ${r.stderr}`);
  const out = {};
  spec.tensors.forEach(([name, role], i) => {
    if (role === 'out') out[name] = new Uint8Array(fs.readFileSync(path.join(dir, `t${i}.bin`)));
  });
  fs.rmSync(dir, { recursive: true });
  return out;
}

const adapter = await getAdapter();
if (!adapter) {
  console.log('SKIP: no WebGPU adapter (set VK_ICD_FILENAMES to a Vulkan ICD, e.g. SwiftShader)');
  process.exit(77);
}
console.log(`adapter: ${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}`);
// One device per adapter (WebGPU): a second adapter for the device with subgroups.
const devices = [['wgsl', await adapter.requestDevice()]];
if (adapter.features.has('subgroups'))
  devices.push(['wgsl_subgroups', await (await getAdapter()).requestDevice({ requiredFeatures: ['subgroups'] })]);
else
  console.log('NOTE: the adapter has no subgroups feature: wgsl_subgroups variants are not run');
for (const [, dev] of devices) dev.addEventListener?.('uncapturederror', (e) => { console.log('UNCAPTURED', e.error.message); process.exitCode = 1; });

let cases = 0, failures = 0;
const worst = {};
for (const [kernel, spec] of Object.entries(KERNELS)) {
  if (only && only !== kernel) continue;
  for (const type of spec.types ?? ['f32', 'f16', 'bf16']) {
    const fnName = `tgw_${kernel}_${type}`;
    const fp8 = type === 'e4m3' || type === 'e5m2';
    const codes = fp8 ? fp8Codes(type, 1 / 16, 4) : [];
    const tensorType = (t) => t[4] ?? type;
    for (const shape of spec.shapes) {
      const d = {};
      spec.dims.forEach((n, i) => { d[n] = shape[i]; });
      const flags = (spec.flags ?? []).map((_, i) => shape[spec.dims.length + i]);
      const scalars = (spec.scalars ?? []).map(([, f]) => f(d));
      // Fresh random inputs; outputs start as NaN so that a missing write cannot pass.
      const inputs = {}, outInit = {};
      for (const t of spec.tensors) {
        const [name, role, count, range = 1] = t;
        const n = count(d);
        if (role === 'in' && fp8) {
          inputs[name] = Uint8Array.from({ length: n },
            () => codes[Math.floor(rand() * codes.length)] | (rand() < 0.5 ? 0x80 : 0));
        } else if (role === 'in') {
          const lo = name === 'W' ? 0.5 : -range, hi = name === 'W' ? 1.5 : range;
          inputs[name] = DTYPES[tensorType(t)].encode(Array.from({ length: n }, () => uniform(lo, hi)));
        } else {
          outInit[name] = DTYPES[tensorType(t)].encode(new Array(n).fill(NaN));
        }
      }
      const expect = runC({ kernel, type }, d, scalars, flags, inputs, outInit);
      for (const [want, device] of devices) {
        const args = { ...d };
        (spec.scalars ?? []).forEach(([n], i) => { args[n] = scalars[i]; });
        (spec.flags ?? []).forEach((n, i) => { args[n] = flags[i] === 1; });
        const bufs = {};
        for (const [name, role] of spec.tensors) bufs[name] = args[name] = makeBuffer(device, role === 'in' ? inputs[name] : outInit[name]);
        const label = `${fnName}(${spec.dims.map((n) => `${n}=${d[n]}`).join(', ')}${flags.length ? `, flags=${flags}` : ''}) on ${want}`;
        ++cases;
        try {
          const res = await lib[fnName](device, args);
          if (res.target !== want) throw new Error(`ran target ${res.target}, expected ${want}`);
          for (const t of spec.tensors) {
            const [name, role] = t;
            if (role !== 'out') continue;
            const dt = DTYPES[tensorType(t)];
            const got = dt.decode(await readBuffer(device, bufs[name], outInit[name].byteLength));
            const ref = dt.decode(expect[name]);
            const scale = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 1e-30);
            const [atol, rtol] = TOL[tensorType(t)];
            let bad = -1, maxErr = 0;
            for (let i = 0; i < ref.length; ++i) {
              const err = Math.abs(got[i] - ref[i]);
              if (!(err <= atol * scale + rtol * Math.abs(ref[i]))) { if (bad < 0) bad = i; }
              else maxErr = Math.max(maxErr, err / scale);
            }
            const key = `${kernel} ${type}`;
            worst[key] = Math.max(worst[key] ?? 0, maxErr);
            if (bad >= 0) throw new Error(`${name}[${bad}] = ${got[bad]}, C backend ${ref[bad]}`);
          }
          // dispatched: a grid with workgroups and a written tensor with an element (a call whose
          // written tensors are all empty has nothing to do); none of these grids is folded
          if (res.dispatched && !res.workgroups.every((g) => g > 0)) throw new Error('dispatched an empty grid');
          if (res.folded) throw new Error('folded a grid within the limits');
        } catch (e) {
          ++failures;
          console.log(`FAIL ${label}: ${e.message}`);
        }
        for (const b of Object.values(bufs)) b.destroy();
      }
    }
  }
}
for (const [k, v] of Object.entries(worst)) console.log(`  max |wgsl - c| / max|c|: ${k.padEnd(26)} ${v.toExponential(2)}`);

// FP8 conversions in generated code (tests/wgsl/fp8_convert.yaml: Y = X stored as FP8, Z = D
// loaded from FP8), bit for bit against the search-based encoder of common.mjs and against the
// C backend: every code decoded; encoded: every code's value, every midpoint between
// neighbouring codes (ties to even) and past the largest, one f32 ulp either side of those,
// overflow, f32 subnormals, +-0 and a strided sweep of the finite f32 bit patterns, both signs.
// Infinite and NaN inputs are left out of the stores: WGSL lets an implementation assume they
// do not occur (docs/wgsl.md); the C side has them in tests/unit/emit/Fp8HelpersTest.cpp.
function fp8Inputs(type) {
  const vals = fp8Codes(type, 0, Number.MAX_VALUE).map((c) => fp8Value(c, type));
  const pts = [];
  vals.forEach((v, i) => {
    const next = i + 1 < vals.length ? vals[i + 1] : 2 * v - vals[i - 1];
    pts.push(v, (v + next) / 2);
  });
  const xs = [];
  for (const p of pts) {
    const b = f32Bits(p);
    xs.push(p, f32FromBits(b + 1));
    if (p !== 0) xs.push(f32FromBits(b - 1));
  }
  xs.push(1e6, 65536, 2 ** 100, 2 ** 127, f32FromBits(0x7f7fffff), 2 ** -126, 2 ** -149, 2 ** -140, 2 ** -20, 1 / 3, 0.1);
  for (let u = 0; u < 0x7f800000; u += 104729) xs.push(f32FromBits(u));
  return new Float32Array(xs.concat(xs.map((x) => -x)));
}
if (!only || only === 'fp8_convert') {
  for (const type of ['e4m3', 'e5m2']) {
    const X = fp8Inputs(type);
    const N = X.length;
    const D = Uint8Array.from({ length: N }, (_, i) => i & 0xff);
    const want = Uint8Array.from(X, (x) => fp8Encode(x, type));
    const inputs = { X: new Uint8Array(X.buffer), D };
    const outInit = { Y: new Uint8Array(N).fill(0xff), Z: new Uint8Array(4 * N).fill(0xff) };
    const spec = { tensors: [['X', 'in'], ['D', 'in'], ['Y', 'out'], ['Z', 'out']], dims: ['N'] };
    const c = runC({ kernel: 'fp8_convert', type, spec }, { N }, [], [], inputs, outInit);
    const results = [['c', c]];
    for (const [target, device] of devices) {
      const bufs = { X: makeBuffer(device, inputs.X), D: makeBuffer(device, D), Y: makeBuffer(device, outInit.Y), Z: makeBuffer(device, outInit.Z) };
      const res = await lib[`tgw_fp8_convert_${type}`](device, { ...bufs, N });
      if (res.target !== target) throw new Error(`ran target ${res.target}, expected ${target}`);
      results.push([target, { Y: await readBuffer(device, bufs.Y, N), Z: await readBuffer(device, bufs.Z, 4 * N) }]);
      for (const b of Object.values(bufs)) b.destroy();
    }
    for (const [target, r] of results) {
      ++cases;
      const Z = new Float32Array(r.Z.buffer, r.Z.byteOffset, N);
      const bad = [];
      for (let i = 0; i < N && bad.length < 5; ++i)
        if (r.Y[i] !== want[i]) bad.push(`store(${X[i]} = 0x${f32Bits(X[i]).toString(16)}) = 0x${r.Y[i].toString(16)}, want 0x${want[i].toString(16)}`);
      for (let i = 0; i < 256 && bad.length < 10; ++i) {
        const v = fp8Value(i, type);
        if (!(Number.isNaN(v) ? Number.isNaN(Z[i]) : Z[i] === v)) bad.push(`load(0x${i.toString(16)}) = ${Z[i]}, want ${v}`);
      }
      if (bad.length) { ++failures; console.log(`FAIL fp8_convert ${type} on ${target}: ${bad.join('; ')}`); }
      else console.log(`  fp8_convert ${type} on ${target}: ${N} stores and 256 loads bit-exact`);
    }
  }
}

// Integer division for every divisor (tests/wgsl/int_div.yaml): i32 pairs with zero divisors, -1
// and INT32_MIN, against BigInt: floor division and modulo, a / 0 = 0, a % 0 = a,
// cdiv(a, 0) = 0, INT32_MIN / -1 wrapping to INT32_MIN (docs/spec.md "Operators and typing").
if (!only || only === 'int_div') {
  const v = [-2147483648, -2147483647, -1000003, -64, -7, -2, -1, 0, 1, 2, 3, 7, 64, 1000003, 2147483646, 2147483647];
  const a = [], b = [];
  for (const x of v) for (const y of v) { a.push(x); b.push(y); }
  const N = a.length;
  const wrap = (x) => Number(BigInt.asIntN(32, x));
  const fdiv = (x, y) => (y === 0n ? 0n : x / y - ((x % y !== 0n && (x < 0n) !== (y < 0n)) ? 1n : 0n));
  const want = {
    Q: a.map((x, i) => wrap(fdiv(BigInt(x), BigInt(b[i])))),
    R: a.map((x, i) => wrap(b[i] === 0 ? BigInt(x) : BigInt(x) - BigInt(b[i]) * fdiv(BigInt(x), BigInt(b[i])))),
    C: a.map((x, i) => wrap(b[i] === 0 ? 0n : -fdiv(-BigInt(x), BigInt(b[i])))),
  };
  for (const [target, device] of devices) {
    ++cases;
    const bufs = { A: makeBuffer(device, new Uint8Array(Int32Array.from(a).buffer)), B: makeBuffer(device, new Uint8Array(Int32Array.from(b).buffer)) };
    for (const t of ['Q', 'R', 'C']) bufs[t] = makeBuffer(device, new Uint8Array(4 * N));
    const res = await lib.tgw_int_div(device, { ...bufs, N });
    const bad = [];
    for (const t of ['Q', 'R', 'C']) {
      const got = new Int32Array((await readBuffer(device, bufs[t], 4 * N)).buffer);
      for (let i = 0; i < N && bad.length < 5; ++i)
        if (got[i] !== want[t][i]) bad.push(`${t}: ${a[i]}, ${b[i]} gave ${got[i]}, want ${want[t][i]}`);
    }
    if (bad.length) { ++failures; console.log(`FAIL int_div on ${target} (${res.target}): ${bad.join("; ")}`); }
    else console.log(`  int_div on ${target}: ${N} pairs, a / b, a % b, cdiv(a, b) as defined`);
    for (const x of Object.values(bufs)) x.destroy();
  }
}

// Bitwise operators and bitcast (tests/lit/emit/Inputs/bitwise.yaml): every i8 byte, i8 shift
// counts -2..9, i32 words with the extremes, run-time i32 counts inside and outside [0, 32), and
// normal f32 values (their exponent field, their negation through the sign bit), against BigInt:
// docs/spec.md "Bitwise operators" (x << n wraps, 0 outside [0, width); x >> n floors, the sign
// fill outside). WGSL takes counts modulo 32: the helpers must not.
if (!only || only === 'bitwise') {
  const N = 700;
  const q8 = new Int8Array(N), c8 = new Int8Array(N), w = new Int32Array(N), f = new Float32Array(N);
  for (let j = 0; j < N; ++j) {
    q8[j] = (j % 256) - 128; c8[j] = ((Math.floor(j / 256) * 7 + j) % 12) - 2; w[j] = (rand() * 2 ** 32) | 0;
    f[j] = (j % 2 ? -1 : 1) * (1 + (j % 37) / 37) * 2 ** ((j % 200) - 100); // normal: no flush to zero
  }
  const fbits = new Int32Array(f.buffer);
  w.set([-2147483648, 2147483647, -1, 0, 0x12345678]);
  const shl = (a, n, bits) => (n < 0n || n >= BigInt(bits) ? 0n : BigInt.asIntN(bits, a << n));
  const shr = (a, n, bits) => (n < 0n || n >= BigInt(bits) ? (a < 0n ? -1n : 0n) : a >> n);
  for (const S of [0, 1, 4, 31, 32, 33, 100, -1, -2147483648]) {
    const s = BigInt(S);
    const want = [];
    for (let j = 0; j < N; ++j) {
      const q = BigInt(q8[j]), c = BigInt(c8[j]), W = BigInt(w[j]);
      want.push(q & 255n, (shr(W, 28n, 64) & 15n) | ((shr(W, 4n, 64) & 15n) << 4n), shl(W, s, 32), shr(W, s, 32),
                shl(q, c, 8), shr(q, c, 8), (~W ^ 1n) | 4n, BigInt.asIntN(32, W ^ (shl(s, 8n, 64) & ~255n)),
                BigInt((fbits[j] >> 23) & 255));
    }
    for (const [target, device] of devices) {
      ++cases;
      const bufs = { Q8: makeBuffer(device, new Uint8Array(q8.buffer)), C8: makeBuffer(device, new Uint8Array(c8.buffer)),
                     W: makeBuffer(device, new Uint8Array(w.buffer)), F: makeBuffer(device, new Uint8Array(f.buffer)),
                     O: makeBuffer(device, new Uint8Array(4 * 9 * N)), X: makeBuffer(device, new Uint8Array(4 * N)),
                     Y: makeBuffer(device, new Uint8Array(4 * N)) };
      const res = await lib.tgw_bitwise(device, { ...bufs, N, S });
      const got = new Int32Array((await readBuffer(device, bufs.O, 4 * 9 * N)).buffer);
      const x = new Float32Array((await readBuffer(device, bufs.X, 4 * N)).buffer);
      const y = new Float32Array((await readBuffer(device, bufs.Y, 4 * N)).buffer);
      const bad = [];
      for (let i = 0; i < 9 * N && bad.length < 5; ++i)
        if (BigInt(got[i]) !== want[i]) bad.push(`S=${S} j=${Math.floor(i / 9)} column ${i % 9}: ${got[i]}, want ${want[i]}`);
      for (let j = 0; j < N && bad.length < 5; ++j)
        if (y[j] !== -f[j]) bad.push(`Y[${j}] = ${y[j]}, want ${-f[j]}`);
      for (let j = 0; j < N && bad.length < 5; ++j) {
        const lo = Number(BigInt(q8[j]) & 15n), hi = Number(shr(BigInt(q8[j]), 4n, 64) & 15n);
        if (x[j] !== (hi - 8) * 0.5 + lo * 0.25) bad.push(`X[${j}] = ${x[j]}`);
      }
      if (bad.length) { ++failures; console.log(`FAIL bitwise on ${target} (${res.target}): ${bad.join('; ')}`); }
      else console.log(`  bitwise on ${target}: S=${S}, ${N} elements x 9 columns, X and Y as defined`);
      for (const b of Object.values(bufs)) b.destroy();
    }
  }
}

// Packed types (tests/lit/emit/Inputs/packed8.yaml): i4/e2m1 nibbles (two per byte, low
// first; the WGSL bytes four to a u32 word) read by tile copies at even and odd offsets and by
// element reads, e8m0 scales, and whole-byte writes (u4 wraps, e2m1 rounds to nearest even and
// saturates, e8m0 takes the exponent field), exactly, at ragged shapes. Finite normal values
// only (WGSL may flush subnormals and assume no inf/NaN); packed_c.test covers those on C.
if (!only || only === 'packed') {
  const E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
  const val = (c) => (c & 8 ? -E2M1[c & 7] : E2M1[c & 7]);
  const code = (x) => {
    const sign = x < 0 || Object.is(x, -0) ? 8 : 0, a = Math.abs(x);
    let best = 0;
    for (let c = 1; c < 8; ++c) {
      const d = Math.abs(a - E2M1[c]), db = Math.abs(a - E2M1[best]);
      if (d < db || (d === db && c % 2 === 0)) best = c;
    }
    return sign | (a > 6 ? 7 : best);
  };
  const XS = [0, -0, 0.25, -0.25, 0.75, 1.25, -1.75, 2.5, 3.5, 5, -5, 5.0001, 6, 100, 0.2499, 0.2501, 2.9999, -0.7, 1e30];
  for (const [K, N] of [[7, 38], [13, 102], [1, 2]]) {
    const G = Math.ceil(N / 32), RB = N / 2;
    const wq = new Uint8Array(K * RB), wf = new Uint8Array(K * RB);
    for (let i = 0; i < K * RB; ++i) { wq[i] = (i * 53 + 5) & 255; wf[i] = (i * 29 + 3) & 255; }
    const s = new Uint8Array(K * G);
    for (let i = 0; i < K * G; ++i) s[i] = 100 + Math.floor(rand() * 55);
    const x = new Float32Array(K * N);
    for (let i = 0; i < K * N; ++i) x[i] = i % 2 ? XS[(i >> 1) % XS.length] : Math.round(uniform(-1000, 1000)) / 128;
    const nib = (t, k, n) => (n % 2 ? t[k * RB + (n >> 1)] >> 4 : t[k * RB + (n >> 1)] & 15);
    const i4 = (c) => (c ^ 8) - 8;
    for (const [target, device] of devices) {
      ++cases;
      const bufs = { Wq: makeBuffer(device, wq), Wf: makeBuffer(device, wf), S: makeBuffer(device, s),
                     X: makeBuffer(device, new Uint8Array(x.buffer)), Y: makeBuffer(device, new Uint8Array(16 * K * N)),
                     Oq: makeBuffer(device, new Uint8Array(K * RB)), Of: makeBuffer(device, new Uint8Array(K * RB)),
                     Os: makeBuffer(device, new Uint8Array(K * N)) };
      const res = await lib.tgw_packed8(device, { ...bufs, K, N, G });
      const y = new Float32Array((await readBuffer(device, bufs.Y, 16 * K * N)).buffer);
      const oq = await readBuffer(device, bufs.Oq, K * RB), of = await readBuffer(device, bufs.Of, K * RB);
      const os = await readBuffer(device, bufs.Os, K * N);
      const bad = [];
      for (let k = 0; k < K; ++k)
        for (let n = 0; n < N && bad.length < 5; ++n) {
          const iv = i4(nib(wq, k, n)), fc = nib(wf, k, n), sc = 2 ** (s[k * G + (n >> 5)] - 127), r = N - 1 - n;
          const wy = [iv, Math.fround(val(fc) * sc), n + 1 < N ? val(nib(wf, k, n + 1)) : 7, val(nib(wf, k, r)) + i4(nib(wq, k, r))];
          for (let c = 0; c < 4; ++c) if (!Object.is(y[(k * N + n) * 4 + c], wy[c]) && !(wy[c] === 0 && y[(k * N + n) * 4 + c] === 0 && c === 3))
            bad.push(`Y[${k}, ${n}, ${c}] = ${y[(k * N + n) * 4 + c]}, want ${wy[c]}`);
          const wn = { Oq: [oq, (iv * 3 + 1) & 15], Of: [of, code(x[k * N + n])] };
          for (const [o, [t, w]] of Object.entries(wn)) if (nib(t, k, n) !== w) bad.push(`${o}[${k}, ${n}] = ${nib(t, k, n)}, want ${w} (x ${x[k * N + n]})`);
          const ws = (f32Bits(x[k * N + n]) >>> 23) & 255;
          if (os[k * N + n] !== ws) bad.push(`Os[${k}, ${n}] = ${os[k * N + n]}, want ${ws}`);
        }
      if (bad.length) { ++failures; console.log(`FAIL packed on ${target} (${res.target}): ${bad.join('; ')}`); }
      else console.log(`  packed on ${target}: K=${K} N=${N}, Y, Oq, Of, Os as defined`);
      for (const b of Object.values(bufs)) b.destroy();
    }
  }
}

// Dequantizing GEMMs (kernels/gemm_w4a16.yaml, kernels/gemm_mxfp4.yaml) at small ragged shapes
// against a float64 reference of docs/kernels.md's math: the weights dequantized and rounded to
// T once, then A @ W. Each element lies within u_T |ref| + gamma_K sum |a w| (A and w are exact
// in f32, and so are their products; only the f32 sums and the store round). Zero points 0 and
// 15 and the symmetric form, groups of 32, 64 and 96; normal MX scales only (WGSL may flush
// subnormals and assume no NaN; DequantGemmTest.cpp covers e8m0 0, 254 and 255 on C).
if (!only || only === 'dequant') {
  const E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
  const pack = (codes, rows, cols) => {
    const out = new Uint8Array(rows * cols / 2);
    for (let i = 0; i < rows * cols; ++i) out[i >> 1] |= (codes[i] & 15) << (i % 2 ? 4 : 0);
    return out;
  };
  const check = (got, ref, absref, type, K) => {
    const uT = type === 'f16' ? 2 ** -11 : 2 ** -8, g = (K + 1) * 2 ** -24 / (1 - (K + 1) * 2 ** -24);
    for (let i = 0; i < ref.length; ++i) {
      const bound = uT * Math.abs(ref[i]) + (1 + uT) * g * absref[i] + 2 ** -24;
      if (!(Math.abs(got[i] - ref[i]) <= bound)) return `C[${i}] = ${got[i]}, want ${ref[i]} (bound ${bound})`;
    }
    return null;
  };
  const matmul = (a, w, M, N, K, abs) => {
    const c = new Float64Array(M * N);
    for (let m = 0; m < M; ++m)
      for (let k = 0; k < K; ++k) {
        const x = abs ? Math.abs(a[m * K + k]) : a[m * K + k];
        for (let n = 0; n < N; ++n) c[m * N + n] += x * (abs ? Math.abs(w[k * N + n]) : w[k * N + n]);
      }
    return c;
  };
  for (const type of ['bf16', 'f16']) {
    for (const [M, N, K, group, zp] of [[1, 64, 96, 32, 0], [5, 38, 130, 64, 1], [17, 70, 200, 96, 1]]) {
      const G = Math.ceil(K / group), dt = DTYPES[type];
      const a = dt.decode(dt.encode(Array.from({ length: M * K }, () => uniform(-1, 1))));
      const s = dt.decode(dt.encode(Array.from({ length: G * N }, () => uniform(0.001, 0.1))));
      const q = Array.from({ length: K * N }, () => Math.floor(rand() * 16));
      const z = Array.from({ length: G * N }, (_, i) => (i % 3 === 0 ? 0 : i % 3 === 1 ? 15 : Math.floor(rand() * 16)));
      const w = dt.decode(dt.encode(Array.from({ length: K * N }, (_, i) => {
        const k = Math.floor(i / N), n = i % N, gi = Math.floor(k / group) * N + n;
        return (q[i] - (zp ? z[gi] : 8)) * s[gi];
      })));
      const ref = matmul(a, w, M, N, K, false), absref = matmul(a, w, M, N, K, true);
      for (const [target, device] of devices) {
        ++cases;
        const bufs = { A: makeBuffer(device, dt.encode(a)), Bq: makeBuffer(device, pack(q, K, N)),
                       S: makeBuffer(device, dt.encode(s)), Z: makeBuffer(device, zp ? pack(z, G, N) : new Uint8Array(0)),
                       C: makeBuffer(device, dt.encode(new Array(M * N).fill(NaN))) };
        const res = await lib[`tgw_gemm_w4a16_${type}`](device, { ...bufs, M, N, K, GROUP: group, ZP: zp });
        const bad = check(dt.decode(await readBuffer(device, bufs.C, M * N * 2)), ref, absref, type, K);
        if (bad) { ++failures; console.log(`FAIL gemm_w4a16_${type} M=${M} N=${N} K=${K} group=${group} zp=${zp} on ${target} (${res.target}): ${bad}`); }
        else console.log(`  gemm_w4a16_${type} on ${target}: M=${M} N=${N} K=${K} group=${group} zp=${zp} within the bound`);
        for (const b of Object.values(bufs)) b.destroy();
      }
    }
  }
  const bf = DTYPES.bf16;
  for (const [M, N, K] of [[1, 64, 64], [5, 37, 98], [17, 70, 130]]) {
    const KB = Math.ceil(K / 32);
    const a = bf.decode(bf.encode(Array.from({ length: M * K }, () => uniform(-1, 1))));
    const b = Array.from({ length: N * K }, () => Math.floor(rand() * 16));
    const e = Uint8Array.from({ length: N * KB }, () => 120 + Math.floor(rand() * 15));
    const w = bf.decode(bf.encode(Array.from({ length: K * N }, (_, i) => {
      const k = Math.floor(i / N), n = i % N, c = b[n * K + k];
      return (c & 8 ? -1 : 1) * E2M1[c & 7] * 2 ** (e[n * KB + (k >> 5)] - 127);
    })));
    const ref = matmul(a, w, M, N, K, false), absref = matmul(a, w, M, N, K, true);
    for (const [target, device] of devices) {
      ++cases;
      const bufs = { A: makeBuffer(device, bf.encode(a)), B: makeBuffer(device, pack(b, N, K)), E: makeBuffer(device, e),
                     C: makeBuffer(device, bf.encode(new Array(M * N).fill(NaN))) };
      const res = await lib.tgw_gemm_mxfp4_bf16(device, { ...bufs, M, N, K });
      const bad = check(bf.decode(await readBuffer(device, bufs.C, M * N * 2)), ref, absref, 'bf16', K);
      if (bad) { ++failures; console.log(`FAIL gemm_mxfp4_bf16 M=${M} N=${N} K=${K} on ${target} (${res.target}): ${bad}`); }
      else console.log(`  gemm_mxfp4_bf16 on ${target}: M=${M} N=${N} K=${K} within the bound`);
      for (const b2 of Object.values(bufs)) b2.destroy();
    }
  }
}

// Unsigned integers (tests/lit/emit/Inputs/unsigned32.yaml): every u8 byte, u16 and u32 words
// with their extremes, zero divisors, run-time counts inside and past 32 (the JS module takes a
// u32 scalar as an i32: -1 reaches the kernel as 0xffffffff), u8/u16 stores packed into words,
// against BigInt modulo 2^32: docs/spec.md "Unsigned integers" (wrap-around, logical >>,
// a / 0 = 0, a % 0 = a; WGSL's own u32 division gives x / 0 = x, x % 0 = 0).
if (!only || only === 'unsigned') {
  const N = 300;
  const b = new Uint8Array(N), h = new Uint16Array(N), w = new Uint32Array(N), d = new Uint32Array(N),
        f = new Float32Array(N);
  for (let j = 0; j < N; ++j) {
    b[j] = j % 256; h[j] = (rand() * 65536) >>> 0; w[j] = (rand() * 2 ** 32) >>> 0;
    d[j] = j % 5 === 0 ? 0 : ((rand() * 2 ** 32) >>> 0) >>> (j % 29); f[j] = j * 1234.567;
  }
  h.set([0, 65535, 256]); w.set([0, 0xffffffff, 0x80000000, 0x12345678, 7]); d.set([5, 1, 0xffffffff, 16, 0xffffffff]);
  const M = 2n ** 32n, m = (x) => ((x % M) + M) % M;
  for (const S of [4, 33, -1]) {
    const s = BigInt(S >>> 0);
    const want = [], care = [];
    for (let j = 0; j < N; ++j) {
      const B = BigInt(b[j]), H = BigInt(h[j]), W = BigInt(w[j]), D = BigInt(d[j]);
      const fw = f32FromBits(w[j]), sum = Math.fround(fw + Math.fround(d[j]));
      // bitcast<f32>(W) + f32(D): WGSL may flush subnormals and assume no inf/NaN
      const finite = Number.isFinite(fw) && (fw === 0 || Math.abs(fw) >= 2 ** -126) && Number.isFinite(sum);
      const i8 = B >= 128n ? B - 256n : B;
      want.push(m(B + H * 3n - W), (s >= 32n ? 0n : W >> s) | m(W << 4n),
                m((D === 0n ? 0n : W / D) + (D === 0n ? W : W % D)), W / 16n + W % 16n,
                W > D ? m(~W) : m(-D), m(BigInt(Math.trunc(f[j])) + BigInt(f32Bits(f[j]))),
                m(m(i8) + BigInt(f32Bits(sum))), (B >> 4n) | ((B & 15n) << 8n));
      care.push(true, true, true, true, true, true, finite, true);
    }
    for (const [target, device] of devices) {
      ++cases;
      const bufs = { B: makeBuffer(device, b), H: makeBuffer(device, new Uint8Array(h.buffer)),
                     W: makeBuffer(device, new Uint8Array(w.buffer)), D: makeBuffer(device, new Uint8Array(d.buffer)),
                     F: makeBuffer(device, new Uint8Array(f.buffer)), O: makeBuffer(device, new Uint8Array(4 * 8 * N)),
                     B8: makeBuffer(device, new Uint8Array(N)), H16: makeBuffer(device, new Uint8Array(2 * N)) };
      const res = await lib.tgw_unsigned32(device, { ...bufs, N, S });
      const got = new Uint32Array((await readBuffer(device, bufs.O, 4 * 8 * N)).buffer);
      const b8 = new Uint8Array((await readBuffer(device, bufs.B8, N)).buffer);
      const h16 = new Uint16Array((await readBuffer(device, bufs.H16, 2 * N)).buffer);
      const bad = [];
      for (let i = 0; i < 8 * N && bad.length < 5; ++i)
        if (care[i] && BigInt(got[i]) !== want[i]) bad.push(`S=${S} j=${Math.floor(i / 8)} column ${i % 8}: ${got[i]}, want ${want[i]}`);
      for (let j = 0; j < N && bad.length < 5; ++j) {
        if (b8[j] !== ((2 * b[j]) & 255)) bad.push(`B8[${j}] = ${b8[j]}`);
        if (h16[j] !== ((Number((BigInt(h[j]) * BigInt(h[j])) & 0xffffn) + 1) & 0xffff)) bad.push(`H16[${j}] = ${h16[j]}`);
      }
      if (bad.length) { ++failures; console.log(`FAIL unsigned on ${target} (${res.target}): ${bad.join('; ')}`); }
      else console.log(`  unsigned on ${target}: S=${S}, ${N} elements x 8 columns, B8 and H16 as defined`);
      for (const x of Object.values(bufs)) x.destroy();
    }
  }
}

// Argument checks of the generated module (each must throw a TilegenError with this status).
const [, core] = devices[0];
const small = makeBuffer(core, new Uint8Array(16));
const big = makeBuffer(core, new Uint8Array(4 * 300000));
const checks = [
  ['buffer too small', () => lib.tgw_gemm_f32(core, { A: small, B: small, C: small, M: 3, N: 3, K: 3 }), 'invalid-argument'],
  ['D not in its value set', () => lib.tgw_flash_attention_fwd_f32(core, { Q: big, K: big, V: big, O: big, B: 1, H: 1, S: 4, D: 96, sm_scale: 1 }), 'unsupported-shape'],
  ['scalar require (sm_scale > 0)', () => lib.tgw_flash_attention_fwd_f32(core, { Q: big, K: big, V: big, O: makeBuffer(core, new Uint8Array(1024)), B: 1, H: 1, S: 4, D: 64, sm_scale: -0.5 }), 'invalid-argument', 'sm_scale = -0.5, but the kernel requires sm_scale > 0'],
  ['f32 scalar that rounds to 0', () => lib.tgw_flash_attention_fwd_f32(core, { Q: big, K: big, V: big, O: makeBuffer(core, new Uint8Array(1024)), B: 1, H: 1, S: 4, D: 64, sm_scale: 1e-50 }), 'invalid-argument', 'sm_scale = 0, but'],
  ['unknown argument', () => lib.tgw_softmax_f32(core, { X: big, Y: small, M: 1, N: 1, Z: 3 }), 'invalid-argument'],
  ['written tensor aliases an input', () => lib.tgw_softmax_f32(core, { X: big, Y: big, M: 1, N: 4 }), 'invalid-argument'],
  ['non-integer dim', () => lib.tgw_softmax_f32(core, { X: big, Y: small, M: 1.5, N: 1 }), 'invalid-argument'],
  ['missing scalar', () => lib.tgw_rmsnorm_f32(core, { X: big, W: big, Y: small, M: 1, N: 1 }), 'invalid-argument'],
  ['not a device', () => lib.tgw_gemm_f32({}, { A: big, B: big, C: small, M: 1, N: 1, K: 1 }), 'invalid-argument'],
];
for (const [what, call, status, says] of !only || only === 'api' ? checks : []) {
  ++cases;
  try {
    await call();
    ++failures;
    console.log(`FAIL argument check '${what}': no error`);
  } catch (e) {
    if (e.name !== 'TilegenError' || e.status !== status || (says && !e.message.includes(says))) {
      ++failures;
      console.log(`FAIL argument check '${what}': ${e.name} ${e.status}: ${e.message}`);
    }
  }
}
// Grids over the device's maxComputeWorkgroupsPerDimension run folded: the module dispatches
// [x, y, z] workgroups of the pipeline with the override tg_folded, each numbering itself x
// fastest and decoding the grid's (bx, by, bz). SwiftShader would take many minutes over the
// real limit's 65536 workgroups, so the device is seen through a proxy that reports a limit of
// 7: softmax over 37 rows (x: 19 workgroups of 2 rows) and attention over 2 batches of 9 heads
// (y and z: 1 x 9 x 2) are checked against float64 references. A call whose written tensors
// are empty returns without dispatching, whatever its grid (M = 2^31 - 1 rows of nothing:
// 2^30 workgroups). Before, each was an 'unsupported-shape' error.
function limitedTo(device, lim) {
  const limits = new Proxy(device.limits, {
    get: (t, k) => (k === 'maxComputeWorkgroupsPerDimension' ? lim : t[k]),
  });
  return new Proxy(device, {
    get: (t, k) => (k === 'limits' ? limits : typeof t[k] === 'function' ? t[k].bind(t) : t[k]),
  });
}
async function foldCase(what, run) {
  ++cases;
  try {
    await run();
  } catch (e) {
    ++failures;
    console.log(`FAIL ${what}: ${e.message}`);
  }
}
function expectClose(name, got, want, tol) {
  for (let i = 0; i < want.length; ++i)
    if (!(Math.abs(got[i] - want[i]) <= tol)) throw new Error(`${name}[${i}] = ${got[i]}, want ${want[i]}`);
}
if (!only || only === 'api') {
  const lim = 7;
  const small7 = limitedTo(core, lim);
  const r = rng(12345);
  await foldCase('softmax over 37 rows, 7 workgroups per dimension (x folded)', async () => {
    const M = 37, N = 5;
    const x = Float32Array.from({ length: M * N }, () => r() * 8 - 4);
    const X = makeBuffer(core, new Uint8Array(x.buffer)), Y = makeBuffer(core, new Uint8Array(4 * M * N));
    const res = await lib.tgw_softmax_f32(small7, { X, Y, M, N });
    if (!res.dispatched || !res.folded || res.workgroups.some((g) => g > lim))
      throw new Error(`not dispatched folded within ${lim}: ${JSON.stringify(res)}`);
    const y = new Float32Array((await readBuffer(core, Y, 4 * M * N)).buffer);
    const want = [];
    for (let i = 0; i < M; ++i) {
      const row = Array.from(x.subarray(i * N, i * N + N));
      const m = Math.max(...row), e = row.map((v) => Math.exp(v - m)), s = e.reduce((a, v) => a + v, 0);
      want.push(...e.map((v) => v / s));
    }
    expectClose('Y', y, want, 1e-6);
    console.log(`  softmax M=${M} N=${N}, limit ${lim}: folded into ${res.workgroups.join(' x ')} workgroups`);
    X.destroy();
    Y.destroy();
  });
  await foldCase('attention over 2 x 9 heads, 7 workgroups per dimension (y, z folded)', async () => {
    const B = 2, H = 9, S = 3, D = 64, scale = 0.125, n = B * H * S * D;
    const mk = () => Float32Array.from({ length: n }, () => r() * 2 - 1);
    const q = mk(), k = mk(), v = mk();
    const Q = makeBuffer(core, new Uint8Array(q.buffer)), K = makeBuffer(core, new Uint8Array(k.buffer));
    const V = makeBuffer(core, new Uint8Array(v.buffer)), O = makeBuffer(core, new Uint8Array(4 * n));
    const res = await lib.tgw_flash_attention_fwd_f32(small7, { Q, K, V, O, B, H, S, D, sm_scale: scale });
    if (!res.dispatched || !res.folded || res.workgroups.some((g) => g > lim))
      throw new Error(`not dispatched folded within ${lim}: ${JSON.stringify(res)}`);
    const o = new Float32Array((await readBuffer(core, O, 4 * n)).buffer);
    const want = new Float64Array(n);
    for (let bh = 0; bh < B * H; ++bh)
      for (let i = 0; i < S; ++i) {
        const base = bh * S * D, s = [];
        for (let j = 0; j < S; ++j) {
          let dot = 0;
          for (let d = 0; d < D; ++d) dot += q[base + i * D + d] * k[base + j * D + d];
          s.push(dot * scale);
        }
        const m = Math.max(...s), e = s.map((x) => Math.exp(x - m)), sum = e.reduce((a, x) => a + x, 0);
        for (let d = 0; d < D; ++d) {
          let acc = 0;
          for (let j = 0; j < S; ++j) acc += e[j] * v[base + j * D + d];
          want[base + i * D + d] = acc / sum;
        }
      }
    expectClose('O', o, want, 1e-5);
    console.log(`  attention B=${B} H=${H} S=${S}, limit ${lim}: folded into ${res.workgroups.join(' x ')} workgroups`);
    for (const b of [Q, K, V, O]) b.destroy();
  });
  await foldCase('softmax over 2^31 - 1 empty rows (nothing to do)', async () => {
    const res = await lib.tgw_softmax_f32(core, { X: small, Y: makeBuffer(core, new Uint8Array(4)), M: 2147483647, N: 0 });
    if (res.dispatched) throw new Error(`dispatched: ${JSON.stringify(res)}`);
  });
}

// Which reduction path the wgsl_subgroups variants take on this adapter: the shuffles when
// subgroups are consecutive lanes (the check every such variant makes at entry), else the tree.
if ((!only || only === 'api') && devices.length > 1) {
  const [, sg] = devices[1];
  const code = `enable subgroups;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
var<workgroup> tg_sg_bad: atomic<u32>;
var<workgroup> tg_sg_mode: u32;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tg_lid: u32, @builtin(subgroup_size) tg_sg_size: u32,
        @builtin(subgroup_invocation_id) tg_sg_lane: u32) {
  let tg_sg_base = subgroupShuffle(tg_lid, 0u);
  if (tg_sg_lane != tg_lid % tg_sg_size || tg_sg_base != tg_lid - tg_sg_lane) { atomicOr(&tg_sg_bad, 1u); }
  workgroupBarrier();
  if (tg_lid == 0u) { tg_sg_mode = atomicLoad(&tg_sg_bad); }
  let tg_sg_fast = workgroupUniformLoad(&tg_sg_mode) == 0u;
  if (tg_lid == 0u) { out[0] = select(0u, 1u, tg_sg_fast); out[1] = tg_sg_size; }
}`;
  const pipe = await sg.createComputePipelineAsync({ layout: 'auto', compute: { module: sg.createShaderModule({ code }), entryPoint: 'main' } });
  const buf = makeBuffer(sg, new Uint8Array(8));
  const enc = sg.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipe);
  pass.setBindGroup(0, sg.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  sg.queue.submit([enc.finish()]);
  const r = new Uint32Array((await readBuffer(sg, buf, 8)).buffer);
  console.log(`wgsl_subgroups reductions on this adapter: ${r[0] ? 'subgroup shuffles' : 'workgroup tree (subgroups not consecutive lanes)'}, subgroup size ${r[1]}`);
}
console.log(`${cases - failures} of ${cases} checks passed`);
process.exit(failures || process.exitCode ? 1 : 0);
