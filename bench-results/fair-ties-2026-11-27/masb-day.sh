#!/usr/bin/env bash
# MASB on the generated 12.5k cell over a day, the build before issue 55 (OLD) against this one
# (NEW), interleaved: old, new, old, new, ... ; each run's wall seconds, speed and Table 7 shares.
# Usage: masb-day.sh OLD_BIN NEW_BIN TRACE OUT_DIR [RUNS]
set -euo pipefail
old=$1 new=$2 trace=$3 out=$4 runs=${5:-3}
mkdir -p "$out"
for i in $(seq 1 "$runs"); do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    dir="$out/$which-$i"
    rm -rf "$dir"
    start=$(date +%s.%N)
    "$bin" run --trace "$trace" --policy masb --hours 24 --threads 2 \
      --snapshot-every-wall-minutes 0 --out "$dir" >/dev/null 2>&1
    end=$(date +%s.%N)
    wall=$(echo "$end - $start" | bc)
    shares=$("$new" report "$dir" | awk '/^(idle|STA|TA|PA|DA|overloaded) /{gsub(/[()%]/,"",$3); printf "%s=%s ", $1, $3} /^migrations \/ minute/{printf "mig/min=%s ", $4} /^MB per migration/{printf "MB/mig=%s ", $4} /^speed/{printf "speed=%s ", $NF}')
    echo "$which $i wall_s=$wall $shares"
  done
done
