"""Where MASB's migrations land. Between each two consecutive node samples of a run (`nodes/`,
every 100 minutes by default), the nodes that received at least one completed migration and
sent none, and the nodes that neither received nor sent one: how many, and the share of them
in DA at the first sample and at the second, then the same of STA, TA and PA (seed 000 7.6
(ii): SRAS's re-allocations give "tighter fit allocations, ... an increase in STAs and TAs");
then the DA share at the last sample for all nodes that received one before it. Per seed; the
share of the completed migrations that were forced.
Usage: targets.py DIR FIRST LAST NAME  (runs DIR/NAME-seedN)"""
import sys

import pyarrow.parquet as pq

OTHERS = ["sta", "ta", "pa"]
out, first, last, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"## {name}: % of the nodes in DA before and after they receive migrated tasks")
print(f"{'seed':<6}{'minutes':<12}{'nodes':<18}{'count':>7}{'DA before':>11}{'DA after':>10}"
      + "".join(f"{c.upper() + ' before->after':>24}" for c in OTHERS))
for seed in range(first, last + 1):
    run = f"{out}/{name}-seed{seed}"
    nodes = pq.read_table(f"{run}/nodes").to_pandas()
    moves = pq.read_table(f"{run}/migrations").to_pandas()
    moves = moves[moves.outcome == "completed"]
    classes = {t: g.set_index("machine_id")["class"] for t, g in nodes.groupby("time_us")}
    da = {t: c.eq("da") for t, c in classes.items()}
    times = sorted(da)
    for a, b in zip(times, times[1:]):
        between = moves[(moves.time_us > a) & (moves.time_us <= b)]
        got, sent = set(between.target_machine), set(between.source_machine)
        both = da[a].index.intersection(da[b].index)
        received = [m for m in both if m in got and m not in sent]
        untouched = [m for m in both if m not in got and m not in sent]
        for label, ids in [("received, sent 0", received), ("neither", untouched)]:
            other = "".join(
                f"{f'{100 * classes[a][ids].eq(c).mean():.2f} -> {100 * classes[b][ids].eq(c).mean():.2f}':>24}"
                for c in OTHERS)
            print(f"{seed:<6}{f'{a // 60_000_000}-{b // 60_000_000}':<12}{label:<18}{len(ids):>7}"
                  f"{100 * da[a][ids].mean():>11.2f}{100 * da[b][ids].mean():>10.2f}{other}")
    end = times[-1]
    got = moves[moves.time_us <= end].target_machine
    received = da[end].index.isin(set(got))
    print(f"{seed:<6}{f'at {end // 60_000_000}':<12}{'received any':<18}{received.sum():>7}"
          f"{'':>11}{100 * da[end][received].mean():>10.2f}")
    print(f"{seed:<6}{f'at {end // 60_000_000}':<12}{'received none':<18}{(~received).sum():>7}"
          f"{'':>11}{100 * da[end][~received].mean():>10.2f}")
    print(f"{seed:<6}forced: {100 * moves.forced.mean():.1f} % of the completed migrations")
