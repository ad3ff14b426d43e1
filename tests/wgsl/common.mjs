// Shared by the WGSL tests: Dawn (npm `webgpu`) set-up, 16-bit float conversions, buffers.
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);

// Dawn for Node on the Vulkan adapter the environment provides (SwiftShader on CI through
// VK_ICD_FILENAMES), or Dawn's Null backend, which validates shaders (Tint) and runs nothing.
const instances = {};
export async function getAdapter(backend = 'default') {
  instances[backend] ??= create(backend === 'null' ? ['backend=null'] : []);
  return instances[backend].requestAdapter();
}

export const STORAGE = 0x80, COPY_SRC = 0x4, COPY_DST = 0x8, MAP_READ = 0x1;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// f32 -> bf16 / f16 bits, round to nearest even (NaN -> quiet NaN, f16 overflow -> inf).
export function bf16Bits(v) {
  f32[0] = v;
  const x = u32[0];
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}
export function f16Bits(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00;
  if (ax >= 0x477ff000) return sign | 0x7c00;
  if (ax >= 0x38800000) {
    const r = ax - 0x38000000;
    return sign | ((r + 0xfff + ((r >>> 13) & 1)) >>> 13);
  }
  const e = ax >>> 23;
  if (e < 102) return sign;
  const m = (ax & 0x7fffff) | 0x800000;
  const s = 126 - e;
  const q = m >>> s;
  const rem = m & ((1 << s) - 1);
  const half = 1 << (s - 1);
  return sign | (q + (rem > half || (rem === half && (q & 1)) ? 1 : 0));
}
export function bf16Value(h) {
  u32[0] = h << 16;
  return f32[0];
}
export function f16Value(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// OCP FP8 (docs/wgsl.md): e4m3 (bias 7, no inf, S.1111.111 NaN) and e5m2 (bias 15, IEEE-like).
export const FP8 = { e4m3: { mbits: 3, bias: 7 }, e5m2: { mbits: 2, bias: 15 } };
export function fp8Value(code, type) {
  const { mbits, bias } = FP8[type];
  const s = code & 0x80 ? -1 : 1, e = (code & 0x7f) >> mbits, m = code & ((1 << mbits) - 1);
  if (type === 'e4m3' && (code & 0x7f) === 0x7f) return NaN;
  if (type === 'e5m2' && e === 31) return m ? NaN : s * Infinity;
  if (e === 0) return s * m * 2 ** (1 - bias - mbits);
  return s * (1 + m / (1 << mbits)) * 2 ** (e - bias);
}
// The non-negative codes whose values lie in [lo, hi].
export function fp8Codes(type, lo, hi) {
  const out = [];
  for (let c = 0; c < 0x80; ++c) {
    const v = fp8Value(c, type);
    if (v >= lo && v <= hi) out.push(c);
  }
  return out;
}

// f32 -> FP8 code by search (not bit arithmetic): the nearest finite value, ties to the even
// code, everything beyond the largest finite value (infinities too) saturates to it, NaN ->
// S.1111.111 (NaN in both formats).
const fp8Tables = {};
export function fp8Encode(v, type) {
  f32[0] = v;
  const sign = u32[0] >>> 31 ? 0x80 : 0;
  if (Number.isNaN(v)) return sign | 0x7f;
  const t = (fp8Tables[type] ??= fp8Codes(type, 0, Number.MAX_VALUE).map((c) => fp8Value(c, type)));
  const a = Math.abs(f32[0]);
  if (a >= t[t.length - 1]) return sign | (t.length - 1);
  let lo = 0;
  while (t[lo + 1] <= a) ++lo;
  if (t[lo] === a) return sign | lo;
  const mid = (t[lo] + t[lo + 1]) / 2;
  return sign | (a < mid ? lo : a > mid ? lo + 1 : lo % 2 === 0 ? lo : lo + 1);
}
export function f32FromBits(b) { u32[0] = b >>> 0; return f32[0]; }
export function f32Bits(v) { f32[0] = v; return u32[0]; }

export const DTYPES = {
  f32: { bytes: 4, encode: (a) => new Uint8Array(Float32Array.from(a).buffer),
         decode: (b) => Array.from(new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)) },
  f16: { bytes: 2, encode: (a) => new Uint8Array(Uint16Array.from(a, f16Bits).buffer),
         decode: (b) => Array.from(new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2), f16Value) },
  bf16: { bytes: 2, encode: (a) => new Uint8Array(Uint16Array.from(a, bf16Bits).buffer),
          decode: (b) => Array.from(new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2), bf16Value) },
};

// A storage buffer holding `bytes` (padded to whole u32 words, at least 4 B).
export function makeBuffer(device, bytes) {
  const size = Math.max(4, Math.ceil(bytes.byteLength / 4) * 4);
  const buf = device.createBuffer({ size, usage: STORAGE | COPY_SRC | COPY_DST });
  const padded = new Uint8Array(size);
  padded.set(bytes);
  device.queue.writeBuffer(buf, 0, padded);
  return buf;
}

export async function readBuffer(device, buf, byteLength) {
  const staging = device.createBuffer({ size: buf.size, usage: MAP_READ | COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buf, 0, staging, 0, buf.size);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(MAP_READ);
  const out = new Uint8Array(staging.getMappedRange().slice(0, byteLength));
  staging.unmap();
  staging.destroy();
  return out;
}

// A seeded generator (mulberry32), so that a failing run can be repeated with TGW_SEED.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
