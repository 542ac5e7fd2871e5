"""Table 4's ordering per seed: MASB's PA:DA (PA share over DA share, 8 h averages) against
Borg's replay's under the same usage, for each MASB:BORG pair of run names (runs NAME-seedN),
seeds FIRST-LAST: in how many seeds MASB's is the higher, and each side's least and most
(Table 4: MASB 68.28 / 22.56 = 3.03, "roughly 3:1"; Borg 52.94 / 36.74 = 1.44, "3:2").
Usage: pa_da.py DIR FIRST LAST MASB:BORG ..."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../masb-da-2026-12-01"))
from runs import CLASSES, summary_row  # noqa: E402

PA, DA = CLASSES.index("pa"), CLASSES.index("da")
out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("## PA:DA per seed, MASB against Borg's replay (Table 4: 3.03 against 1.44)")
for pair in sys.argv[4:]:
    masb, borg = pair.split(":")
    ratios = []
    for seed in range(first, last + 1):
        m, b = (summary_row(f"{out}/{name}-seed{seed}") for name in (masb, borg))
        ratios.append((m[PA] / m[DA], b[PA] / b[DA]))
    higher = sum(m > b for m, b in ratios)
    least = [min(r[k] for r in ratios) for k in (0, 1)]
    most = [max(r[k] for r in ratios) for k in (0, 1)]
    print(f"{masb} against {borg}: MASB's higher in {higher} of {len(ratios)} seeds; "
          f"MASB {least[0]:.2f}-{most[0]:.2f}, Borg {least[1]:.2f}-{most[1]:.2f}")
