//! Seed 003's published values and `results.md` for the federation experiments: our means over
//! seeds beside the paper's numbers, each comparison computed, not asserted.

use engine::federation::{BrokerPolicy, VmScheduler};

use super::federation::{Case, FACTORS, FedRow, mean};

/// The paper's makespans (min) at 10,000 PSE-1 and 12,000 PSE-2 jobs, per broker (LLTF, FLTF,
/// LTIR) and scheduler (PSO, ACO, BE, GA) (section 4.3, "Effects of number of jobs").
const MAKESPAN_AT_MAX: [[[f64; 4]; 3]; 2] = [
    [
        [664.75, 692.81, 727.51, 952.65],
        [732.57, 759.23, 775.94, 1_394.67],
        [740.74, 777.60, 840.05, 1_411.05],
    ],
    [
        [5_620.53, 5_825.82, 6_140.81, 6_364.92],
        [6_064.37, 6_205.22, 6_504.55, 7_056.55],
        [6_068.54, 6_251.19, 6_539.15, 7_075.16],
    ],
];
/// LLTF's average makespan gain over FLTF and LTIR, %, PSE-1 then PSE-2.
const LLTF_GAIN: [[f64; 2]; 2] = [[17.05, 19.41], [7.28, 7.64]];
/// Table 3: PSO's average (makespan, flowtime) gain over BE and over GA, %, PSE-1 then PSE-2.
const PSO_GAIN: [[(f64, f64); 2]; 2] = [
    [(10.62, 9.32), (46.45, 11.24)],
    [(7.58, 6.69), (27.09, 9.52)],
];
/// Table 4: the range over schedulers of the priority gains, % (makespan, flowtime).
const PRIORITY_GAIN: [[(f64, f64); 2]; 2] =
    [[(14.3, 16.1), (12.7, 13.5)], [(1.3, 1.4), (3.3, 4.2)]];
/// Figs. 6-7: hosts per datacenter with the lowest makespan, and the makespan gain from 10
/// hosts to there, % (PSO, ACO, BE, GA), PSE-1 then PSE-2.
const HOSTS_BEST: [[(u32, f64); 4]; 2] = [
    [(40, 65.36), (40, 64.61), (40, 59.08), (20, 12.09)],
    [(80, 82.55), (80, 82.35), (80, 79.54), (30, 53.88)],
];
/// The tolerance the issue sets on the LLTF makespans.
const TOLERANCE_PCT: f64 = 15.0;

fn b_index(b: BrokerPolicy) -> usize {
    BrokerPolicy::ALL.iter().position(|&x| x == b).unwrap_or(0)
}

fn s_index(s: VmScheduler) -> usize {
    VmScheduler::ALL.iter().position(|&x| x == s).unwrap_or(0)
}

/// The paper's makespan (min) at the largest job count.
pub fn makespan_at_max(pse: u8, broker: BrokerPolicy, scheduler: VmScheduler) -> f64 {
    MAKESPAN_AT_MAX[(pse - 1) as usize][b_index(broker)][s_index(scheduler)]
}

fn makespan(r: &FedRow) -> f64 {
    r.makespan_min
}

fn flowtime(r: &FedRow) -> f64 {
    r.weighted_flowtime_s
}

fn creation(r: &FedRow) -> f64 {
    r.creation_min
}

/// Mean over seeds of a measure for one (PSE, broker, scheduler, priorities, factor, hosts).
fn at(rows: &[FedRow], c: Case, measure: fn(&FedRow) -> f64) -> f64 {
    mean(
        rows,
        |k| {
            k.pse == c.pse
                && k.broker == c.broker
                && k.scheduler == c.scheduler
                && k.priorities == c.priorities
                && k.factor == c.factor
                && k.hosts_per_dc == c.hosts_per_dc
        },
        measure,
    )
}

fn case(pse: u8, broker: BrokerPolicy, scheduler: VmScheduler, factor: u32) -> Case {
    Case {
        pse,
        broker,
        scheduler,
        priorities: true,
        factor,
        hosts_per_dc: 20,
        vms: 100,
    }
}

/// Average over job counts of (other - ours) / other, %.
fn avg_gain(rows: &[FedRow], ours: Case, other: Case, measure: fn(&FedRow) -> f64) -> f64 {
    let gains: Vec<f64> = FACTORS
        .iter()
        .map(|&factor| {
            let a = at(rows, Case { factor, ..ours }, measure);
            let b = at(rows, Case { factor, ..other }, measure);
            100.0 * (b - a) / b
        })
        .collect();
    gains.iter().sum::<f64>() / gains.len() as f64
}

fn pct(ours: f64, paper: f64) -> f64 {
    100.0 * (ours - paper) / paper
}

/// `results.md` for experiment `name`.
pub fn markdown(name: &str, rows: &[FedRow], seeds: u64) -> String {
    let mut out = format!(
        "# Experiment {name}\n\n{seeds} seeds (1-{seeds}), {} simulations of seed 003's federated cloud (`engine/src/federation/cloud.rs`: 5 datacenters with latencies 1.5, 0.8, 1, 0.15 and 2 s; hosts of 4, 6, 4, 8 cores, as Table 1 is not in the text, all of one speed calibrated on Fig. 4a's four LLTF makespans at 10,000 PSE-1 jobs alone, so every other number here is a prediction; flowtime counts each job's wait for its VMs, as the paper defines it; VM creation pays each message to a host the datacenter's latency; jobs run time-shared). Each cell is the mean over seeds.\n\n",
        rows.len()
    );
    if name == "federation-hosts" {
        hosts(rows, &mut out);
    } else {
        jobs(rows, &mut out);
    }
    out
}

fn jobs(rows: &[FedRow], out: &mut String) {
    for pse in [1u8, 2] {
        let per = if pse == 1 { 25 } else { 30 };
        for (title, measure, scale) in [
            ("makespan (min)", makespan as fn(&FedRow) -> f64, 1.0),
            ("weighted flowtime (10^6 s)", flowtime, 1e6),
        ] {
            *out += &format!("### PSE-{pse}: {title}, with priorities\n\n| broker | scheduler |");
            for f in FACTORS {
                *out += &format!(" {} |", f * per);
            }
            *out += &format!("\n|---|---|{}\n", "---:|".repeat(FACTORS.len()));
            for broker in BrokerPolicy::ALL {
                for scheduler in VmScheduler::ALL {
                    *out += &format!("| {} | {} |", broker.name(), scheduler.name());
                    for f in FACTORS {
                        let v = at(rows, case(pse, broker, scheduler, f), measure) / scale;
                        *out += &format!(" {v:.1} |");
                    }
                    *out += "\n";
                }
            }
            *out += "\n";
        }
    }
    *out += "## Against seed 003\n\n### Makespan at 10,000 (PSE-1) and 12,000 (PSE-2) jobs\n\n";
    *out += &format!(
        "The issue asks for LLTF's eight within {TOLERANCE_PCT} %; FLTF and LTIR are shown for the shape. VM creation is the time spent asking hosts before any job runs.\n\n| PSE | broker | scheduler | paper (min) | cellsim (min) | difference | VM creation (min) |\n|---|---|---|---:|---:|---:|---:|\n"
    );
    let mut misses = Vec::new();
    for pse in [1u8, 2] {
        for broker in BrokerPolicy::ALL {
            for scheduler in VmScheduler::ALL {
                let c = case(pse, broker, scheduler, 400);
                let (paper, ours) = (
                    makespan_at_max(pse, broker, scheduler),
                    at(rows, c, makespan),
                );
                let d = pct(ours, paper);
                if broker == BrokerPolicy::Lltf && d.abs() > TOLERANCE_PCT {
                    misses.push(format!("PSE-{pse} {}", scheduler.name()));
                }
                *out += &format!(
                    "| {pse} | {} | {} | {paper:.2} | {ours:.2} | {d:+.1} % | {:.1} |\n",
                    broker.name(),
                    scheduler.name(),
                    at(rows, c, creation)
                );
            }
        }
    }
    *out += &if misses.is_empty() {
        format!("\nEvery LLTF makespan is within {TOLERANCE_PCT} % of the paper's.\n\n")
    } else {
        format!(
            "\n**Outside {TOLERANCE_PCT} %:** {} (see the bench file for the cause).\n\n",
            misses.join(", ")
        )
    };
    *out += "### Orderings (the paper: PSO < ACO < BE < GA under every broker; LLTF below FLTF and LTIR)\n\n| PSE | broker | schedulers by mean makespan over all job counts | the paper's order |\n|---|---|---|---|\n";
    for pse in [1u8, 2] {
        for broker in BrokerPolicy::ALL {
            let mut order: Vec<(f64, VmScheduler)> = VmScheduler::ALL
                .iter()
                .map(|&s| {
                    let keep = |c: &Case| {
                        c.pse == pse && c.broker == broker && c.scheduler == s && c.priorities
                    };
                    (mean(rows, keep, makespan), s)
                })
                .collect();
            order.sort_by(|a, b| a.0.total_cmp(&b.0));
            let names: Vec<String> = order
                .iter()
                .map(|(v, s)| format!("{} {v:.1}", s.name()))
                .collect();
            let holds = in_paper_order(&order);
            *out += &format!(
                "| {pse} | {} | {} | {} |\n",
                broker.name(),
                names.join(" < "),
                if holds { "holds" } else { "differs" }
            );
        }
    }
    seed_by_seed(rows, out);
    *out += "\n### LLTF below FLTF and LTIR? (mean makespan over all job counts, min)\n\n| PSE | scheduler | LLTF | FLTF | LTIR | LLTF lowest |\n|---|---|---:|---:|---:|---|\n";
    for pse in [1u8, 2] {
        for scheduler in VmScheduler::ALL {
            let by = |broker: BrokerPolicy| {
                let keep = |c: &Case| {
                    c.pse == pse && c.broker == broker && c.scheduler == scheduler && c.priorities
                };
                mean(rows, keep, makespan)
            };
            let (l, f, t) = (
                by(BrokerPolicy::Lltf),
                by(BrokerPolicy::Fltf),
                by(BrokerPolicy::Ltir),
            );
            *out += &format!(
                "| {pse} | {} | {l:.1} | {f:.1} | {t:.1} | {} |\n",
                scheduler.name(),
                if lowest(l, [f, t]) { "yes" } else { "no" }
            );
        }
    }
    *out += "\n### LLTF's average makespan gain over FLTF and LTIR (all schedulers and job counts)\n\n| PSE | over | paper | cellsim |\n|---|---|---:|---:|\n";
    for pse in [1u8, 2] {
        for (k, other) in [BrokerPolicy::Fltf, BrokerPolicy::Ltir]
            .into_iter()
            .enumerate()
        {
            let gains: Vec<f64> = VmScheduler::ALL
                .iter()
                .map(|&s| {
                    avg_gain(
                        rows,
                        case(pse, BrokerPolicy::Lltf, s, 0),
                        case(pse, other, s, 0),
                        makespan,
                    )
                })
                .collect();
            let ours = gains.iter().sum::<f64>() / gains.len() as f64;
            *out += &format!(
                "| {pse} | {} | {:.2} % | {ours:.2} % |\n",
                other.name(),
                LLTF_GAIN[(pse - 1) as usize][k]
            );
        }
    }
    *out += "\n### Table 3: average gains under LLTF, (makespan, flowtime), % (gain = (other - ours) / other, averaged over i = 40 ... 400; the paper prints PSO's; ACO's are \"lower\")\n\n| PSE | scheduler | over BE: paper | over BE: cellsim | over GA: paper | over GA: cellsim |\n|---|---|---|---|---|---|\n";
    for pse in [1u8, 2] {
        for scheduler in [VmScheduler::Pso, VmScheduler::Aco] {
            let mut cells = Vec::new();
            for (k, other) in [VmScheduler::BestEffort, VmScheduler::Ga]
                .into_iter()
                .enumerate()
            {
                let gain = |m| {
                    avg_gain(
                        rows,
                        case(pse, BrokerPolicy::Lltf, scheduler, 0),
                        case(pse, BrokerPolicy::Lltf, other, 0),
                        m,
                    )
                };
                let paper = if scheduler == VmScheduler::Pso {
                    let (a, b) = PSO_GAIN[(pse - 1) as usize][k];
                    format!("({a:.2}, {b:.2})")
                } else {
                    "lower than PSO's".into()
                };
                cells.push(paper);
                cells.push(format!("({:.2}, {:.2})", gain(makespan), gain(flowtime)));
            }
            *out += &format!("| {pse} | {} | {} |\n", scheduler.name(), cells.join(" | "));
        }
    }
    *out += "\n### Table 4: gains from priorities under LLTF, % ((a - b) / a, a and b the makespans or flowtimes summed over i = 40 ... 400 without and with priorities)\n\n| PSE | scheduler | makespan: cellsim | flowtime: cellsim | makespan: paper (range) | flowtime: paper (range) |\n|---|---|---:|---:|---|---|\n";
    for pse in [1u8, 2] {
        for scheduler in VmScheduler::ALL {
            let summed = |priorities: bool, m: fn(&FedRow) -> f64| -> f64 {
                FACTORS
                    .iter()
                    .map(|&factor| {
                        at(
                            rows,
                            Case {
                                priorities,
                                ..case(pse, BrokerPolicy::Lltf, scheduler, factor)
                            },
                            m,
                        )
                    })
                    .sum()
            };
            let gain = |m| {
                let (a, b) = (summed(false, m), summed(true, m));
                100.0 * (a - b) / a
            };
            let ((m0, m1), (f0, f1)) = (
                PRIORITY_GAIN[(pse - 1) as usize][0],
                PRIORITY_GAIN[(pse - 1) as usize][1],
            );
            *out += &format!(
                "| {pse} | {} | {:.2} | {:.2} | {m0}-{m1} | {f0}-{f1} |\n",
                scheduler.name(),
                gain(makespan),
                gain(flowtime)
            );
        }
    }
}

/// In how many seeds `a`'s measure is strictly below `b`'s, of the seeds both have.
fn seed_wins(rows: &[FedRow], a: Case, b: Case, measure: fn(&FedRow) -> f64) -> (usize, usize) {
    let same = |k: &Case, c: &Case| {
        (
            k.pse,
            k.broker,
            k.scheduler,
            k.priorities,
            k.factor,
            k.hosts_per_dc,
        ) == (
            c.pse,
            c.broker,
            c.scheduler,
            c.priorities,
            c.factor,
            c.hosts_per_dc,
        )
    };
    let of = |c: Case| -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, f64)> = (rows.iter())
            .filter(|r| same(&r.case, &c))
            .map(|r| (r.seed, measure(r)))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    };
    let (xs, ys) = (of(a), of(b));
    let pairs: Vec<(f64, f64)> = (xs.iter())
        .filter_map(|&(seed, x)| {
            let k = ys.binary_search_by_key(&seed, |y| y.0).ok()?;
            Some((x, ys[k].1))
        })
        .collect();
    (pairs.iter().filter(|(x, y)| x < y).count(), pairs.len())
}

/// The paper's orderings counted seed by seed at its largest job counts (issue 60): each
/// claim, for makespan and flowtime, in how many seeds it holds; below 80 % of the seeds it
/// is marked.
fn seed_by_seed(rows: &[FedRow], out: &mut String) {
    *out += "\n### The paper's orderings, seed by seed (10,000 PSE-1 / 12,000 PSE-2 jobs)\n\nEach claim of section 4.3 at the largest job count: in how many seeds it holds (strictly), for makespan and for flowtime; **bold** where it holds in fewer than 80 % of the seeds (a mean's ordering, not a rule).\n\n| PSE | claim | makespan | flowtime |\n|---|---|---:|---:|\n";
    let cell = |(won, of): (usize, usize)| {
        let text = format!("{won} of {of}");
        if won * 5 < of * 4 {
            format!("**{text}**")
        } else {
            text
        }
    };
    let pair = |a: Case, b: Case| {
        (
            cell(seed_wins(rows, a, b, makespan)),
            cell(seed_wins(rows, a, b, flowtime)),
        )
    };
    let schedulers = VmScheduler::ALL;
    for pse in [1u8, 2] {
        let mut claims: Vec<(String, Case, Case)> = Vec::new();
        for broker in BrokerPolicy::ALL {
            for w in schedulers.windows(2) {
                let claim = format!("{}: {} < {}", broker.name(), w[0].name(), w[1].name());
                claims.push((
                    claim,
                    case(pse, broker, w[0], 400),
                    case(pse, broker, w[1], 400),
                ));
            }
        }
        for s in schedulers {
            for other in [BrokerPolicy::Fltf, BrokerPolicy::Ltir] {
                let claim = format!("{}: LLTF < {}", s.name(), other.name());
                let lltf = case(pse, BrokerPolicy::Lltf, s, 400);
                claims.push((claim, lltf, case(pse, other, s, 400)));
            }
        }
        for s in schedulers {
            let with = case(pse, BrokerPolicy::Lltf, s, 400);
            let without = Case {
                priorities: false,
                ..with
            };
            claims.push((
                format!("{}, LLTF: priorities < none", s.name()),
                with,
                without,
            ));
        }
        for (claim, a, b) in claims {
            let (m, f) = pair(a, b);
            *out += &format!("| {pse} | {claim} | {m} | {f} |\n");
        }
    }
}

fn hosts(rows: &[FedRow], out: &mut String) {
    let hosts: Vec<u32> = (1..=10).map(|i| 10 * i).collect();
    for pse in [1u8, 2] {
        *out += &format!(
            "### PSE-{pse} ({} jobs), LLTF: makespan (min) by hosts per datacenter (100 i VMs for 10 i hosts per datacenter)\n\n| scheduler |",
            if pse == 1 { 10_000 } else { 12_000 }
        );
        for h in &hosts {
            *out += &format!(" {h} |");
        }
        *out += &format!("\n|---|{}\n", "---:|".repeat(hosts.len()));
        for scheduler in VmScheduler::ALL {
            *out += &format!("| {} |", scheduler.name());
            for &h in &hosts {
                let keep =
                    |c: &Case| c.pse == pse && c.scheduler == scheduler && c.hosts_per_dc == h;
                *out += &format!(" {:.1} |", mean(rows, keep, makespan));
            }
            *out += "\n";
        }
        *out += "\n";
    }
    *out += "## Against seed 003\n\nWhere each scheduler's makespan is lowest, and its gain from 10 hosts per datacenter to there.\n\n| PSE | scheduler | paper: best hosts | cellsim: best hosts | paper: gain | cellsim: gain |\n|---|---|---:|---:|---:|---:|\n";
    for pse in [1u8, 2] {
        for scheduler in VmScheduler::ALL {
            let series: Vec<(u32, f64)> = hosts
                .iter()
                .map(|&h| {
                    let keep =
                        |c: &Case| c.pse == pse && c.scheduler == scheduler && c.hosts_per_dc == h;
                    (h, mean(rows, keep, makespan))
                })
                .collect();
            let best = series
                .iter()
                .copied()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0, f64::NAN));
            let gain = 100.0 * (series[0].1 - best.1) / series[0].1;
            let (paper_hosts, paper_gain) = HOSTS_BEST[(pse - 1) as usize][s_index(scheduler)];
            *out += &format!(
                "| {pse} | {} | {paper_hosts} | {} | {paper_gain:.2} % | {gain:.2} % |\n",
                scheduler.name(),
                best.0
            );
        }
    }
}

/// Whether schedulers sorted by their mean makespan (ascending, as the row prints them) come in
/// the paper's order (PSO < ACO < BE < GA).
fn in_paper_order(sorted: &[(f64, VmScheduler)]) -> bool {
    sorted.iter().map(|o| o.1).eq(VmScheduler::ALL)
}

/// Whether `v` is strictly below every one of `others`.
fn lowest(v: f64, others: [f64; 2]) -> bool {
    others.iter().all(|&o| v < o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The orderings' verdicts follow the numbers printed beside them, and flip with them.
    #[test]
    fn ordering_verdicts_flip_with_their_numbers() {
        use VmScheduler::{Aco, BestEffort, Ga, Pso};
        let sorted = |v: [f64; 4]| {
            let mut o: Vec<(f64, VmScheduler)> =
                v.into_iter().zip([Pso, Aco, BestEffort, Ga]).collect();
            o.sort_by(|a, b| a.0.total_cmp(&b.0));
            o
        };
        assert!(in_paper_order(&sorted([1.0, 2.0, 3.0, 4.0])));
        assert!(
            !in_paper_order(&sorted([2.1, 2.0, 3.0, 4.0])),
            "ACO ahead of PSO"
        );
        assert!(lowest(1.0, [1.5, 2.0]));
        assert!(!lowest(1.5, [1.5, 2.0]), "a tie is not lowest");
    }

    /// Seed by seed, by hand: PSO below ACO in seeds 1 and 3 (makespans 10 < 12, 9 < 11), above
    /// in seed 2 (13 > 12), a tie in seed 4 (no win), and seed 5 has PSO only (not counted): 2
    /// of 4; the table marks it (below 80 %) and counts flowtime on its own.
    #[test]
    fn orderings_are_counted_seed_by_seed() {
        let row = |scheduler, seed, makespan_min, weighted_flowtime_s| FedRow {
            case: case(1, BrokerPolicy::Lltf, scheduler, 400),
            seed,
            makespan_min,
            weighted_flowtime_s,
            creation_min: 0.0,
            messages: 0,
        };
        use VmScheduler::{Aco, Pso};
        let rows = [
            row(Pso, 1, 10.0, 1.0),
            row(Aco, 1, 12.0, 2.0),
            row(Pso, 2, 13.0, 1.0),
            row(Aco, 2, 12.0, 2.0),
            row(Pso, 3, 9.0, 1.0),
            row(Aco, 3, 11.0, 2.0),
            row(Pso, 4, 5.0, 1.0),
            row(Aco, 4, 5.0, 2.0),
            row(Pso, 5, 1.0, 1.0),
        ];
        let (pso, aco) = (
            case(1, BrokerPolicy::Lltf, Pso, 400),
            case(1, BrokerPolicy::Lltf, Aco, 400),
        );
        assert_eq!(seed_wins(&rows, pso, aco, makespan), (2, 4));
        assert_eq!(seed_wins(&rows, pso, aco, flowtime), (4, 4));
        let mut md = String::new();
        seed_by_seed(&rows, &mut md);
        assert!(
            md.contains("| 1 | LLTF: PSO < ACO | **2 of 4** | 4 of 4 |"),
            "{md}"
        );
    }
}
