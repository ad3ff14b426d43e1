// Compiled (not run) by spec_text.sh wgsl: the .d.ts generated from hostile.yaml at a hostile
// path type-checks under tsc --strict and declares the kernel's function with its arguments.
import { tgw_hostile, TilegenError } from './spec_text_gen/tgw.js';
import type { TilegenDispatch } from './spec_text_gen/tgw.js';

declare const device: GPUDevice;
declare const buf: GPUBuffer;

export async function use(): Promise<number> {
  const r: TilegenDispatch = await tgw_hostile(device, { X: buf, Y: buf, M: 4, alpha: 0.5 });
  // @ts-expect-error alpha is missing
  await tgw_hostile(device, { X: buf, Y: buf, M: 4 });
  void TilegenError;
  return r.dispatched ? 1 : 0;
}
