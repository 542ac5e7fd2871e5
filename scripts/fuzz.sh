#!/usr/bin/env bash
# Fuzzing cellsim's parsers and decoders with cargo-fuzz (libFuzzer); the targets are in
# fuzz/fuzz_targets/ (see each file's doc), their seed corpora in fuzz/corpus/TARGET/.
#
#   scripts/fuzz.sh seeds                     rebuild fuzz/corpus/ from a small generated trace
#   scripts/fuzz.sh run TARGET SECONDS        fuzz one target; new inputs go to a work corpus
#                                             ($FUZZ_WORK/TARGET, default /tmp/cellsim-fuzz),
#                                             crashes to fuzz/artifacts/TARGET/; prints the
#                                             execs, the corpus and what was found
#   scripts/fuzz.sh all SECONDS               every target in turn
#   scripts/fuzz.sh parallel SECONDS          every target at once, niced
#
# Targets: csv_row part_reader config snapshot parquet_trace. Needs `cargo install cargo-fuzz`.
# The machine's Rust is stable: cargo-fuzz's instrumentation flags are accepted with
# RUSTC_BOOTSTRAP=1 and no sanitizer (`--sanitizer none`: the code under test has no `unsafe`
# but memmap2's and the snapshot's bytemuck casts, which check their bounds; a panic, an abort,
# a timeout or running out of memory is what a target finds).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
targets=(csv_row part_reader config snapshot parquet_trace)
work=${FUZZ_WORK:-/tmp/cellsim-fuzz}
export RUSTC_BOOTSTRAP=1

# Inputs up to this many bytes: the snapshot and Parquet seeds are tens of KB.
max_len() {
    case $1 in
    snapshot | parquet_trace) echo 131072 ;;
    *) echo 16384 ;;
    esac
}

seeds() {
    local bin=$repo/target/release/cellsim scratch
    [ -x "$bin" ] || (cd "$repo" && cargo build --release --quiet)
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' RETURN
    "$bin" gen "$scratch/full" --machines 50 --hours 0.25 --seed 1 >/dev/null 2>&1
    # A trace of each table's first 40 rows: seeds of a few KB.
    local tables=(machine_events machine_attributes job_events task_events task_constraints task_usage)
    for t in "${tables[@]}"; do
        mkdir -p "$scratch/small/$t"
        zcat "$scratch/full/$t/part-00000-of-00001.csv.gz" | sed -n 1,40p |
            gzip -n >"$scratch/small/$t/part-00000-of-00001.csv.gz"
    done
    "$bin" ingest "$scratch/small" "$scratch/pq" >/dev/null 2>&1
    rm -rf "$repo/fuzz/corpus"
    mkdir -p "${targets[@]/#/$repo/fuzz/corpus/}"
    local k=0
    for t in "${tables[@]}"; do
        # csv_row: the table's index byte, then CSV rows; part_reader: (index << 1) + 1 for a
        # plain part, index << 1 for a gzip one; parquet_trace: the index byte, then the part.
        local rows=$scratch/small/$t/part-00000-of-00001.csv.gz
        { printf "\\x$(printf %02x $k)"; zcat "$rows" | sed -n 1,8p; } >"$repo/fuzz/corpus/csv_row/$t"
        { printf "\\x$(printf %02x $((k * 2 + 1)))"; zcat "$rows" | sed -n 1,8p; } \
            >"$repo/fuzz/corpus/part_reader/$t.csv"
        { printf "\\x$(printf %02x $((k * 2)))"; zcat "$rows" | sed -n 1,8p | gzip -n; } \
            >"$repo/fuzz/corpus/part_reader/$t.csv.gz"
        { printf "\\x$(printf %02x $k)"; cat "$scratch/pq/$t/part-00000-of-00001.parquet"; } \
            >"$repo/fuzz/corpus/parquet_trace/$t"
        k=$((k + 1))
    done
    for policy in borg-replay masb first-fit sparrow nbs federation; do
        # Sparrow's message hops need rounds of at most a second: the default minute tick is refused.
        local tick=()
        [ "$policy" = sparrow ] && tick=(--tick 1s)
        "$bin" run --policy "$policy" "${tick[@]}" --print-config \
            >"$repo/fuzz/corpus/config/$policy.toml"
    done
    # snapshot: mode byte 1 (re-seal checksums after mutation), then a snapshot of a small run.
    for policy in borg-replay masb; do
        "$bin" run --trace "$scratch/pq" --policy "$policy" --hours 0.05 \
            --snapshot-every-sim-minutes 1 --out "$scratch/run-$policy" >/dev/null 2>&1
        local snap
        snap=$(find "$scratch/run-$policy/snapshots" -name '*.snap' | sort | head -n 1)
        { printf '\x01'; cat "$snap"; } >"$repo/fuzz/corpus/snapshot/$policy.snap"
    done
    du -sh "$repo/fuzz/corpus"/*
}

build() {
    (cd "$repo/fuzz" && cargo fuzz build -O --sanitizer none "$@")
}

# Runs the built binary itself (not `cargo fuzz run`, which rebuilds, and whose builds of
# different targets side by side invalidate each other).
run_target() {
    local target=$1 seconds=$2
    mkdir -p "$work/$target" "$repo/fuzz/artifacts/$target"
    cd "$repo/fuzz"
    local log=$work/$target.log
    RUST_BACKTRACE=1 "target/x86_64-unknown-linux-gnu/release/$target" "$work/$target" "corpus/$target" \
        -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="artifacts/$target/" 2>&1 | tee "$log" | grep -E '^#[0-9]+ *(DONE|pulse)|stat::|==|panicked|ERROR' || true
    echo "fuzz $target: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}') execs in ${seconds} s; corpus $(find "$work/$target" -type f | wc -l) inputs; artifacts: $(find "artifacts/$target" -type f | wc -l)"
}

case ${1:-} in
seeds) seeds ;;
run)
    build "${2:?target}"
    run_target "$2" "${3:?seconds}"
    ;;
all)
    build
    for t in "${targets[@]}"; do run_target "$t" "${2:?seconds}"; done
    ;;
parallel)
    # Every target at once for SECONDS each, niced (a shared machine goes on working); the
    # summary lines at the end.
    build
    for t in "${targets[@]}"; do nice -n 19 "$0" run-built "$t" "${2:?seconds}" >"$work/$t.out" 2>&1 & done
    wait
    for t in "${targets[@]}"; do tail -n 1 "$work/$t.out"; done
    ;;
run-built) run_target "${2:?target}" "${3:?seconds}" ;;
*)
    echo "usage: scripts/fuzz.sh seeds | run TARGET SECONDS | all SECONDS" >&2
    exit 2
    ;;
esac
