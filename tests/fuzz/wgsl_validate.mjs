// Tint validation of the .wgsl variants of one generated library (the fuzzers' copy of
// tests/wgsl/validate.mjs, for any library name): each variant is compiled by Tint through Dawn
// for Node (Null backend: every feature, validates fully, runs nothing) and made into a compute
// pipeline with the bindings the manifest declares.
//   node wgsl_validate.mjs <generated dir> <lib>.wgsl.json
// Run from a folder whose node_modules holds tests/wgsl's pinned `webgpu` package.
// Exit 0: all valid; 1: invalid variants (listed, "  file:line:col: message"); 77: no adapter.
import fs from 'node:fs';
import path from 'node:path';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);
const [dir, manifestName] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(path.join(dir, manifestName), 'utf8'));
// The instance stays referenced for the whole run: an adapter whose instance was collected
// aborted node (std::system_error from Dawn's threads) before any variant was validated.
const instance = create(['backend=null']);
const adapter = await instance.requestAdapter();
if (!adapter) {
  console.log('SKIP: Dawn has no Null backend adapter');
  process.exit(77);
}
const device = await adapter.requestDevice({
  requiredFeatures: ['shader-f16', 'subgroups'].filter((f) => adapter.features.has(f)),
});
let checked = 0, bad = 0;
for (const fn of manifest.functions) {
  for (const v of fn.variants) {
    const code = fs.readFileSync(path.join(dir, v.file), 'utf8');
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: v.file, code });
    const info = await module.getCompilationInfo();
    const entries = [{ binding: 0, visibility: 4, buffer: { type: 'uniform' } }];
    v.bindings.forEach((type, i) => entries.push({ binding: i + 1, visibility: 4, buffer: { type } }));
    const layout = device.createPipelineLayout({
      bindGroupLayouts: [device.createBindGroupLayout({ entries })],
    });
    let pipeError = '';
    try {
      await device.createComputePipelineAsync({ layout, compute: { module, entryPoint: v.entry_point } });
    } catch (e) {
      pipeError = e.message;
    }
    const err = await device.popErrorScope();
    const msgs = info.messages.filter((m) => m.type === 'error');
    ++checked;
    if (msgs.length || err || pipeError) {
      ++bad;
      console.log(`FAIL ${v.file}`);
      for (const m of msgs.slice(0, 5)) console.log(`  ${v.file}:${m.lineNum}:${m.linePos}: ${m.message}`);
      if (err) console.log(`  ${err.message.split('\n').slice(0, 4).join('\n  ')}`);
      if (pipeError && !err) console.log(`  ${pipeError.split('\n').slice(0, 4).join('\n  ')}`);
    }
  }
}
console.log(`${checked - bad} of ${checked} WGSL variants valid`);
process.exit(bad ? 1 : 0);
