# Per-seed win counts for seed 004's orderings, from two runs of each experiment: the seed's
# objective alone (earliness 0, the default) and with the 1e-3 tie-break. Usage:
# python3 counts.py ALONE_DIR TIEBREAK_DIR (each holding nbs-priority/, nbs-jobs/, nbs-hard/).
import sys, pandas as pd
OTHERS = ['equal-share', 'random-share', 'edf']
def wins(df, keep, unit):
    """Per unit (seed, or seed x job count), NBS's total latency over the kept jobs against each
    baseline's: how many units NBS is strictly lower (earlier)."""
    d = df[keep(df)].groupby(unit + ['policy']).latency_s.sum().unstack('policy')
    counts = ' / '.join(f"{int((d['nbs'] < d[o]).sum())} of {len(d)}" for o in OTHERS)
    means = ' / '.join(f"{d[p].mean():.1f}" for p in ['nbs'] + OTHERS)
    return counts, means
out = []
for label, root in [('earliness 0 (seed objective, default)', sys.argv[1]), ('earliness 1e-3 (tie-break)', sys.argv[2])]:
    pr = pd.read_parquet(f'{root}/nbs-priority/results.parquet')
    jb = pd.read_parquet(f'{root}/nbs-jobs/results.parquet')
    hd = pd.read_parquet(f'{root}/nbs-hard/results.parquet')
    f4 = wins(pr, lambda d: d.priority >= 100, ['seed'])
    f6 = wins(jb[jb.scenario == 'nbs-priority-random'], lambda d: d.priority > 50, ['seed', 'jobs'])
    f5 = wins(jb[jb.scenario == 'nbs-hadoop'], lambda d: d.deadline_hard == True, ['seed', 'jobs'])
    f3 = wins(hd, lambda d: d.deadline_hard == True, ['seed'])
    out.append(f'| {label} | Fig. 3 (hard, per seed) | {f3[0]} | {f3[1]} |')
    out.append(f'| {label} | Fig. 4 (priority >= 100, per seed) | {f4[0]} | {f4[1]} |')
    out.append(f'| {label} | Fig. 5 (hard, per seed x job count) | {f5[0]} | {f5[1]} |')
    out.append(f'| {label} | Fig. 6 (priority > 50, per seed x job count) | {f6[0]} | {f6[1]} |')
print('| NBS | figure (unit) | NBS earlier than equal / random / edf | mean total latency, nbs / equal / random / edf (s) |')
print('|---|---|---|---|')
print('\n'.join(out))
