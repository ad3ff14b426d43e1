# per class of each tune report: the baseline (pinned) time against the rule's first choice
# and against the fastest of the ranked ones, per shape (ratios > 1: faster than pinned)
import json, sys, glob, math
for f in sorted(glob.glob(sys.argv[1] + '/*.json')):
    if f.endswith('db.json'): continue
    r = json.load(open(f))
    for c in r['classes']:
        cands = c['candidates']
        base = [x for x in cands if x.get('baseline') and x['status'] == 'ok']
        ranked = [x for x in cands if x['rank'] is not None]
        ok = [x for x in ranked if x['status'] == 'ok']
        rej = len(ranked) - len(ok)
        head = '%s %s %s' % (c['kernel'], c['instance'], c['class'])
        if not base or not ok:
            print(head, 'no baseline or no candidate ok', [x.get('reason', '')[:100] for x in cands if x['status'] != 'ok'][:2]); continue
        b = base[0]; first = ranked[0]
        for s in c['shapes']:
            bt = b['median_us'][s]
            best = min(ok, key=lambda x: x['median_us'][s])
            ch = [x for x in ok if x['config'] == c['chosen']]
            ft = first['median_us'][s] if first['status'] == 'ok' else float('nan')
            print('%-44s %-22s base %9.2f us | rule#1 %.3fx | chosen %.3fx | best %.3fx (%s) | rej %d' % (
                head, s, bt, bt / ft, bt / ch[0]['median_us'][s] if ch else float('nan'), bt / best['median_us'][s], best['config'], rej))
        print('   first:', first['config'], first['status'], '| chosen:', c['chosen'], '| base:', b['config'])
