# Seed 004's orderings that involve EDF, per seed (Figs. 3-4) and per seed x job count (Figs.
# 5-6), for both readings of its EDF: `edf` (each job in deadline order up to its demand, the
# default) and `edf-one-job` (the earliest-deadline job holds every slot). From one run of each
# experiment in this folder. Usage, in this folder: python3 counts.py > counts.md
import pandas as pd

hd = pd.read_parquet('nbs-hard/results.parquet')
pr = pd.read_parquet('nbs-priority/results.parquet')
jb = pd.read_parquet('nbs-jobs/results.parquet')
FIGS = [
    ('Fig. 3 hard', hd, lambda d: d.deadline_hard == True, ['seed']),
    ('Fig. 4 priority >= 100', pr, lambda d: d.priority >= 100, ['seed']),
    ('Fig. 5 hard', jb[jb.scenario == 'nbs-hadoop'], lambda d: d.deadline_hard == True, ['seed', 'jobs']),
    ('Fig. 6 priority > 50', jb[jb.scenario == 'nbs-priority-random'], lambda d: d.priority > 50, ['seed', 'jobs']),
]
# The paper's values (Figs. 3-4: worst latency; Figs. 5-6: mean per run), in the order nbs,
# equal, random, edf.
PAPER = {'Fig. 3 hard': [-0.367, 26.84, 16.77, 12.177], 'Fig. 4 priority >= 100': [-6.85, 8.45, 13.77, 6.128],
         'Fig. 5 hard': [-20.72, 2.665, 8.405, -4.2], 'Fig. 6 priority > 50': [-62.8, -47.1, -48.9, -51.2]}


def totals(df, keep, unit):
    return df[keep(df)].groupby(unit + ['policy']).latency_s.sum().unstack('policy')


print('## Per run: summed latency of the figure\'s jobs, EDF against each other controller\n')
print('"a of n": runs where the row\'s policy is strictly earlier than the column\'s; "=": tied. The paper puts EDF behind NBS and ahead of Equal and Random in all four figures.\n')
print('| figure | EDF reading | NBS earlier than it | it earlier than equal-share (=) | it earlier than random-share (=) |')
print('|---|---|---:|---:|---:|')
for name, df, keep, unit in FIGS:
    t = totals(df, keep, unit)
    n = len(t)
    for edf in ['edf', 'edf-one-job']:
        cells = [f"{int((t['nbs'] < t[edf]).sum())} of {n}"]
        for o in ['equal-share', 'random-share']:
            cells.append(f"{int((t[edf] < t[o]).sum())} of {n} ({int((t[edf] == t[o]).sum())})")
        print(f"| {name} | {edf} | " + ' | '.join(cells) + ' |')

print('\n## The figures\' values, ours beside the paper\'s\n')
print('Figs. 3-4: the worst latency over the seeds; Figs. 5-6: the mean over the runs of the summed latency (s).\n')
print('| figure | nbs | equal-share | random-share | edf | edf-one-job | paper: nbs / equal / random / edf |')
print('|---|---:|---:|---:|---:|---:|---|')
for name, df, keep, unit in FIGS:
    vals = []
    for p in ['nbs', 'equal-share', 'random-share', 'edf', 'edf-one-job']:
        if name.startswith('Fig. 3') or name.startswith('Fig. 4'):
            v = df[(df.policy == p) & keep(df)].latency_s.max()
        else:
            v = totals(df, keep, unit)[p].mean()
        vals.append(f'{v:.2f}')
    print(f"| {name} | " + ' | '.join(vals) + ' | ' + ' / '.join(str(x) for x in PAPER[name]) + ' |')

print('\n## Hard deadlines missed and the batch\'s end\n')
print('| policy | hard jobs late, Fig. 3 | hard jobs late, Fig. 5 | mean makespan of the batch, Fig. 3 (s) |')
print('|---|---:|---:|---:|')
f5 = jb[jb.scenario == 'nbs-hadoop']
for p in ['nbs', 'equal-share', 'random-share', 'edf', 'edf-one-job']:
    late = lambda d: int(((d.policy == p) & (d.deadline_hard == True) & ((d.latency_s > 0) | d.latency_s.isna())).sum())
    ms = hd[hd.policy == p].groupby('seed').makespan_s.max().mean()
    print(f'| {p} | {late(hd)} | {late(f5)} | {ms:.1f} |')
