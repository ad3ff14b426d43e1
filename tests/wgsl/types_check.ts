// Compiled (not run) by wgsl.types: the generated tgw.d.ts declares every function with its
// arguments, and a wrong call does not type-check.
import { tgw_gemm_f32, tgw_flash_attention_fwd_bf16, tgw_rmsnorm_f16, TilegenError } from './gen/tgw.js';
import type { TilegenDispatch } from './gen/tgw.js';

declare const device: GPUDevice;
declare const buf: GPUBuffer;

export async function use(): Promise<number> {
  const r: TilegenDispatch = await tgw_gemm_f32(device, { A: buf, B: buf, C: buf, M: 1, N: 2, K: 3 });
  await tgw_flash_attention_fwd_bf16(device, { Q: buf, K: buf, V: buf, O: buf, B: 1, H: 1, S: 4, D: 64, sm_scale: 0.125, causal: true });
  await tgw_rmsnorm_f16(device, { X: buf, W: buf, Y: buf, M: 1, N: 1, eps: 1e-5 });
  // @ts-expect-error K is missing
  await tgw_gemm_f32(device, { A: buf, B: buf, C: buf, M: 1, N: 2 });
  // @ts-expect-error a dim is a number, not a string
  await tgw_gemm_f32(device, { A: buf, B: buf, C: buf, M: '1', N: 2, K: 3 });
  try {
    await tgw_gemm_f32(device, { A: buf, B: buf, C: buf, M: 1, N: 2, K: 3 });
  } catch (e) {
    if (e instanceof TilegenError) return e.status === 'no-variant' ? 1 : 2;
  }
  return r.workgroups[0] + (r.dispatched ? 0 : 1);
}
