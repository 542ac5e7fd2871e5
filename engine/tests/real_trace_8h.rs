//! borg-replay over the real trace's first 8.5 hours (`../shared/gcd-8h`, six complete official
//! task_events parts; issue 57), against counts made straight from its task_events by
//! `bench-results/real-trace-2026-11-27/production-requests.py` (a task runs from its SCHEDULE
//! to its next terminal event; its requests as its last event gave them), and against what must
//! hold whatever the usage model: Borg's own placements break seed 000's production-request
//! (RUS) rule on ~4.9 % of the machines, so they cannot be counted as overloaded nodes if
//! Table 4's 0.03 % for Borg is to be compared at all (`classify.rs`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use common::*;
use engine::RunConfig;

/// Table 4's classes in the order the tests list shares, and seed 000's Table 4 in it (% of the
/// nodes): MASB's column and Borg's.
const CLASSES: [&str; 6] = ["idle", "sta", "ta", "pa", "da", "overloaded"];
const TABLE_4_MASB: [f64; 6] = [0.63, 3.91, 4.53, 68.28, 22.56, 0.10];
const TABLE_4_BORG: [f64; 6] = [0.01, 6.58, 3.69, 52.94, 36.74, 0.03];

/// Every share of `ours` (CLASSES order) within `points` of Table 4's column `paper`.
fn assert_within(ours: &[f64; 6], paper: [f64; 6], points: f64, what: &str) {
    for ((class, o), p) in CLASSES.iter().zip(ours).zip(paper) {
        assert!(
            (o - p).abs() < points,
            "{what}: {class} {o:.2} against {p}: {ours:?}"
        );
    }
}

/// A run's Table 4 shares: the % of the online nodes in each class, CLASSES order.
fn table_4_shares(a: &engine::summary::Averages) -> [f64; 6] {
    CLASSES.map(|class| 100.0 * a.classes[class] / a.nodes_online)
}

/// `../shared/gcd-8h` ingested into a temporary directory: (the directory, the Parquet).
fn ingested_8h() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let parquet = root.path().join("parquet");
    ingest_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gcd-8h"),
        &parquet,
    );
    (root, parquet)
}

#[test]
fn replay_of_the_real_8_hours_agrees_with_the_events() {
    let (root, parquet) = ingested_8h();
    let run = root.path().join("run");
    let config = RunConfig {
        hours: Some(8.0),
        ..RunConfig::default()
    };
    let summary = run_borg(&config, &parquet, &run);
    assert_eq!(summary.ticks, 480);
    let ticks = read_parquet(&run.join("ticks"));
    let column = |name: &str| ticks.column(ticks.schema().index_of(name).unwrap()).clone();
    let (online, rus) = (column("nodes_online"), column("rus_breaches"));
    let (online, rus) = (
        online.as_primitive::<UInt32Type>(),
        rus.as_primitive::<UInt32Type>(),
    );
    let prod_cpu = column("prod_cpu_reserved_ratio");
    let prod_cpu = prod_cpu.as_primitive::<Float64Type>();
    // The script's counts at 2, 4, 6 and 8 hours (the ends of ticks 119, 239, 359, 479):
    // machines online and machines whose production tasks (priority >= 9) request more than
    // they have.
    for (tick, machines, breaking, reserved_cpu) in [
        (119, 12_476, 605, 0.732),
        (239, 12_480, 609, 0.732),
        (359, 12_479, 616, 0.732),
        (479, 12_479, 616, 0.728),
    ] {
        assert_eq!(
            online.value(tick),
            machines,
            "machines online after tick {tick}"
        );
        assert_eq!(rus.value(tick), breaking, "RUS breaches after tick {tick}");
        assert!(
            (prod_cpu.value(tick) - reserved_cpu).abs() < 0.001,
            "production CPU reserved after tick {tick}: {}",
            prod_cpu.value(tick)
        );
    }
    // RUS breaches are counted apart; they overload no node by default.
    let a = &summary.averages;
    // With usage constant while a task runs, Borg's placements alone make a tenth of Table 2's
    // rises of more than 10 points a minute (212; measured 21).
    let rises = a.rises_by_threshold().unwrap();
    assert!(rises[1] < 40.0, "use rises > 10 %: {}", rises[1]);
    let share = |class: &str| a.classes[class] / a.nodes_online;
    assert!(a.rus_breaches / a.nodes_online > 0.045);
    assert!(
        share("overloaded") < a.rus_breaches / a.nodes_online,
        "overloaded {:.4} must not count the {:.4} breaking RUS",
        share("overloaded"),
        a.rus_breaches / a.nodes_online
    );
    // Table 4's Borg column, what the usage model must give on the real trace: idle 0.01 %
    // (none idle here either), usage at seed 000's 40-50 % CPU and 60-70 % memory.
    assert!(share("idle") < 0.001);
    assert_usage_as_in_the_paper(&summary);
}

/// Issue 57 item 3 on the real trace's first 2 hours: MASB by default starts every task at its
/// SUBMIT, so it runs the work Borg left waiting (at the end fewer than a tenth of the tasks
/// Borg leaves waiting wait; memory requested 10 points above Borg's), and with every task's
/// modelled usage constant no node goes over and nothing migrates. Released when the trace's
/// scheduler started each task (`release = "trace-schedule"`), as many tasks wait at the end as
/// under Borg, within 1 % (every task Borg has not started is held; Borg's replay leaves a few
/// waiting that the trace placed on machines it does not have, which MASB places elsewhere),
/// the memory requested within 2 points of Borg's (the first ticks' burst in the mean); with
/// usage drawn again every 300 s (`[usage.window]`) node agents migrate, and at most 0.5 % of
/// the nodes are overloaded (`bench-results/masb-real-trace-2026-11-28.md`). The tasks running:
/// by default over 5 % more than Borg's, held within 2 % of them.
#[test]
fn masb_on_the_real_trace_runs_what_borg_left_waiting_unless_released_by_the_trace() {
    let (root, parquet) = ingested_8h();
    let mut usage = engine::usage_model::UsageModel {
        cpu_ratio: [0.42; 3],
        mem_ratio: [0.35, 0.35, 0.85],
        per_task: true,
        ..Default::default()
    };
    let base = RunConfig {
        hours: Some(2.0),
        usage: usage.clone(),
        ..masb_config()
    };
    let borg = run_borg(&base, &parquet, &root.path().join("borg"));
    let masb = run_masb(&base, &parquet, &root.path().join("masb"));
    usage.window = Some(engine::usage_model::WindowModel::default());
    let released = RunConfig {
        release: engine::release::Release::TraceSchedule,
        usage,
        ..base.clone()
    };
    let held = run_masb(&released, &parquet, &root.path().join("masb-released"));
    let (b, m, h) = (&borg.averages, &masb.averages, &held.averages);
    let migrations = |s: &engine::RunSummary| s.totals.counters["migrations_started"];
    let waiting = |s: &engine::RunSummary| s.work_left.tasks_waiting as f64;
    assert!(waiting(&borg) > 10_000.0, "Borg waiting {}", waiting(&borg));
    assert!(waiting(&masb) < waiting(&borg) / 10.0, "{}", waiting(&masb));
    assert!(m.mem_requested_ratio > b.mem_requested_ratio + 0.1);
    assert_eq!(migrations(&masb), 0.0);
    assert!(
        (waiting(&held) / waiting(&borg) - 1.0).abs() < 0.01,
        "{}",
        waiting(&held)
    );
    assert!((h.mem_requested_ratio - b.mem_requested_ratio).abs() < 0.02);
    // The work carried, against seed 000's counts (Table 5's 100 % ran "the entire GCD
    // workload"): MASB by default runs over 5 % more tasks than Borg's replay of the same
    // hours; held, it runs Borg's less the t = 0 burst's first ticks, within 2 %
    // (`bench-results/masb-tasks-2026-12-03.md`: over 8 h +8.1 % and -0.3 %).
    let more = |s: &engine::summary::Averages| s.tasks_running / b.tasks_running - 1.0;
    assert!(more(m) > 0.05, "MASB by default {:+.4}", more(m));
    assert!(more(h).abs() < 0.02, "held {:+.4}", more(h));
    assert!(migrations(&held) > 0.0);
    assert!(h.classes["overloaded"] / h.nodes_online < 0.005);
}

/// Issue 57 item 3 on the real trace's first 2 hours, held to the trace's start times with
/// `accept_max_use` and usage constant while a task runs: MASB's broker scores all of a tick's
/// new tasks on reports made before the last tick's placements, so the t = 0 burst (~144k
/// tasks) lands as if at random and the long-running tasks keep it: PA 49.1 %, DA 40.7 %
/// (measured). With `book_asks` each task is scored with the ones before it booked: every
/// share within 5 points of Table 4's MASB column (measured: idle 0.83, STA 0.00, TA 4.48, PA
/// 71.24, DA 23.45 %, nothing overloaded; Table 4: 0.63, 3.91, 4.53, 68.28, 22.56, 0.10; under
/// the memory split before 2026-12-03, 0.35 / 0.85, DA was 27.51 %, at the band's edge, PA
/// 67.33: `bench-results/masb-booking-2026-11-30.md`).
#[test]
fn masb_booking_its_asks_spreads_the_real_t0_burst_as_table_4() {
    let (root, parquet) = ingested_8h();
    let held = RunConfig {
        hours: Some(2.0),
        release: engine::release::Release::TraceSchedule,
        ..masb_config()
    };
    let masb = |book_asks: bool| {
        engine::policies::PolicyConfig::Masb(engine::masb::MasbConfig {
            accept_max_use: true,
            book_asks,
            ..Default::default()
        })
    };
    let shares = |book_asks: bool| {
        let config = RunConfig {
            policy: masb(book_asks),
            ..held.clone()
        };
        let out = root.path().join(format!("masb-booked-{book_asks}"));
        table_4_shares(&run_masb(&config, &parquet, &out).averages)
    };
    let before = shares(false);
    let booked = shares(true);
    eprintln!("unbooked {before:?}\nbooked {booked:?}");
    let [_, _, _, pa_before, da_before, _] = before;
    let [_, _, _, pa, da, overloaded] = booked;
    assert_within(&booked, TABLE_4_MASB, 5.0, "MASB, booked");
    assert!(pa > pa_before + 15.0, "PA {pa} against {pa_before}");
    assert!(da < da_before - 10.0, "DA {da} against {da_before}");
    assert!(overloaded < 0.5);
}

/// The configuration of record users get (`slurm/masb-real-trace.toml`, which the README
/// points to and the tests below run) is the one the bench files measured
/// (`bench-results/masb-da-2026-12-01/setup.sh`'s `record`, with `[usage.window]`): MASB held to
/// the trace's start times, booked asks, usage windows at their Table 2 spreads, and nothing
/// else off its default (no offloads: seed 000 has none; no `accept_max_use` since section (a8)
/// of `masb-da-2026-12-01.md`: seed 000's node agent accepts what does not overflow the node).
#[test]
fn the_shipped_masb_real_trace_config_is_the_configuration_of_record() {
    let mut expected = RunConfig {
        release: engine::release::Release::TraceSchedule,
        policy: engine::policies::PolicyConfig::Masb(engine::masb::MasbConfig {
            book_asks: true,
            ..Default::default()
        }),
        ..RunConfig::default()
    };
    expected.usage.window = Some(engine::usage_model::WindowModel::default());
    assert_eq!(masb_of_record(), expected);

    // The benches spell it out in their set-up (`record=$'...'`, each run adding
    // `[usage.window]`): the same settings, so a change to one is caught against the other.
    let setup =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench-results/masb-da-2026-12-01/setup.sh");
    let text = std::fs::read_to_string(&setup).unwrap();
    let record = text
        .lines()
        .find_map(|line| line.strip_prefix("record=$'")?.strip_suffix('\''))
        .expect("setup.sh sets record=$'...'");
    let bench = record.replace("\\n", "\n") + "\n[usage.window]";
    assert_eq!(RunConfig::from_toml(&bench, &setup).unwrap(), expected);
}

/// Issue 57 item 3, what sets MASB's DA on the real trace's first 2 hours (MASB held, booked,
/// under the usage windows; Borg's replay under the same usage): the usage model's memory split.
/// SIAS scores a new task by its requests (seed 000 section 6.2), so MASB levels the nodes'
/// requested memory; the split set on Borg's overloaded share alone
/// ([`UsageModel::overload_split`], the default until 2026-12-03) uses 0.85 of a production
/// task's memory request and 0.35 of other work's, so levelled requests are uneven use, and
/// MASB's node agents move nothing off a node that is not overloaded. One share for all work,
/// 0.66 (the same memory used, within a point), puts every MASB share within 5 points of Table
/// 4's MASB column (measured: idle 0.84, STA 1.42, TA 3.61, PA 72.19, DA 21.93, overloaded
/// 0.01 %; the split: DA 27.61 %) but takes Borg's replay off Table 4's Borg column (overloaded
/// 2.47 % against 0.03, DA 29.26 against 36.74; the split: 0.26 and 37.11): neither fits both
/// columns (`bench-results/masb-da-2026-12-01.md` section (b), the 8 h over seeds 1-3,
/// measured with the record before (a8), `accept_max_use` on). Between them, the default, set
/// on Table 4's Borg column (section (c): other work 0.4275, production 0.8025), fits both:
/// Borg within 3 points of every Borg share and at most 1 % overloaded, MASB within 5 of every
/// MASB share and at most 0.5 % overloaded (measured: Borg STA 5.84, TA 2.33, PA 54.66, DA
/// 36.74, overloaded 0.41 %; MASB idle 0.84, STA 1.34, TA 3.34, PA 69.02, DA 25.44, overloaded
/// 0.01 %).
///
/// [`UsageModel::overload_split`]: engine::usage_model::UsageModel::overload_split
#[test]
fn the_memory_split_sets_masb_da_on_the_real_trace_and_the_default_fits_both_columns() {
    let (root, parquet) = ingested_8h();
    let base = RunConfig {
        hours: Some(2.0),
        ..masb_of_record()
    };
    // (shares of Table 4's order: idle, STA, TA, PA, DA, overloaded; memory used %)
    let split = engine::usage_model::UsageModel::overload_split().mem_ratio;
    assert_eq!(split, [0.35, 0.35, 0.85]);
    assert_eq!(base.usage.mem_ratio, [0.4275, 0.4275, 0.8025]);
    let run = |name: &str, is_masb: bool, mem_ratio: Option<[f64; 3]>| {
        let mut config = base.clone();
        if let Some(mem_ratio) = mem_ratio {
            config.usage.mem_ratio = mem_ratio;
        }
        let out = root.path().join(name);
        let a = if is_masb {
            run_masb(&config, &parquet, &out).averages
        } else {
            config.release = engine::release::Release::default();
            run_borg(&config, &parquet, &out).averages
        };
        (table_4_shares(&a), 100.0 * a.mem_used_ratio)
    };
    let (masb_split, masb_split_mem) = run("masb-split", true, Some(split));
    let (masb_flat, masb_flat_mem) = run("masb-flat", true, Some([0.66; 3]));
    let (masb_default, masb_default_mem) = run("masb-default", true, None);
    let (borg_split, borg_split_mem) = run("borg-split", false, Some(split));
    let (borg_flat, borg_flat_mem) = run("borg-flat", false, Some([0.66; 3]));
    let (borg_default, borg_default_mem) = run("borg-default", false, None);
    eprintln!("MASB: split {masb_split:?}, one share {masb_flat:?}, default {masb_default:?}");
    eprintln!("Borg: split {borg_split:?}, one share {borg_flat:?}, default {borg_default:?}");
    for (split, other) in [
        (masb_split_mem, masb_flat_mem),
        (borg_split_mem, borg_flat_mem),
        (masb_split_mem, masb_default_mem),
        (borg_split_mem, borg_default_mem),
    ] {
        assert!(
            (split - other).abs() < 1.0,
            "memory used {split} against {other}"
        );
    }
    assert_within(&masb_flat, TABLE_4_MASB, 5.0, "MASB, one share");
    assert!(
        masb_split[4] > masb_flat[4] + 4.0,
        "{masb_split:?} against {masb_flat:?}"
    );
    assert!(
        masb_split[4] > 22.56 + 5.0,
        "MASB, the split: {masb_split:?}"
    );
    assert_within(&borg_split, TABLE_4_BORG, 3.0, "Borg, the split");
    assert!(borg_flat[5] > 1.0, "Borg, one share: {borg_flat:?}");
    assert!(borg_flat[4] < 36.74 - 5.0, "Borg, one share: {borg_flat:?}");
    // Between them, the default, set on Borg's column, fits both: Borg within 3 points of
    // every Table 4 Borg share and at most 1 % overloaded (item 2), MASB within 5 of every
    // Table 4 MASB share and at most 0.5 % overloaded (item 3).
    assert_within(&borg_default, TABLE_4_BORG, 3.0, "Borg, the default");
    assert!(
        borg_default[5] <= 1.0,
        "Borg, the default: {borg_default:?}"
    );
    assert_within(&masb_default, TABLE_4_MASB, 5.0, "MASB, the default");
    assert!(
        masb_default[5] <= 0.5,
        "MASB, the default: {masb_default:?}"
    );
}

/// Issue 57 item 2 on the real 8 h, under the default usage model: per-task split usage
/// (production 0.8025 of its memory request, other work 0.4275), CPU compressible as Borg
/// treats it (a task's CPU may pass its request, a node's measured CPU is throttled at its
/// capacity) and the CPU share 0.39 (set on Table 5's CPU used, 43.64 %). Borg's own placements
/// then give every Table 4 share within 3 points, at most 1 % of the nodes overloaded, and
/// Table 5's CPU and memory used within a point (measured: STA 5.40, TA 2.52, PA 53.49, DA
/// 38.24, overloaded 0.34 %, CPU 43.3 %, memory 62.4 %;
/// `bench-results/default-split-2026-12-03.md`; under the split before, 0.35 / 0.85, the same
/// within 0.3 points and 0.22 % overloaded, `usage-borg-2026-11-30.md`). With CPU capped at
/// the request, STA falls more than 3 points short (2.5 %).
#[test]
fn borg_replay_under_the_default_usage_is_within_three_points_of_table_4() {
    let (root, parquet) = ingested_8h();
    let config = RunConfig {
        hours: Some(8.0),
        ..RunConfig::default()
    };
    let summary = run_borg(&config, &parquet, &root.path().join("compressible"));
    let a = &summary.averages;
    let shares = table_4_shares(a);
    assert_within(&shares, TABLE_4_BORG, 3.0, "Borg, the default");
    assert!(shares[5] <= 1.0, "overloaded {}", shares[5]);
    // Table 5's global usage under Borg.
    assert!(
        (100.0 * a.cpu_used_ratio - 43.64).abs() < 1.0,
        "{}",
        a.cpu_used_ratio
    );
    assert!(
        (100.0 * a.mem_used_ratio - 62.05).abs() < 1.0,
        "{}",
        a.mem_used_ratio
    );
    let capped = RunConfig {
        usage: engine::usage_model::UsageModel {
            cpu_compressible: false,
            ..config.usage.clone()
        },
        ..config
    };
    let capped = run_borg(&capped, &parquet, &root.path().join("capped"));
    let sta = 100.0 * capped.averages.classes["sta"] / capped.averages.nodes_online;
    assert!(sta < 6.58 - 3.0, "capped STA {sta}");
    // The model before, one share per band (memory 0.70), overloads 3.6 % of the nodes.
    let bands = RunConfig {
        usage: engine::usage_model::UsageModel::band_shares(),
        hours: Some(8.0),
        ..RunConfig::default()
    };
    let bands = run_borg(&bands, &parquet, &root.path().join("bands"));
    let over = 100.0 * bands.averages.classes["overloaded"] / bands.averages.nodes_online;
    assert!(over > 3.0, "band shares: overloaded {over}");
}

/// Seed 000 Table 2 on the real trace's first 2 hours: Borg's replay with usage drawn again
/// every 300 s under the default window sigmas (set on Table 2's 10 % row over the real 8 h,
/// `usage_model.rs`): the nodes a minute whose use rose by more than 5 and 10 points of capacity
/// within 15 % of the paper's 659 and 212 (measured 681 and 204; under the memory split
/// before 2026-12-03, 654 and 200), and every tick's counts in
/// `ticks/` equal to a count made apart from the per-minute `nodes/` samples (each machine's
/// used share of capacity against its previous minute's).
#[test]
fn usage_rises_under_windows_are_table_2s_and_match_the_node_samples() {
    let (root, parquet) = ingested_8h();
    let run = root.path().join("run");
    let mut config = RunConfig {
        hours: Some(2.0),
        nodes_every: engine::sim_time::SimDuration::from_secs(60),
        ..RunConfig::default()
    };
    config.usage.window = Some(engine::usage_model::WindowModel::default());
    let summary = run_borg(&config, &parquet, &run);
    let rises = summary.averages.rises_by_threshold().unwrap();
    eprintln!("use rises a minute by threshold: {rises:?}");
    for (k, paper) in [(0, 659.0), (1, 212.0)] {
        assert!(
            (rises[k] / paper - 1.0).abs() < 0.15,
            "use rises > {} %: {} against {paper}",
            engine::metrics::RISE_THRESHOLDS_PCT[k],
            rises[k]
        );
    }
    let nodes = read_parquet(&run.join("nodes"));
    let f64s = |name: &str| -> Vec<f64> {
        let c = nodes.column(nodes.schema().index_of(name).unwrap());
        c.as_primitive::<Float64Type>().values().to_vec()
    };
    let ticks_of = nodes.column(nodes.schema().index_of("tick").unwrap());
    let ticks_of = ticks_of.as_primitive::<UInt32Type>().values().to_vec();
    let machine = nodes.column(nodes.schema().index_of("machine_id").unwrap());
    let machine = machine.as_primitive::<UInt64Type>().values().to_vec();
    // Back to the engine's integer units (a sample is units / 1e6), so that a rise of exactly
    // a threshold is not one by rounding: used / cap rose by more than pct points when
    // 100 (u1 c0 - u0 c1) > pct c0 c1.
    let units = |name: &str| -> Vec<i128> {
        f64s(name)
            .iter()
            .map(|v| (v * 1e6).round() as i128)
            .collect()
    };
    let load = [
        units("cpu_cap"),
        units("cpu_used"),
        units("mem_cap"),
        units("mem_used"),
    ];
    let mut last: std::collections::HashMap<u64, (u32, usize)> = Default::default();
    let mut counted = vec![[0u32; 5]; summary.ticks as usize];
    for i in 0..machine.len() {
        let tick = ticks_of[i];
        if let Some(&(t, j)) = last.get(&machine[i])
            && t + 1 == tick
        {
            let rose = |cap: &[i128], used: &[i128], pct: u32| {
                100 * (used[i] * cap[j] - used[j] * cap[i]) > i128::from(pct) * cap[i] * cap[j]
            };
            for (k, &pct) in engine::metrics::RISE_THRESHOLDS_PCT.iter().enumerate() {
                if rose(&load[0], &load[1], pct) || rose(&load[2], &load[3], pct) {
                    counted[tick as usize][k] += 1;
                }
            }
        }
        last.insert(machine[i], (tick, i));
    }
    let ticks = read_parquet(&run.join("ticks"));
    for (k, pct) in engine::metrics::RISE_THRESHOLDS_PCT.iter().enumerate() {
        let name = engine::output::rises_column(*pct);
        let col = ticks.column(ticks.schema().index_of(&name).unwrap());
        let col = col.as_primitive::<UInt32Type>().values().to_vec();
        let apart: Vec<u32> = counted.iter().map(|c| c[k]).collect();
        assert_eq!(col, apart, "{name}");
    }
}

/// What `offloading_stable_da_nodes_takes_masb_da_below_table_4_on_the_real_trace` reads of a
/// run: DA and STA % of the online nodes, migrations completed a minute, MB a completed
/// migration, and MB a started one, an offload's and another's.
#[derive(Debug)]
struct Measured {
    da: f64,
    sta: f64,
    per_minute: f64,
    mb: f64,
    mb_offload: f64,
    mb_other: f64,
}

/// Issue 57 item 3 on the real trace's first 2 hours (MASB held, booked, under the usage
/// windows and the memory split the offload's period was calibrated under,
/// `UsageModel::overload_split`: the default until 2026-12-03, under which MASB's DA without
/// offloads is over 5 points above Table 4's): node agents that also move tasks off stable DA
/// nodes every 300 s until they are no
/// longer DA (`offload_every_s`, not in seed 000, off by default; seed 001 9.2's "proactive"
/// offload) take DA far below the overload-only MASB's and migrate tens of times as often,
/// while STA stays near Table 4's (measured: DA 27.61 -> 10.64 %, STA 1.20 -> 3.16 %, 17.1 ->
/// 552 migrations a minute; the 8 h over seeds 1-3 with `accept_max_use` on:
/// `bench-results/masb-da-2026-12-01.md` (a5)). What section (a6) calibrates the period on, a
/// migration's mean cost, rises with the period, offloads moving cheaper tasks than overloads
/// do, and DA with it (measured, each
/// machine's turn drawn from the seed: 303.7 MB every 300 s, 377.4 every 3360 s (the period
/// calibrated over 8 h and twenty seeds, (a8)), 487.8 overload only; DA 10.64, 22.12, 27.61 %;
/// by the offload's counters, an offload 296.1 and 349.4 MB, another migration 442.5 and 501.3).
#[test]
fn offloading_stable_da_nodes_takes_masb_da_below_table_4_on_the_real_trace() {
    let (root, parquet) = ingested_8h();
    let mut config = RunConfig {
        hours: Some(2.0),
        ..masb_of_record()
    };
    config.usage.mem_ratio = engine::usage_model::UsageModel::overload_split().mem_ratio;
    let run = |name: &str, offload_every_s: u32| {
        let mut config = config.clone();
        let engine::policies::PolicyConfig::Masb(masb) = &mut config.policy else {
            unreachable!("the configuration of record runs MASB")
        };
        masb.offload_every_s = offload_every_s;
        let s = run_masb(&config, &parquet, &root.path().join(name));
        let a = &s.averages;
        let share = |class: &str| 100.0 * a.classes[class] / a.nodes_online;
        let c = &s.totals.counters;
        let (started, done, cost_mb) = (
            c["migrations_started"],
            c["migrations_completed"],
            c["migration_cost_mb"],
        );
        let (offloads, offload_mb) = (c["offload_migrations"], c["offload_cost_mb"]);
        // `migrations/` flags the same starts, with the same cost, as the counters count.
        let rows = read_parquet(&root.path().join(name).join("migrations"));
        let column = |name: &str| rows.column(rows.schema().index_of(name).unwrap()).clone();
        let (outcome, cost, flag) = (column("outcome"), column("cost_mb"), column("offload"));
        let (outcome, cost) = (
            outcome.as_string::<i32>(),
            cost.as_primitive::<Float64Type>(),
        );
        let (mut n, mut mb) = (0.0, 0.0);
        for row in (0..rows.num_rows()).filter(|&r| flag.as_boolean().value(r)) {
            if outcome.value(row) == "started" {
                (n, mb) = (n + 1.0, mb + cost.value(row));
            }
        }
        assert_eq!(n, offloads);
        assert!(
            (mb - offload_mb).abs() <= 1e-6 * offload_mb.max(1.0),
            "{mb} {offload_mb}"
        );
        Measured {
            da: share("da"),
            sta: share("sta"),
            per_minute: done / (s.simulated_s / 60.0),
            mb: cost_mb / done.max(1.0),
            mb_offload: offload_mb / offloads.max(1.0),
            mb_other: (cost_mb - offload_mb) / (started - offloads).max(1.0),
        }
    };
    let only = run("overload-only", 0);
    assert_eq!(only.mb_offload, 0.0, "no offloads without the option");
    let offload = run("offload", 300);
    let calibrated = run("offload-calibrated", 3360);
    eprintln!("overload only {only:?}\nevery 300 s {offload:?}\nevery 3360 s {calibrated:?}");
    for m in [&offload, &calibrated] {
        assert!(m.mb_offload > 0.0 && m.mb_offload < m.mb_other, "{m:?}");
    }
    assert!(
        offload.mb < calibrated.mb && calibrated.mb < only.mb,
        "MB a migration: {offload:?} (300 s) {calibrated:?} (3360 s) {only:?} (overload only)"
    );
    assert!(offload.da < calibrated.da && calibrated.da < only.da);
    let (da, da_offload) = (only.da, offload.da);
    let (sta, sta_offload) = (only.sta, offload.sta);
    let (rate, rate_offload) = (only.per_minute, offload.per_minute);
    assert!(
        da > 22.56 + 5.0 && da_offload < 22.56 - 5.0,
        "DA {da} -> {da_offload}"
    );
    assert!(sta_offload < 3.91 + 3.0, "STA {sta} -> {sta_offload}");
    assert!(
        rate < 30.0 && rate_offload > 10.0 * rate,
        "{rate} -> {rate_offload}"
    );
}

/// Each whole hour's mean share (% of the online nodes, CLASSES order) of a run's `ticks/`.
fn hourly_shares(run: &Path) -> Vec<[f64; 6]> {
    let ticks = read_parquet(&run.join("ticks"));
    let column = |name: &str| {
        let col = ticks.column(ticks.schema().index_of(name).unwrap());
        col.as_primitive::<UInt32Type>().values().to_vec()
    };
    let online = column("nodes_online");
    let classes = CLASSES.map(column);
    let tick = column("tick");
    let mut hours = vec![([0.0; 6], 0.0); tick.len().div_ceil(60)];
    for (i, t) in tick.iter().enumerate() {
        let (sums, n) = &mut hours[*t as usize / 60];
        for (sum, class) in sums.iter_mut().zip(&classes) {
            *sum += 100.0 * f64::from(class[i]) / f64::from(online[i]);
        }
        *n += 1.0;
    }
    hours.retain(|(_, n)| *n == 60.0);
    hours.iter().map(|(sums, n)| sums.map(|s| s / n)).collect()
}

/// Of the nodes sampled (`nodes/`) at both of a run's last two samples: (those that received a
/// completed migration between them and sent none, those that neither received nor sent one),
/// each as (count, % in DA at the first sample, % in DA at the second).
fn da_of_migration_targets(run: &Path) -> [(usize, f64, f64); 2] {
    let nodes = read_parquet(&run.join("nodes"));
    let column = |name: &str| nodes.column(nodes.schema().index_of(name).unwrap()).clone();
    let (time, machine, class) = (column("time_us"), column("machine_id"), column("class"));
    let time = time.as_primitive::<Int64Type>().values();
    let machine = machine.as_primitive::<UInt64Type>().values();
    let class = class.as_string::<i32>();
    let mut times: Vec<i64> = time.to_vec();
    times.sort_unstable();
    times.dedup();
    let [.., first, second] = times[..] else {
        panic!("fewer than two node samples")
    };
    let da_at = |at: i64| -> BTreeMap<u64, bool> {
        (0..nodes.num_rows())
            .filter(|&i| time[i] == at)
            .map(|i| (machine[i], class.value(i) == "da"))
            .collect()
    };
    let (before, after) = (da_at(first), da_at(second));
    let moves = read_parquet(&run.join("migrations"));
    let column = |name: &str| moves.column(moves.schema().index_of(name).unwrap()).clone();
    let (time, outcome) = (column("time_us"), column("outcome"));
    let (source, target) = (column("source_machine"), column("target_machine"));
    let time = time.as_primitive::<Int64Type>();
    let outcome = outcome.as_string::<i32>();
    let source = source.as_primitive::<UInt64Type>();
    let target = target.as_primitive::<UInt64Type>();
    let (mut got, mut sent) = (BTreeSet::new(), BTreeSet::new());
    for i in 0..moves.num_rows() {
        let t = time.value(i);
        if outcome.value(i) == "completed" && t > first && t <= second && !target.is_null(i) {
            got.insert(target.value(i));
            sent.insert(source.value(i));
        }
    }
    let group = |keep: &dyn Fn(u64) -> bool| {
        let ids: Vec<u64> = before
            .keys()
            .filter(|m| after.contains_key(m) && keep(**m))
            .copied()
            .collect();
        let share = |da: &BTreeMap<u64, bool>| {
            100.0 * ids.iter().filter(|m| da[m]).count() as f64 / ids.len().max(1) as f64
        };
        (ids.len(), share(&before), share(&after))
    };
    [
        group(&|m| got.contains(&m) && !sent.contains(&m)),
        group(&|m| !got.contains(&m) && !sent.contains(&m)),
    ]
}

/// Issue 57 item 3 hour by hour on the real trace's 8 h (`bench-results/masb-long-2026-12-03.md`,
/// seeds 1-20): the configuration of record is within 5 points of every Table 4 MASB share over
/// the 8 h, but its DA leaves the band in the last hours because it migrates. Without the usage
/// windows (every task's modelled usage constant) no node goes over, MASB never migrates, and
/// every share is within 5 points of Table 4's MASB column in every hour (in 19 of 20 seeds;
/// measured, seed 1: DA 23.06 % in hour 0, 23.77 in hour 7). With them it migrates (~11 a
/// minute), and seed 000's SRAS aims at tight targets, which on this cell, where memory runs
/// out first, are tight in memory: the nodes that receive migrated tasks turn DA (27.9 -> 45.0 %
/// between the last two node samples, the others 25.2 -> 27.2; in seed 000's other units of
/// SRAS too), so MASB's DA rises over the no-migration run's hour by hour (+2.3 points in hour
/// 0, +5.7 in hour 7: 29.46 %).
#[test]
fn masb_migrations_turn_their_targets_da_and_raise_its_da_hour_by_hour() {
    let (root, parquet) = ingested_8h();
    let record = RunConfig {
        hours: Some(8.0),
        ..masb_of_record()
    };
    let mut still = record.clone();
    still.usage.window = None;
    let migrations = |s: &engine::RunSummary| s.totals.counters["migrations_completed"];
    let (record_run, still_run) = (root.path().join("record"), root.path().join("still"));
    let summary = run_masb(&record, &parquet, &record_run);
    assert_eq!(migrations(&run_masb(&still, &parquet, &still_run)), 0.0);
    let moved = migrations(&summary);
    assert!(moved > 8.0 * 60.0, "{moved} migrations in 8 h");
    // Item 3's target over the 8 h, as Table 4 averages: every share within 5 points, at most
    // 0.5 % overloaded (measured: idle 0.21, STA 1.24, TA 4.13, PA 67.94, DA 26.47, overloaded
    // 0.01 %; 11.5 migrations a minute at 451 MB).
    let average = table_4_shares(&summary.averages);
    assert_within(&average, TABLE_4_MASB, 5.0, "the record over 8 h");
    assert!(average[5] < 0.5, "{average:?}");

    let (with, without) = (hourly_shares(&record_run), hourly_shares(&still_run));
    assert_eq!((with.len(), without.len()), (8, 8));
    for (hour, shares) in without.iter().enumerate() {
        assert_within(
            shares,
            TABLE_4_MASB,
            5.0,
            &format!("no migrations, hour {hour}"),
        );
    }
    let da = |hours: &[[f64; 6]], hour: usize| hours[hour][4];
    let (rise_first, rise_last) = (
        da(&with, 0) - da(&without, 0),
        da(&with, 7) - da(&without, 7),
    );
    eprintln!(
        "DA over the run without migrations: hour 0 {rise_first:+.2}, hour 7 {rise_last:+.2}"
    );
    assert!(rise_last > 4.0 && rise_last > rise_first + 2.0);
    assert!(da(&with, 7) > TABLE_4_MASB[4] + 5.0, "{with:?}");

    let [targets, others] = da_of_migration_targets(&record_run);
    eprintln!("targets {targets:?} others {others:?}");
    assert!(targets.0 > 100 && others.0 > 10 * targets.0);
    assert!(targets.2 - targets.1 > (others.2 - others.1) + 10.0);
}
