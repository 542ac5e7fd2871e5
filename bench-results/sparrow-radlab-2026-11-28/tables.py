# Tables for bench-results/sparrow-radlab-2026-11-28.md from the experiment outputs and the
# peer's runs (see the bench file for how each was made).
import json, sys, pandas as pd, numpy as np
peer = pd.DataFrame([json.loads(l) for l in open('peer.jsonl')])
peer['x'] = (peer.load * 100).round()
out = []
def p(s=''):
    out.append(s)
for arr in ['poisson', 'even']:
    c = pd.read_parquet(f'exp-{arr}/results.parquet')
    pe = peer[peer.arrivals == arr]
    p(f'### {arr} arrivals: mean / p99 queue time, ms (50 seeds each side; ratio = ours / peer; z = difference over its standard error)')
    p()
    p('| d | load % | peer mean | radlab mean | ratio | z | peer p99 | radlab p99 | ratio | z | base (seed) mean | base p99 |')
    p('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for d in [1, 2, 3, 4]:
        for x in sorted(c.x.unique()):
            q = pe[(pe.probes == d) & (pe.x == x)]
            r = c[(c.configuration == f'radlab-d{d}') & (c.x == x)]
            b = c[(c.configuration == f'base-d{d}') & (c.x == x)]
            cells = []
            for m, pm in [('mean_queue_ms', 'mean_ms'), ('p99_queue_ms', 'p99_ms')]:
                a, bb = r[m], q[pm]
                se = np.sqrt(a.var() / len(a) + bb.var() / len(bb))
                z = (a.mean() - bb.mean()) / se if se > 0 else 0.0
                cells += [f'{bb.mean():.1f}', f'{a.mean():.1f}', f'{a.mean() / bb.mean():.2f}', f'{z:+.1f}']
            p(f'| {d} | {x:.0f} | ' + ' | '.join(cells) + f' | {b.mean_queue_ms.mean():.1f} | {b.p99_queue_ms.mean():.1f} |')
    p()
    # summary of the target
    rows = []
    for d in [1, 2, 3, 4]:
        for x in sorted(c.x.unique()):
            q = pe[(pe.probes == d) & (pe.x == x)]
            r = c[(c.configuration == f'radlab-d{d}') & (c.x == x)]
            for m, pm in [('mean_queue_ms', 'mean_ms'), ('p99_queue_ms', 'p99_ms')]:
                a, bb = r[m], q[pm]
                se = np.sqrt(a.var() / len(a) + bb.var() / len(bb))
                rows.append((d, x, m, a.mean(), bb.mean(), (a.mean() - bb.mean()) / se if se > 0 else 0.0))
    t = pd.DataFrame(rows, columns=['d', 'x', 'm', 'ours', 'peer', 'z'])
    hi, lo = t[t.x >= 50], t[t.x < 50]
    p(f'Target ({arr}): within 10 % at loads >= 50 %: {(abs(hi.ours / hi.peer - 1) <= 0.10).sum()} of {len(hi)} (mean and p99 x d x load); '
      f'within 0.5 ms below 50 %: {(abs(lo.ours - lo.peer) <= 0.5).sum()} of {len(lo)}; |z| < 2 everywhere: {(abs(t.z) < 2).sum()} of {len(t)}.')
    p()
    p(f'Mechanisms one at a time ({arr}, 2 probes; mean / p99 ms):')
    p()
    p('| load % | base-d2 (seed: master binding, ring) | + job binding | + one scheduler | radlab-d2 (both) |')
    p('|---:|---|---|---|---|')
    for x in sorted(c.x.unique()):
        if x < 50:
            continue
        cells = []
        for name in ['base-d2', 'base-d2-job-binding', 'base-d2-one-scheduler', 'radlab-d2']:
            r = c[(c.configuration == name) & (c.x == x)]
            cells.append(f'{r.mean_queue_ms.mean():.1f} / {r.p99_queue_ms.mean():.0f}')
        p(f'| {x:.0f} | ' + ' | '.join(cells) + ' |')
    p()
print('\n'.join(out))
