#!/usr/bin/env python3
"""The scaling curve of issue 38 from `scripts/bench.sh` outputs: wall seconds per simulated day
and peak RSS against the cell size (1x = the 12.5k cell, Kx = `--multiply K`), one policy, with
the line through the 1x point that linear growth would follow.

Usage: scripts/plot-scaling.py POLICY OUT.svg BENCH.md [BENCH.md ...]
Reads the table rows `| POLICY | Kx | threads | x real time | peak RSS MB | ...` of each file
(the first row per cell size wins). Needs matplotlib.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(policy, paths):
    """{cell: (speed x real time, peak RSS MB)} of `policy` in the bench files."""
    found = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) < 5 or cells[0] != policy or not cells[1].endswith("x"):
                    continue
                try:
                    k, speed, rss = int(cells[1][:-1]), float(cells[3]), float(cells[4])
                except ValueError:
                    continue
                found.setdefault(k, (speed, rss))
    return found


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    policy, out, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    found = rows(policy, paths)
    if 1 not in found or len(found) < 2:
        sys.exit(f"{policy}: need the 1x row and another cell size in {paths}, found {sorted(found)}")
    ks = sorted(found)
    day_s = [86400.0 / found[k][0] for k in ks]
    rss = [found[k][1] for k in ks]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(ks, day_s, "o-", label=f"{policy}, measured")
    a.plot(ks, [day_s[0] * k for k in ks], "--", color="grey", label="linear in the cell size")
    a.set(xlabel="cell size (x 12.5k machines)", ylabel="wall seconds per simulated day",
          xticks=ks, title="time")
    b.plot(ks, rss, "o-", label=f"{policy}, peak RSS")
    b.plot(ks, [rss[0] * k for k in ks], "--", color="grey", label="linear in the cell size")
    b.axhline(1536, color="red", linewidth=0.8, label="issue 38's 8x target (1.5 GiB)")
    b.set(xlabel="cell size (x 12.5k machines)", ylabel="peak RSS (MB)", xticks=ks, title="memory")
    for ax in (a, b):
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    for k, s, m in zip(ks, day_s, rss):
        print(f"{k}x: {s:.1f} s per simulated day, {m:.0f} MB")


if __name__ == "__main__":
    main()
