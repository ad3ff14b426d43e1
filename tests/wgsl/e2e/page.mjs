// The page half of the e2e test: inputs come from /inputs.json (fresh random values chosen
// by e2e.mjs), results go to the console as `TGW <name> <json>` lines, then a POST to /done.
import * as tgw from './tgw.js';

const log = (line) => {
  console.log(`TGW ${line}`);
  document.getElementById('out').textContent += `\n${line}`;
};

async function run(device, fn, args, inputs, outputs) {
  const bufs = {};
  for (const [name, data] of Object.entries(inputs)) {
    const bytes = Float32Array.from(data);
    bufs[name] = device.createBuffer({ size: Math.max(4, bytes.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(bufs[name], 0, bytes);
  }
  for (const [name, count] of Object.entries(outputs))
    bufs[name] = device.createBuffer({ size: Math.max(4, count * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const res = await tgw[fn](device, { ...args, ...bufs });
  const out = {};
  for (const [name, count] of Object.entries(outputs)) {
    const staging = device.createBuffer({ size: Math.max(4, count * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(bufs[name], 0, staging, 0, staging.size);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    out[name] = Array.from(new Float32Array(staging.getMappedRange()).slice(0, count));
    staging.unmap();
  }
  return { res, out };
}

try {
  if (!navigator.gpu) throw new Error('navigator.gpu is missing (WebGPU disabled)');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  const info = adapter.info ?? {};
  log(`adapter ${JSON.stringify({ vendor: info.vendor, architecture: info.architecture, description: info.description })}`);
  const device = await adapter.requestDevice();
  const inp = await (await fetch('./inputs.json')).json();
  const g = inp.gemm;
  const gemm = await run(device, 'tgw_gemm_f32', { M: g.M, N: g.N, K: g.K }, { A: g.A, B: g.B }, { C: g.M * g.N });
  log(`gemm ${JSON.stringify({ target: gemm.res.target, C: gemm.out.C })}`);
  const s = inp.softmax;
  const sm = await run(device, 'tgw_softmax_f32', { M: s.M, N: s.N }, { X: s.X }, { Y: s.M * s.N });
  log(`softmax ${JSON.stringify({ target: sm.res.target, Y: sm.out.Y })}`);
  log('done');
} catch (e) {
  log(`error ${e && e.message ? e.message : e}`);
}
await fetch('./done', { method: 'POST', body: 'done' }).catch(() => {});
