# experiment: unpinned copies of the shipped specs for CUDA targets (sm_*): per-target and
# per-class CUDA candidate lists removed, their values merged into the schedule's lists
import re, sys, yaml, os
src_dir, out_dir = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(src_dir)):
    if not f.endswith('.yaml'): continue
    text = open(os.path.join(src_dir, f)).read()
    y = yaml.safe_load(text)
    sch = y['schedule']
    consts = [k for k in sch if isinstance(sch[k], list) and k not in ('require',)]
    union = {k: set(sch[k]) for k in consts}
    def merge(entry):
        for k, v in entry.items():
            if k in union: union[k] |= set(v)
    for t, e in (sch.get('targets') or {}).items():
        if t.startswith('sm_'): merge(e)
    for c, e in (sch.get('classes') or {}).items():
        if isinstance(e, dict):
            for t, te in (e.get('targets') or {}).items():
                if t.startswith('sm_'): merge(te)
    lines = text.split('\n'); out = []; i = 0; in_sched = False
    while i < len(lines):
        l = lines[i]
        if re.match(r'^schedule:', l): in_sched = True
        elif re.match(r'^\S', l): in_sched = False
        if in_sched:
            m = re.match(r'^  (\w+): \[.*\](.*)$', l)
            if m and m.group(1) in union:
                out.append('  %s: [%s]%s' % (m.group(1), ', '.join(map(str, sorted(union[m.group(1)]))), m.group(2))); i += 1; continue
            if re.match(r'^    sm_\w+:', l): i += 1; continue
            m = re.match(r'^(\s+)targets:\s*$', l)
            if m and len(m.group(1)) >= 6:
                ind = len(m.group(1)); j = i + 1; body = []
                while j < len(lines) and (len(lines[j]) - len(lines[j].lstrip()) > ind or not lines[j].strip()):
                    body.append(lines[j]); j += 1
                kept = [b for b in body if b.strip() and not re.match(r'^\s+sm_\w+:', b) and not b.strip().startswith('#')]
                if not kept: i = j; continue
        out.append(l); i += 1
    s = '\n'.join(out).replace('../schemas/', '/work/main/schemas/')
    open(os.path.join(out_dir, f), 'w').write(s)
