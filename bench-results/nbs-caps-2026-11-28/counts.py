# Per-seed win counts for seed 004's orderings, NBS as written and with each option, from one
# run of each experiment (all seven controllers in each results.parquet). Usage, in this folder:
# python3 counts.py
import pandas as pd
OTHERS = ['equal-share', 'random-share', 'edf']
MODELS = ['nbs', 'nbs-rate-cap', 'nbs-both-caps', 'nbs-both-caps-tiebreak']
def wins(df, nbs, keep, unit):
    d = df[keep(df)].groupby(unit + ['policy']).latency_s.sum().unstack('policy')
    return ' / '.join(f"{int((d[nbs] < d[o]).sum())} of {len(d)}" for o in OTHERS), f"{d[nbs].mean():.1f}"
pr = pd.read_parquet('nbs-priority/results.parquet')
jb = pd.read_parquet('nbs-jobs/results.parquet')
hd = pd.read_parquet('nbs-hard/results.parquet')
print('| NBS | Fig. 3 hard (per seed) | Fig. 4 priority >= 100 (per seed) | Fig. 5 hard (seed x jobs) | Fig. 6 priority > 50 (seed x jobs) | hard deadlines missed (Figs. 3, 5) | mean makespan, Fig. 3 (s) |')
print('|---|---|---|---|---|---:|---:|')
for m in MODELS:
    f3 = wins(hd, m, lambda d: d.deadline_hard == True, ['seed'])
    f4 = wins(pr, m, lambda d: d.priority >= 100, ['seed'])
    f5 = wins(jb[jb.scenario == 'nbs-hadoop'], m, lambda d: d.deadline_hard == True, ['seed', 'jobs'])
    f6 = wins(jb[jb.scenario == 'nbs-priority-random'], m, lambda d: d.priority > 50, ['seed', 'jobs'])
    missed = lambda d: int(((d.policy == m) & (d.deadline_hard == True) & ((d.latency_s > 0) | d.latency_s.isna())).sum())
    ms = hd[hd.policy == m].groupby('seed').makespan_s.max().mean()
    print(f'| {m} | {f3[0]} | {f4[0]} | {f5[0]} | {f6[0]} | {missed(hd)}, {missed(jb[jb.scenario == "nbs-hadoop"])} | {ms:.1f} |')
base = ' / '.join(f"{hd[hd.policy == o].groupby('seed').makespan_s.max().mean():.1f}" for o in OTHERS)
print(f'\nBaselines\' mean makespan, Fig. 3 (equal / random / edf): {base} s')
