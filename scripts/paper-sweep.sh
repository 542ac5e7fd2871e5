#!/usr/bin/env bash
# The experiments of seed 000's section 7 as a parameter file for slurm/sweep.sbatch: Borg's
# recorded placements against MASB (Table 4), workload 101-106 % (Table 5), cell compaction
# 97-99 % (Table 6), the scoring variants SIAS/SIAS_GAIN x SRAS/SRAS_GAIN (Table 7) and the cell
# multiplied by 2, 4 and 8 (Table 8); every MASB run with the paper's defaults otherwise.
# Writes the four scoring configs into EXP_DIR and prints one line of `cellsim run` flags per run
# (with # comments naming the table), EXTRA flags appended to each line (e.g. --hours 168 for
# a week instead of the whole trace).
# Usage: scripts/paper-sweep.sh TRACE EXP_DIR [EXTRA...] > params.txt
#   n=$(grep -cv '^\s*\(#\|$\)' params.txt)
#   sbatch --array=0-$((n - 1)) slurm/sweep.sbatch params.txt SWEEP_DIR
#   cellsim report SWEEP_DIR --paper       # once they are done: side by side, with seed 000's values
# The 8x run needs ~3-4 GiB and is the longest by far (see bench-results/); give it more time
# with sbatch --time if the array's default is short.
set -euo pipefail
trace=${1:?usage: scripts/paper-sweep.sh TRACE EXP_DIR [EXTRA...]}
exp=${2:?usage: scripts/paper-sweep.sh TRACE EXP_DIR [EXTRA...]}
shift 2
extra=${*:+ $*}
mkdir -p "$exp"
exp=$(cd "$exp" && pwd)
for sias in sias sias_gain; do
    for sras in sras sras_gain; do
        printf '# seed 000 Table 7: initial allocation by %s, reallocation by %s
[policy]
kind = "masb"
sias_gain = %s\nsras_gain = %s\n' \
            "${sias^^}" "${sras^^}" "$([ "$sias" = sias_gain ] && echo true || echo false)" \
            "$([ "$sras" = sras_gain ] && echo true || echo false)" > "$exp/$sias-$sras.toml"
    done
done
masb="--trace $trace --policy masb --config $exp/sias-sras.toml"
echo "# Table 4: Borg's recorded placements and MASB"
echo "--trace $trace --policy borg-replay$extra"
echo "$masb$extra"
echo "# Table 5: workload 101-106 % (hash-selected tasks duplicated)"
for p in 101 102 103 104 105 106; do echo "$masb --workload $p$extra"; done
echo "# Table 6: cell compaction to 99-97 % of the machines"
for p in 99 98 97; do echo "$masb --compact $p$extra"; done
echo "# Table 7: the other scoring variants (SIAS + SRAS is Table 4's MASB run)"
for variant in sias_gain-sras sias-sras_gain sias_gain-sras_gain; do
    echo "--trace $trace --policy masb --config $exp/$variant.toml$extra"
done
echo "# Table 8: the cell multiplied by 2, 4 and 8 (25k, 50k and 100k machines)"
for k in 2 4 8; do echo "$masb --multiply $k$extra"; done
