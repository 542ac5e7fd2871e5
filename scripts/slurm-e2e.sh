#!/usr/bin/env bash
# The SLURM templates against a real SLURM: Debian's slurm-wlm (slurmctld + slurmd + munge, one
# node, as root), installed if missing, started in a scratch directory with its own config and
# ports, and stopped at the end. `.ci/run` calls it after the tests; the stub tests in
# tests/slurm.rs stay the fast unit layer.
#
# What it checks, each against an uninterrupted run of the same flags (byte-identical
# deterministic outputs: every table but timing/, and samples.jsonl):
#   1. slurm/run.sbatch: the time-limit warning (`scancel -s USR1 -b JOB`) makes cellsim
#      snapshot and exit 75, the script requeues the job, and the requeued job resumes and
#      completes;
#   2. the same for one task of slurm/sweep.sbatch (an array of one);
#   3. a job cancelled with `scancel` (TERM to cellsim and its script at once) keeps its
#      snapshot; the same sbatch command submitted again resumes it and completes.
# A requeued job waits for its BeginTime (SLURM holds it about two minutes); once the requeue is
# seen the script releases it (`scontrol update StartTime=now`, 2 s later: see warn_and_requeue)
# to keep CI short.
#
# Usage: scripts/slurm-e2e.sh   (as root; builds target/release/cellsim if needed, honours
# CARGO_TARGET_DIR; KEEP=1 keeps the scratch directory)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
bin=$target/release/cellsim
work=$(mktemp -d /tmp/cellsim-slurm-e2e.XXXXXX)
conf=$work/slurm.conf
export SLURM_CONF=$conf

say() { echo "slurm-e2e: $*"; }
# Flags of every run: a generated 1,500-machine, 4-hour cell, MASB at one-second ticks (about 20 s
# a run on 2 cores, so the signals land mid-run), a snapshot every 30 simulated minutes.
flags=(--trace "$work/trace" --policy masb --tick 1s --snapshot-every-sim-minutes 30)

stop_daemons() {
    for pid_file in "$work/slurmd.pid" "$work/slurmctld.pid"; do
        [ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
    done
    sleep 1
    if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else say "kept $work"; fi
}

fail() {
    echo "slurm-e2e: FAIL: $*" >&2
    for f in "$work"/*.log "$work"/jobs/*.log; do
        [ -f "$f" ] && { echo "--- $f (last lines)" >&2; tail -n 15 "$f" >&2; }
    done
    exit 1
}

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
    local limit=$1
    shift
    local until=$((SECONDS + limit))
    until "$@"; do
        [ "$SECONDS" -lt "$until" ] || return 1
        sleep 0.5
    done
}

install_slurm() {
    local missing=
    for c in slurmctld slurmd munged sbatch; do command -v "$c" >/dev/null || missing=1; done
    [ -z "$missing" ] && return
    [ "$(id -u)" = 0 ] || fail "slurm-wlm is not installed and installing it needs root"
    say "installing slurm-wlm and munge (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q slurm-wlm munge >"$work/apt.log" 2>&1 ||
        { apt-get update -q >>"$work/apt.log" 2>&1 &&
            apt-get install -y -q slurm-wlm munge >>"$work/apt.log" 2>&1; } ||
        fail "apt-get install slurm-wlm munge (see $work/apt.log)"
}

start_munge() {
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return
    [ -f /etc/munge/munge.key ] || { mungekey --create 2>/dev/null ||
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; }
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    su -s /bin/sh munge -c /usr/sbin/munged || fail "munged does not start"
    wait_for 10 sh -c 'munge -n | unmunge >/dev/null 2>&1' || fail "munge does not answer"
}

start_slurm() {
    local host cpus mem_mb
    host=$(hostname)
    cpus=$(nproc)
    mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024))
    mkdir -p "$work/state" "$work/spool" "$work/jobs"
    cat >"$conf" <<EOF
ClusterName=cellsim-e2e
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
JobRequeue=1
KillWait=60
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=e2e Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    slurmctld -f "$conf" || fail "slurmctld does not start"
    slurmd -f "$conf" || fail "slurmd does not start"
    wait_for 30 sh -c 'sinfo -h -o %t | grep -q idle' || fail "the node does not come up idle"
    say "SLURM $(sinfo -V | awk '{print $2}') up on $host ($cpus CPUs)"
}

# Job fields from `scontrol show job`.
job_field() { scontrol -o show job "$1" 2>/dev/null | grep -o "$2=[^ ]*" | head -n 1 | cut -d= -f2; }
job_state() { job_field "$1" JobState; }
has_snapshot() { compgen -G "$1/snapshots/*.snap" >/dev/null; }
is_state() { [ "$(job_state "$1")" = "$2" ]; }
is_requeued() { [ "$(job_field "$1" Restarts)" = 1 ] && is_state "$1" PENDING; }
is_done() {
    case $(job_state "$1") in
    COMPLETED | CANCELLED | FAILED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) return 0 ;;
    *) return 1 ;;
    esac
}

# Submits `sbatch ARGS...` from the repository (the templates find slurm/ and the binary through
# SLURM_SUBMIT_DIR and CELLSIM); prints the job ID.
submit() {
    (cd "$repo" && CELLSIM=$bin sbatch --parsable --output="$work/jobs/%x-%j.log" "$@") ||
        fail "sbatch $*"
}

# Deterministic outputs of run $1 equal those of the reference run.
same_outputs() {
    local run=$1 ref=$work/reference
    [ -f "$run/summary.json" ] || fail "$run did not complete (no summary.json)"
    local listed_run listed_ref
    listed_run=$(cd "$run" && find . -path ./timing -prune -o -path ./snapshots -prune -o \
        \( -name '*.parquet' -o -name samples.jsonl \) -print | sort)
    listed_ref=$(cd "$ref" && find . -path ./timing -prune -o -path ./snapshots -prune -o \
        \( -name '*.parquet' -o -name samples.jsonl \) -print | sort)
    [ "$listed_run" = "$listed_ref" ] || fail "$run holds other parts than the reference run"
    local count=0
    while read -r f; do
        cmp -s "$run/$f" "$ref/$f" || fail "$run/$f differs from the uninterrupted run's"
        count=$((count + 1))
    done <<<"$listed_run"
    say "$run: $count outputs byte-identical to the uninterrupted run"
}

# Sends the time-limit warning to job $1 (an ID, or ID_TASK) once run $2 is under way; checks
# the requeue, releases the requeued job and waits for it to complete.
warn_and_requeue() {
    local job=$1 run=$2
    wait_for 120 has_snapshot "$run" || fail "job $job: no snapshot in $run"
    is_state "$job" RUNNING || fail "job $job finished before the signal; a longer run is needed"
    scancel -s USR1 -b "$job"
    wait_for 60 is_requeued "$job" || fail "job $job was not requeued (state $(job_state "$job"))"
    say "job $job: snapshotted on USR1 and requeued"
    [ -f "$run/summary.json" ] && fail "$run is complete though it was stopped"
    # slurmd refuses a launch credential made in the same second as the job's revocation (the
    # requeue's kill; seconds resolution): released at once, the job was killed as "Job
    # credential revoked" and ended FAILED. SLURM's own ~2 min BeginTime avoids it; 2 s will do.
    sleep 2
    scontrol update JobId="$job" StartTime=now
    wait_for 300 is_done "$job" || fail "job $job does not finish"
    is_state "$job" COMPLETED || fail "job $job ended $(job_state "$job")"
    [ "$(job_field "$job" Restarts)" = 1 ] || fail "job $job restarted more than once"
    grep -q "resuming from" "$run/cellsim.log" || fail "$run was not resumed from a snapshot"
}

trap stop_daemons EXIT
install_slurm
[ -x "$bin" ] || (cd "$repo" && cargo build --release --quiet)
start_munge
start_slurm

say "the trace and the uninterrupted reference run"
"$bin" gen "$work/raw" --machines 1500 --hours 4 --seed 3 >/dev/null 2>&1 || fail "gen"
"$bin" ingest "$work/raw" "$work/trace" >/dev/null 2>&1 || fail "ingest"
"$bin" run --out "$work/reference" --threads 2 "${flags[@]}" >"$work/reference.log" 2>&1 ||
    fail "the reference run"

say "1. run.sbatch: time-limit warning, requeue, resume"
job=$(submit slurm/run.sbatch "$work/run-usr1" "${flags[@]}")
warn_and_requeue "$job" "$work/run-usr1"
grep -q "stopped by the signal (exit 75); requeueing job $job" "$work/jobs/cellsim-$job.log" ||
    fail "job $job's log does not say it requeued"
same_outputs "$work/run-usr1"

say "2. sweep.sbatch: one array task, time-limit warning, requeue, resume"
printf '# the e2e sweep\n%s\n' "${flags[*]}" >"$work/params.txt"
array=$(submit --array=0-0 slurm/sweep.sbatch "$work/params.txt" "$work/sweep")
warn_and_requeue "${array}_0" "$work/sweep/run-0"
same_outputs "$work/sweep/run-0"

say "3. run.sbatch: scancel (TERM), then the same job submitted again"
job=$(submit slurm/run.sbatch "$work/run-term" "${flags[@]}")
wait_for 120 has_snapshot "$work/run-term" || fail "job $job: no snapshot"
is_state "$job" RUNNING || fail "job $job finished before scancel; a longer run is needed"
scancel "$job"
wait_for 90 is_done "$job" || fail "job $job does not end after scancel"
is_state "$job" CANCELLED || fail "job $job ended $(job_state "$job") after scancel"
grep -q "stopped by a signal" "$work/run-term/cellsim.log" ||
    fail "cellsim did not stop on the signal with a snapshot"
grep -q "not requeued" "$work/jobs/cellsim-$job.log" || fail "job $job's log does not say it was not requeued"
[ -f "$work/run-term/summary.json" ] && fail "the cancelled run is complete"
job=$(submit slurm/run.sbatch "$work/run-term" "${flags[@]}")
wait_for 300 is_done "$job" || fail "job $job does not finish"
is_state "$job" COMPLETED || fail "job $job ended $(job_state "$job")"
grep -q "resuming from" "$work/run-term/cellsim.log" || fail "the resubmitted job did not resume"
same_outputs "$work/run-term"

say "all SLURM checks passed"
