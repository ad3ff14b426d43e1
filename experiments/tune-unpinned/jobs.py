# writes build-exp/tune1/jobs.sh: tune runs on sm_90a of the unpinned specs with the pinned
# choice as baseline (experiment for issue #37)
import subprocess, re, sys
TG = '/work/main/build/generator/tools/tilegen'
TOP = int(sys.argv[1]) if len(sys.argv) > 1 else 6
# optional second argument: 37 (the kernels of issue #37's table) or 34 (issue #34's); both if absent
GROUP = sys.argv[2] if len(sys.argv) > 2 else None
K34 = ('decode_attention', 'mla_decode', 'gemm_w4a16', 'gemm_mxfp4', 'grouped_gemm')
# kernels ranked deeper than TOP (issue #34's slowest bars: more of their space is timed)
TOPS = {'mla_decode': 24, 'decode_attention': 16, 'softmax': 4, 'rmsnorm': 4}
jobs = [
 # issue #34's kernels first (index tensors take --fill values; see FILLS)
 ('decode_attention', 'bf16_PAGE16_D128', None, ['32,8,8,16384,512', '1,8,8,8192,8192'], {'sm_scale':'0.088388'}),
 ('mla_decode', 'bf16_PAGE64_DL512_DR64', None, [], {'sm_scale':'0.072169'}),
 ('gemm_w4a16', 'bf16', None, ['1,8192,8192,128,0', '16,8192,8192,128,0', '128,8192,8192,128,0'], {}),
 ('gemm_mxfp4', 'bf16', None, ['1,8192,8192', '16,8192,8192'], {}),
 ('gemm', 'bf16', None, ['1,8192,8192','8,28672,4096','32,8192,8192','1,4096,14336','16,4096,4096','64,8192,8192','64,32001,4096','128,4096,4096','256,256,65536','256,4096,4096','1000,4300,2048','4096,4096,512','8192,8192,8192'], {}),
 ('gemm', 'f16', ['large'], [], {}),
 ('gemm', 'f32', ['large'], ['2048,2048,2048'], {}),
 ('gemm_bias_gelu', 'bf16', ['large','gemv'], ['16,8192,8192','1000,4300,2048'], {}),
 ('gemm_fp8', 'e4m3', None, ['8192,8192,8192','16,8192,8192','64,8192,8192'], {'scale_a':'0.5','scale_b':'0.25'}),
 ('flash_attention_fwd', 'bf16_causal0_D128', None, ['1,2,4096'], {'sm_scale':'0.088388'}),
 ('flash_attention_fwd', 'bf16_causal1_D128', None, [], {'sm_scale':'0.088388'}),
 ('flash_attention_fwd', 'f16_causal0_D128', None, [], {'sm_scale':'0.088388'}),
 ('flash_attention_fwd', 'bf16_causal0_D64', None, ['8,16,2048'], {'sm_scale':'0.125'}),
 ('softmax', 'bf16', ['row'], ['16384,8192'], {}),
 ('softmax', 'f32', ['row'], ['8192,8192'], {}),
 ('rmsnorm', 'bf16', ['row'], ['16384,8192'], {}),
 ('rmsnorm', 'f32', ['row'], ['8192,8192'], {}),
 # last: its two bench shapes cost the portable C reference about 2 TFLOP each
 ('grouped_gemm', 'bf16', None, ['16384,14336,4096,8', '16384,14336,4096,64'], {}),
]
# The values of index tensors (tilegen tune --fill, docs/tune.md): full sequences whose pages
# are spread over the cache, and uneven expert row ranges.
PAGED = ['seq_lens=MP * PAGE', 'block_table=(i0 * MP + i1) * 7919 % NP']
FILLS = {'decode_attention': PAGED, 'mla_decode': PAGED,
         'grouped_gemm': ['offs=M * (i0 + 1) * (i0 + 2) / (E * (E + 1))']}
def fill_args(spec):
    return [a for f in FILLS.get(spec, []) for a in ('--fill', f)]
def dims(spec, name):
    out = subprocess.run([TG, 'tune', '--target', 'sm_90a', '--list', '--top', '1'] + fill_args(name) + [spec], capture_output=True, text=True).stdout
    m = re.search(r'shapes: (.*)', out)
    return [kv.split('=')[0] for kv in m.group(1).split(';')[0].split()]
lines = ['set -u', 'TG=${TG:-$PWD/build-exp/tune1/tilegen}', 'U=$PWD/build-exp/tune1/u', 'R=${OUT:-/tmp}/tune1', 'mkdir -p $R']
for spec, inst, classes, shapes, scalars in jobs:
    if GROUP and (spec in K34) != (GROUP == '34'): continue
    rec = subprocess.run([TG, 'dump', '--stage=recommend', '--target=sm_90a', '--instance=' + inst, 'orig/%s.yaml' % spec], capture_output=True, text=True).stdout
    cls = None; base = []
    for l in rec.split('\n'):
        m = re.match(r'^class (\w+)', l)
        if m: cls = m.group(1)
        m = re.match(r'^chosen: (.*)', l)
        if m and (classes is None or cls in classes):
            base.append('--baseline %s:%s' % (cls, m.group(1).strip().replace(' ', ',')))
    d = dims('u/%s.yaml' % spec, spec)
    fl = ' '.join("--fill '%s'" % f for f in FILLS.get(spec, [])).replace('%', '%%')
    sh = ' '.join('--shape ' + ','.join('%s=%s' % (a, b) for a, b in zip(d, s.split(','))) for s in shapes)
    cl = ' '.join('--class ' + c for c in classes) if classes else ''
    sc = ' '.join('--scalar %s=%s' % kv for kv in scalars.items())
    name = '%s_%s' % (spec, inst)
    lines.append('echo "== %s $(date +%%T)"' % name)
    lines.append(('$TG tune --target sm_90a --instance %s %s --top %d %s %s %s ' + fl + ' --runs 10 --margin 2 --keep-baseline -j 16 --runtime $PWD/runtime --db $R/db.json --report $R/%s.json --work /tmp/tw_%s $U/%s.yaml > $R/%s.txt 2> $R/%s.err; echo "rc=$? $(tail -1 $R/%s.txt)"') % (inst, cl, TOPS.get(spec, TOP), ' '.join(base), sh, sc, name, name, spec, name, name, name))
open('/work/main/build-exp/tune1/jobs.sh', 'w').write('\n'.join(lines) + '\n')
