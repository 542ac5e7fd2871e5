#!/usr/bin/env bash
# Issue 57 item 3: MASB and Borg's replay on the real trace's first 8.5 hours (../shared/gcd-8h)
# under the usage and release settings of masb-real-trace-2026-11-28.md, 8 simulated hours
# each, then `report` (one table per group). Usage: run.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
cellsim=$1 trace=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$cellsim" ingest "$trace" "$out/parquet" --threads 2 >/dev/null
# name: policy, then the settings (TOML lines) beyond the defaults.
split=$'[usage]\ncpu_ratio = [0.42, 0.42, 0.42]\nmem_ratio = [0.35, 0.35, 0.85]\nper_task = true'
window=$'[usage.window]'
run() {
  local name=$1 policy=$2 top=$3 policy_keys=$4 usage=$5
  printf '%s\n[policy]\nkind = "%s"\n%s\n%s\n' "$top" "$policy" "$policy_keys" "$usage" \
    > "$out/$name.toml"
  rm -rf "${out:?}/$name"
  "$cellsim" run --trace "$out/parquet" --hours 8 --threads 2 --snapshot-every-wall-minutes 0 \
    --config "$out/$name.toml" --out "$out/$name" >/dev/null 2>&1
}
release='release = "trace-schedule"'
accept='accept_max_use = true'
run borg-default borg-replay '' '' ''
run masb-default masb '' '' ''
run borg-split borg-replay '' '' "$split"
run masb-split masb '' '' "$split"
run borg-window borg-replay '' '' "$split"$'\n'"$window"
run masb-window masb '' '' "$split"$'\n'"$window"
run masb-release masb "$release" '' "$split"
run masb-window-release masb "$release" '' "$split"$'\n'"$window"
run masb-window-release-accept masb "$release" "$accept" "$split"$'\n'"$window"
low=$'\ncpu_sigma = 0.1\nmem_sigma = 0.03' high=$'\ncpu_sigma = 0.6\nmem_sigma = 0.2'
run borg-window-low borg-replay '' '' "$split"$'\n'"$window$low"
run masb-window-low masb "$release" "$accept" "$split"$'\n'"$window$low"
run borg-window-high borg-replay '' '' "$split"$'\n'"$window$high"
run masb-window-high masb "$release" "$accept" "$split"$'\n'"$window$high"
run masb-fraction masb "$release" "$accept"$'\nscore_units = "fraction"' "$split"$'\n'"$window"
run masb-absolute masb "$release" "$accept"$'\nscore_units = "absolute"' "$split"$'\n'"$window"
r() { (cd "$out" && "$cellsim" report "$@"); }
echo "## usage model (Borg, MASB)"
r borg-default masb-default borg-split masb-split borg-window masb-window
echo "## release and acceptance (MASB, split per-task usage)"
r masb-split masb-release masb-window masb-window-release masb-window-release-accept
echo "## window sigmas (low 0.1 / 0.03, default 0.3 / 0.1, high 0.6 / 0.2)"
r borg-window-low borg-window borg-window-high masb-window-low masb-window-release-accept masb-window-high
echo "## score units (trace, the default; fraction; absolute)"
r masb-window-release-accept masb-fraction masb-absolute
echo "## against the paper"
r --paper masb-window-release-accept | sed -n '/against seed 000/,$p'
echo "## per hour, share of online nodes % (STA / TA / PA / DA)"
python3 "$here/per-hour.py" "$out" borg-window masb-window-release-accept
