"""Shared by the section scripts: what they read of one run's outputs (`summary.json`'s
averages and totals; `ticks/` for the hour-by-hour shares). Shares are % of the online nodes."""
import json

import pyarrow.parquet as pq

CLASSES = ["idle", "overloaded", "sta", "ta", "pa", "da"]
PAPER_MASB = [0.63, 0.10, 3.91, 4.53, 68.28, 22.56]  # Table 4, MASB (CLASSES order)
PAPER_BORG = [0.01, 0.03, 6.58, 3.69, 52.94, 36.74]  # Table 4, Borg (CLASSES order)
PAPER_MB = 338.09  # Table 7, SIAS / SRAS: the one figure that sets the offload's period


def split_at(argv):
    """(the arguments before `--at S`, S as an int; None when there is no `--at`)."""
    if "--at" not in argv:
        return argv, None
    return argv[: argv.index("--at")], int(argv[argv.index("--at") + 1])


def summary_row(run_dir):
    """Table 4's shares (CLASSES order), memory used %, migrations completed a minute, MB per
    completed migration, tasks waiting (mean) of the run in `run_dir`."""
    s = json.load(open(f"{run_dir}/summary.json"))
    a = s["averages"]
    c = a["classes"]
    online = sum(v for k, v in c.items() if k != "offline")
    done = s["totals"].get("migrations_completed", 0.0)
    cost = s["totals"].get("migration_cost_mb", 0.0)
    return [100 * c[k] / online for k in CLASSES] + [
        100 * a["mem_used_ratio"],
        done / (s["simulated_s"] / 60),
        cost / max(done, 1),
        a["tasks_pending"],
    ]


def by_hour(run_dir, classes):
    """{hour: [mean % of the online nodes in each of `classes`]}, hours in order."""
    t = pq.read_table(f"{run_dir}/ticks").to_pydict()
    hours = {}
    for i, tick in enumerate(t["tick"]):
        online = t["nodes_online"][i]
        hours.setdefault(tick // 60, []).append([100 * t[k][i] / online for k in classes])
    return {h: [sum(col) / len(col) for col in zip(*rows)] for h, rows in sorted(hours.items())}


def migration_row(run_dir):
    """Table 4's shares, migrations completed a minute, MB per migration of the run in
    `run_dir` (`summary_row` less memory used and tasks waiting)."""
    r = summary_row(run_dir)
    return r[:6] + r[7:9]


def offload_row(out, every_s, seed):
    """`migration_row` of the run period.sh names masb-offload{every_s}-seed{seed} in `out`."""
    return migration_row(f"{out}/masb-offload{every_s}-seed{seed}")


def outside(r, paper, points=5):
    """What of `r`'s shares lies more than `points` from `paper`'s, as 'class +d.dd' strings."""
    return [f"{k} {r[i] - p:+.2f}" for i, (k, p) in enumerate(zip(CLASSES, paper))
            if abs(r[i] - p) > points]


def show_offload(label, r, tail):
    """One line of an offload-period table: label, shares, migrations a minute, MB, `tail`."""
    print(f"{label:<18}" + "".join(f"{v:>8.2f}" for v in r[:6]) + f"{r[6]:>10.1f}{r[7]:>9.1f}  "
          + tail)


def offload_head(paper, paper_mb):
    """The head of an offload-period table and Table 4's MASB column as its first line."""
    print(f"{'period s':<18}" + "".join(f"{k:>8}" for k in CLASSES)
          + f"{'migr/min':>10}{'MB/migr':>9}  outside 5 points")
    show_offload("Table 4 MASB", paper + [4409.0, paper_mb], "(Table 7's cost per task migration)")
