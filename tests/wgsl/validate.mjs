// WGSL validation: every generated .wgsl file of the test library is compiled by Tint (through
// Dawn for Node) and made into a compute pipeline with the bindings the manifest declares.
// Dawn's Null backend is used: it has every feature (shader-f16 and subgroups included, which
// SwiftShader lacks or may lack), validates fully, and runs nothing.
//   node validate.mjs <generated dir>
import fs from 'node:fs';
import path from 'node:path';
import { getAdapter } from './common.mjs';

const dir = process.argv[2];
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'tgw.wgsl.json'), 'utf8'));
const adapter = await getAdapter('null');
if (!adapter) {
  console.log('SKIP: Dawn has no Null backend adapter');
  process.exit(77);
}
const device = await adapter.requestDevice({ requiredFeatures: ['shader-f16', 'subgroups'].filter((f) => adapter.features.has(f)) });
let checked = 0, bad = 0;
const files = new Set(fs.readdirSync(dir).filter((f) => f.endsWith('.wgsl')));
for (const fn of manifest.functions) {
  for (const v of fn.variants) {
    files.delete(v.file);
    const code = fs.readFileSync(path.join(dir, v.file), 'utf8');
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: v.file, code });
    const info = await module.getCompilationInfo();
    const entries = [{ binding: 0, visibility: 4, buffer: { type: 'uniform' } }];
    v.bindings.forEach((type, i) => entries.push({ binding: i + 1, visibility: 4, buffer: { type } }));
    const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries })] });
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
    const wgb = v.workgroup_bytes, lim = device.limits.maxComputeWorkgroupStorageSize;
    if (wgb > 16384) {
      ++bad;
      console.log(`FAIL ${v.file}: ${wgb} B of workgroup memory, over WebGPU's default 16384 (device: ${lim})`);
    }
  }
}
for (const f of files) {
  ++bad;
  console.log(`FAIL ${f}: not in the manifest`);
}
console.log(`${checked - bad} of ${checked} WGSL variants valid (Tint, Dawn Null backend: ${[...device.features].filter((f) => f === 'shader-f16' || f === 'subgroups').join(', ')})`);
process.exit(bad ? 1 : 0);
