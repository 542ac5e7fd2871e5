#!/usr/bin/env bash
# Downloads the Google Cluster Data 2011 trace (clusterdata-2011-2, ~41 GB compressed) into DIR
# and checks it against the bucket's SHA256SUM. Needs internet access and gsutil
# (pip install gsutil). Usage: scripts/fetch-gcd.sh DIR [TABLE...]
#   TABLE defaults to all six: machine_events machine_attributes job_events task_events
#   task_constraints task_usage (task_usage alone is ~38 GB).
set -euo pipefail
dir=${1:?usage: scripts/fetch-gcd.sh DIR [TABLE...]}
shift || true
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(machine_events machine_attributes job_events task_events task_constraints task_usage)
command -v gsutil >/dev/null || { echo "gsutil not found: pip install gsutil" >&2; exit 1; }
mkdir -p "$dir"
gsutil cp gs://clusterdata-2011-2/SHA256SUM gs://clusterdata-2011-2/schema.csv "$dir/"
for t in "${tables[@]}"; do
  mkdir -p "$dir/$t"
  gsutil -m cp -n "gs://clusterdata-2011-2/$t/*" "$dir/$t/"
done
cd "$dir"
grep -E "^[0-9a-f]+ +\*?($(IFS='|'; echo "${tables[*]}"))/" SHA256SUM | sed 's/ \*/  /' | sha256sum -c --quiet
echo "clusterdata-2011-2 (${tables[*]}) in $dir, checksums verified"
