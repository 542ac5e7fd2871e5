# Seed 004's Figs. 3-6 with map tasks of 10 s (the default, chosen; runs of
# ../nbs-edf-2026-11-30/) and of 15 s (calibrated on Fig. 4's Equal, this folder), ours beside
# the paper's, and the per-run counts of every ordering the paper's numbers make.
# Usage, in this folder: python3 counts.py > counts.md
import pandas as pd

POL = ['nbs', 'equal-share', 'random-share', 'edf']
PAPER = {'Fig. 3': [-0.367, 26.84, 16.77, 12.177], 'Fig. 4': [-6.85, 8.45, 13.77, 6.128],
         'Fig. 5': [-20.72, 2.665, 8.405, -4.2], 'Fig. 6': [-62.8, -47.1, -48.9, -51.2]}


def load(t):
    if t == 10:
        base = '../nbs-edf-2026-11-30/'
        return {e: pd.read_parquet(f'{base}{e}/results.parquet') for e in ['nbs-hard', 'nbs-priority', 'nbs-jobs']}
    return {e: pd.read_parquet(f'{e}-{t}/results.parquet') for e in ['nbs-hard', 'nbs-priority', 'nbs-jobs']}


def figs(d):
    jb = d['nbs-jobs']
    return [
        ('Fig. 3', d['nbs-hard'], lambda x: x.deadline_hard == True, ['seed'], 'worst'),
        ('Fig. 4', d['nbs-priority'], lambda x: x.priority >= 100, ['seed'], 'worst'),
        ('Fig. 5', jb[jb.scenario == 'nbs-hadoop'], lambda x: x.deadline_hard == True, ['seed', 'jobs'], 'mean'),
        ('Fig. 6', jb[jb.scenario == 'nbs-priority-random'], lambda x: x.priority > 50, ['seed', 'jobs'], 'mean'),
    ]


def totals(df, keep, unit):
    return df[keep(df)].groupby(unit + ['policy']).latency_s.sum().unstack('policy')


data = {t: load(t) for t in [10, 15]}
print('## The figures\' values (s): ours with 10 s and 15 s map tasks, the paper\'s\n')
print('Figs. 3-4: the worst latency over 20 seeds (the paper: its one set of jobs); Figs. 5-6: the mean over the runs (20 seeds x 2-10 jobs) of the summed latency. Fig. 4\'s Equal with 15 s is the calibration (8.45 s), every other cell a prediction.\n')
print('| figure | policy | 10 s | 15 s | paper |')
print('|---|---|---:|---:|---:|')
for k, name in enumerate(['Fig. 3', 'Fig. 4', 'Fig. 5', 'Fig. 6']):
    for j, p in enumerate(POL):
        cells = []
        for t in [10, 15]:
            _, df, keep, unit, how = figs(data[t])[k]
            if how == 'worst':
                v = df[(df.policy == p) & keep(df)].latency_s.max()
            else:
                v = totals(df, keep, unit)[p].mean()
            cells.append(f'{v:.2f}')
        print(f'| {name} | {p} | {cells[0]} | {cells[1]} | {PAPER[name][j]} |')

print('\n## Per run: the orderings the paper\'s numbers make\n')
print('"a of n": runs where the first policy\'s summed latency is strictly below the second\'s. The paper\'s order in each figure is by its values above.\n')
print('| figure | paper\'s order | pair | 10 s | 15 s |')
print('|---|---|---|---:|---:|')
for k, name in enumerate(['Fig. 3', 'Fig. 4', 'Fig. 5', 'Fig. 6']):
    order = [p for _, p in sorted(zip(PAPER[name], POL))]
    pairs = [(order[a], order[b]) for a in range(4) for b in range(a + 1, 4)]
    for first, second in pairs:
        cells = []
        for t in [10, 15]:
            _, df, keep, unit, _ = figs(data[t])[k]
            tt = totals(df, keep, unit)
            cells.append(f"{int((tt[first] < tt[second]).sum())} of {len(tt)}")
        print(f"| {name} | {' < '.join(order)} | {first} < {second} | {cells[0]} | {cells[1]} |")

print('\n## Hard deadlines missed (Figs. 3 / 5) and the batch\'s end (Fig. 3, mean of the seeds)\n')
print('| policy | 10 s: missed | 10 s: batch ends (s) | 15 s: missed | 15 s: batch ends (s) |')
print('|---|---:|---:|---:|---:|')
for p in POL + ['nbs-rate-cap']:
    cells = []
    for t in [10, 15]:
        d = data[t]
        hd, jb = d['nbs-hard'], d['nbs-jobs']
        f5 = jb[jb.scenario == 'nbs-hadoop']
        late = lambda x: int(((x.policy == p) & (x.deadline_hard == True) & ((x.latency_s > 0) | x.latency_s.isna())).sum())
        ms = hd[hd.policy == p].groupby('seed').makespan_s.max().mean()
        cells += [f'{late(hd)} / {late(f5)}', f'{ms:.1f}']
    print(f'| {p} | ' + ' | '.join(cells) + ' |')
