# Run for run: the radlab-d1..d4 rows of `cellsim experiment sparrow-load --draws radlab` against
# the Sparrow authors' simulator's own output for the same seed, load, probes and arrivals
# (default ../sparrow-radlab-2026-11-28/peer.jsonl: seeds 1-50, both arrival modes; or PEER, a
# file of the same fields, e.g. peer-even-us.jsonl, its integer-microsecond runs described in
# the bench file). Output: compare.txt.
# Usage: python3 compare.py RESULTS.parquet ARRIVALS [PEER]
import json, sys
import pandas as pd

ours = pd.read_parquet(sys.argv[1])
arrivals = sys.argv[2]
peer_file = sys.argv[3] if len(sys.argv) > 3 else '../sparrow-radlab-2026-11-28/peer.jsonl'
peer = pd.DataFrame([json.loads(l) for l in open(peer_file)])
peer['x'] = (peer.load * 100).round()
peer = peer[peer.arrivals == arrivals]
ours = ours[ours.configuration.str.startswith('radlab')].copy()
ours['probes'] = ours.configuration.str[-1].astype(int)
m = ours.merge(peer, on=['x', 'probes', 'seed'])
m['d_mean_us'] = (m.mean_queue_ms - m.mean_ms).abs() * 1e3
m['d_p99_us'] = (m.p99_queue_ms - m.p99_ms).abs() * 1e3
m['equal'] = (m.d_mean_us < 1) & (m.d_p99_us < 1)
print(f"{arrivals}: {int(m.equal.sum())} of {len(m)} runs equal (mean and p99 within 1 us); "
      f"largest difference {max(m.d_mean_us.max(), m.d_p99_us.max()):.3f} us")
by = m.groupby(['probes', 'x']).agg(runs=('equal', 'size'), equal=('equal', 'sum'),
                                    ours=('mean_queue_ms', 'mean'), peer=('mean_ms', 'mean'),
                                    ours_p99=('p99_queue_ms', 'mean'), peer_p99=('p99_ms', 'mean'))
by['mean_ratio'] = by.ours / by.peer
by['p99_ratio'] = by.ours_p99 / by.peer_p99
print(by[by.equal < by.runs].round(3).to_string() if (by.equal < by.runs).any() else "every cell: all runs equal")
print("means over seeds, ours / peer: mean", round(by.mean_ratio.min(), 4), "-", round(by.mean_ratio.max(), 4),
      "; p99", round(by.p99_ratio.min(), 4), "-", round(by.p99_ratio.max(), 4))
