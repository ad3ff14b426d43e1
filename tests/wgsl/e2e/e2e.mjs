// The e2e test: serves index.html, page.mjs, the generated tgw.js and fresh random inputs on
// localhost, opens the page in headless Chromium with WebGPU enabled (SwiftShader, no GPU
// needed), and checks the GEMM and softmax results the page prints to its console (Chromium's
// --enable-logging=stderr) against float64 references computed here.
//   node e2e.mjs <generated dir> <chromium binary> <profile dir>
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [genDir, chromium, profile] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const rand = () => Math.fround(Math.random() * 2 - 1);
const M = 37, N = 45, K = 29, SM = 5, SN = 1500; // ragged against the 64 x 64 and 4 x 1024 tiles
const inputs = {
  gemm: { M, N, K, A: Array.from({ length: M * K }, rand), B: Array.from({ length: K * N }, rand) },
  softmax: { M: SM, N: SN, X: Array.from({ length: SM * SN }, () => 4 * rand()) },
};
const files = {
  '/': ['text/html', fs.readFileSync(path.join(here, 'index.html'))],
  '/page.mjs': ['text/javascript', fs.readFileSync(path.join(here, 'page.mjs'))],
  '/tgw.js': ['text/javascript', fs.readFileSync(path.join(genDir, 'tgw.js'))],
  '/inputs.json': ['application/json', JSON.stringify(inputs)],
};
let finish;
const done = new Promise((r) => { finish = r; });
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/done') {
    res.end('ok');
    finish('posted');
    return;
  }
  const f = files[req.url.split('?')[0]];
  if (!f) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'Content-Type': f[0], 'Cache-Control': 'no-store' });
  res.end(f[1]);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/`;
fs.rmSync(profile, { recursive: true, force: true });
const args = ['--headless=new', '--no-sandbox', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic', '--disable-dev-shm-usage',
  `--user-data-dir=${profile}`, '--enable-unsafe-webgpu', '--enable-features=Vulkan',
  '--use-webgpu-adapter=swiftshader', '--use-vulkan=swiftshader', '--disable-gpu-sandbox',
  '--enable-logging=stderr', '--v=0', url];
console.log(`${chromium} ${args.join(' ')}`);
const proc = spawn(chromium, args, { stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
proc.stdout.on('data', (d) => { log += d; });
proc.stderr.on('data', (d) => { log += d; });
const timer = setTimeout(() => finish('timeout'), 240000);
const how = await done;
await new Promise((r) => setTimeout(r, 500)); // let the last console lines reach stderr
clearTimeout(timer);
proc.kill('SIGTERM');
server.close();

// Console lines: ...:INFO:CONSOLE(n)] "TGW <name> <json>", source: ...
const lines = {};
for (const m of log.matchAll(/"TGW (\w+) ?(.*)", source:/g)) lines[m[1]] = m[2];
for (const [k, v] of Object.entries(lines)) console.log(`console: TGW ${k} ${v.length > 160 ? `${v.slice(0, 160)}...` : v}`);
let failures = 0;
const fail = (msg) => { ++failures; console.log(`FAIL ${msg}`); };
if (how === 'timeout') fail('the page did not finish within 240 s');
if (lines.error) fail(`the page reported: ${lines.error}`);
if (!lines.gemm || !lines.softmax) {
  fail('no gemm/softmax result in the console output');
  console.log(log.split('\n').filter((l) => !l.includes('Fontconfig')).slice(-30).join('\n'));
} else {
  const g = JSON.parse(lines.gemm), s = JSON.parse(lines.softmax);
  let worst = 0;
  for (let i = 0; i < M; ++i)
    for (let j = 0; j < N; ++j) {
      let ref = 0, mag = 0;
      for (let k = 0; k < K; ++k) {
        ref += inputs.gemm.A[i * K + k] * inputs.gemm.B[k * N + j];
        mag += Math.abs(inputs.gemm.A[i * K + k] * inputs.gemm.B[k * N + j]);
      }
      const err = Math.abs(g.C[i * N + j] - ref) / (mag || 1);
      worst = Math.max(worst, err);
      if (!(err <= 1e-6)) { fail(`gemm C[${i}, ${j}] = ${g.C[i * N + j]}, expected ${ref}`); i = M; break; }
    }
  console.log(`gemm ${M}x${N}x${K} on ${g.target}: max |err| / sum|a*b| = ${worst.toExponential(2)}`);
  worst = 0;
  for (let i = 0; i < SM; ++i) {
    const row = inputs.softmax.X.slice(i * SN, (i + 1) * SN);
    const mx = Math.max(...row);
    const sum = row.reduce((a, x) => a + Math.exp(x - mx), 0);
    for (let j = 0; j < SN; ++j) {
      const ref = Math.exp(row[j] - mx) / sum;
      const err = Math.abs(s.Y[i * SN + j] - ref) / ref;
      worst = Math.max(worst, err);
      if (!(err <= 1e-5)) { fail(`softmax Y[${i}, ${j}] = ${s.Y[i * SN + j]}, expected ${ref}`); i = SM; break; }
    }
  }
  console.log(`softmax ${SM}x${SN} on ${s.target}: max relative error ${worst.toExponential(2)}`);
}
console.log(failures ? `${failures} failure(s)` : 'chromium e2e passed');
process.exit(failures ? 1 : 0);
