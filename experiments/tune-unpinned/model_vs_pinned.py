# Offline check of the recommender against tune reports measured on the device (issue #37):
# per kernel instance and class, the model's first choice (`tilegen tune --list --top N` of the
# unpinned spec, with the tilegen binary given) against the pinned baseline, at every shape the
# report timed. A first choice the report did not time is shown as `untimed` with its rank
# among the timed ones unknown; `--top N` also shows where the fastest timed one ranks.
# Usage: python3 model_vs_pinned.py TILEGEN UNPINNED_DIR REPORT_DIR [N]
import glob, json, os, re, subprocess, sys
tg, udir, rdir = sys.argv[1], sys.argv[2], sys.argv[3]
top = int(sys.argv[4]) if len(sys.argv) > 4 else 1
FILLS = {'decode_attention': ['seq_lens=MP * PAGE', 'block_table=(i0 * MP + i1) * 7919 % NP'],
         'mla_decode': ['seq_lens=MP * PAGE', 'block_table=(i0 * MP + i1) * 7919 % NP'],
         'grouped_gemm': ['offs=M * (i0 + 1) * (i0 + 2) / (E * (E + 1))']}
def key(cfg):  # "BM=16 BN=32 ..." or {"BM": 16, ...} -> canonical text
    if isinstance(cfg, dict):
        return ' '.join('%s=%s' % kv for kv in sorted(cfg.items()))
    return ' '.join(sorted(cfg.split()))
rows = worst = 0
misses = []
for f in sorted(glob.glob(os.path.join(rdir, '*.json'))):
    if f.endswith('db.json'):
        continue
    rep = json.load(open(f))
    for c in rep['classes']:
        kernel, inst, cls = c['kernel'], c['instance'], c['class']
        args = [tg, 'tune', '--target', rep.get('target', 'sm_90a'), '--instance', inst, '--class', cls,
                '--top', str(max(top, 1)), '--list']
        for fl in FILLS.get(kernel, []):
            args += ['--fill', fl]
        out = subprocess.run(args + [os.path.join(udir, kernel + '.yaml')], capture_output=True, text=True).stdout
        ranked = [key(m) for m in re.findall(r'^\s+\d+\. (.*?)\s*(?:\(baseline\))?$', out, re.M)]
        ok = {key(x['config']): x for x in c['candidates'] if x['status'] == 'ok'}
        base = [x for x in c['candidates'] if x.get('baseline') and x['status'] == 'ok']
        if not base or not ranked:
            print('%s %s %s: no baseline or no ranking' % (kernel, inst, cls)); continue
        b = base[0]; first = ranked[0]
        for s in c['shapes']:
            rows += 1
            bt = b['median_us'][s]
            fastest = min(ok.values(), key=lambda x: x['median_us'][s])
            fr = key(fastest['config'])
            where = ranked.index(fr) + 1 if fr in ranked else None
            if first in ok:
                ratio = bt / ok[first]['median_us'][s]
                txt = '%.3fx' % ratio
                if ratio < 0.9: misses.append((kernel, inst, cls, s, ratio))
            else:
                txt = 'untimed'; misses.append((kernel, inst, cls, s, None))
            print('%-20s %-18s %-12s %-28s model#1 %-8s fastest %.3fx (model rank %s) | #1 %s' % (
                kernel, inst, cls, s, txt, bt / fastest['median_us'][s], where, first))
print('%d rows; below 0.9x or untimed: %d' % (rows, len(misses)))
