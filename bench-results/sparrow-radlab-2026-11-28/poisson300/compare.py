# Poisson arrivals, 300 seeds a side: radlab-d1..d4 (cellsim experiment sparrow-load --seeds 300
# --arrivals poisson) against the authors' simulator (seeds 1-50: ../peer.jsonl; 51-300:
# peer-seeds-51-300.jsonl.gz). Usage: python3 compare.py OUR_RESULTS.parquet > cmp300.csv
import gzip, json, sys, numpy as np, pandas as pd
peer = [json.loads(l) for l in open('../peer.jsonl')]
peer += [json.loads(l) for l in gzip.open('peer-seeds-51-300.jsonl.gz', 'rt')]
peer = pd.DataFrame(peer)
peer = peer[peer.arrivals == 'poisson']
peer['x'] = (peer.load * 100).round()
ours = pd.read_parquet(sys.argv[1])
rows = []
for d in [1, 2, 3, 4]:
    for x in sorted(ours.x.unique()):
        q = peer[(peer.probes == d) & (peer.x == x)]
        r = ours[(ours.configuration == f'radlab-d{d}') & (ours.x == x)]
        for m, pm in [('mean_queue_ms', 'mean_ms'), ('p99_queue_ms', 'p99_ms')]:
            a, b = r[m], q[pm]
            se = np.sqrt(a.var() / len(a) + b.var() / len(b))
            rows.append((d, x, m, len(a), len(b), a.mean(), b.mean(), a.mean() / b.mean(),
                         (a.mean() - b.mean()) / se if se > 0 else 0.0))
cols = ['d', 'x', 'm', 'n_ours', 'n_peer', 'ours', 'peer', 'ratio', 'z']
pd.DataFrame(rows, columns=cols).to_csv(sys.stdout, index=False)
