//! Live-migration cost (`MIGRATION-COST.md`): the pre-copy model of Liu et al. (HPDC 2011) with
//! Xen's stop rules. Memory footprint M = used memory x machine memory; dirtying rate D =
//! dirty rate per CPU x used CPU + dirty share per second x M; bandwidth B.
//!
//! The defaults are fitted to the 13 costs seed 000 logs in section 5.1 (test
//! `fits_the_costs_logged_in_section_5_1`). Those costs do not grow with CPU (task 88 uses 0.1665
//! CPU and costs 128.94 MB, task 1081 uses 0.015 and costs 6,876 MB) but with memory, faster than
//! linearly: so the dirtying rate is a share of the footprint (`dirty_share_per_s` 3.0 /s,
//! `dirty_mb_per_cpu_s` 0), and a normalised memory unit is 2,490 MB (`machine_memory_mb`),
//! both from a least-squares fit in log space with the 100 MB base kept. The ten converging
//! costs are then reproduced within -28 ... +14 %; the three that do not converge (6,876 MB,
//! 3,820 MB, 6.9e10 MB) show the paper applied no stop rule, where Xen's (and cellsim's) stop
//! near 3 x M (330-800 MB for these three). Each round re-sends what was dirtied while the
//! previous one was sent, V = min(D V / B, W) with W the writable working set, until the rest fits
//! the downtime, is tiny, the round limit is hit, or the total would pass `max_total_factor` x M
//! (the last V goes as the stop-and-copy round). Without caps: M (1 - q^(n+1)) / (1 - q), q = D/B.

use super::MasbConfig;

/// A migration's traffic and duration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MigrationCost {
    /// Data sent, MB (base overhead included).
    pub cost_mb: f64,
    /// Pre-copy rounds after the first full copy.
    pub rounds: u32,
    /// Transfer time at the configured bandwidth, seconds.
    pub duration_s: f64,
}

/// The cost of migrating a task using `used_cpu` / `used_mem` (normalised).
pub fn migration_cost(used_cpu: f64, used_mem: f64, c: &MasbConfig) -> MigrationCost {
    let m = used_mem.max(0.0) * c.machine_memory_mb;
    let d = c.dirty_mb_per_cpu_s * used_cpu.max(0.0) + c.dirty_share_per_s * m;
    let b = c.bandwidth_mb_s;
    let w = c.writable_share * m;
    let (mut v, mut total, mut rounds) = (m, m, 0);
    if m > 0.0 {
        loop {
            v = (d * v / b).min(w);
            rounds += 1;
            let stop = v <= b * c.max_downtime_s
                || v < c.min_round_mb
                || rounds >= c.max_rounds
                || total + v > c.max_total_factor * m;
            total += v;
            if stop {
                break;
            }
        }
    }
    let cost_mb = c.base_overhead_mb + total;
    MigrationCost {
        cost_mb,
        rounds,
        duration_s: cost_mb / b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config where M is given directly in MB (1 normalised memory = 1 MB) and pages are
    /// dirtied by CPU only.
    fn per_mb(dirty_mb_per_cpu_s: f64) -> MasbConfig {
        MasbConfig {
            machine_memory_mb: 1.0,
            dirty_mb_per_cpu_s,
            dirty_share_per_s: 0.0,
            ..MasbConfig::default()
        }
    }

    #[test]
    fn idle_task_costs_the_base_overhead() {
        let c = MasbConfig::default();
        let idle = migration_cost(0.0, 0.0, &c);
        assert_eq!((idle.cost_mb, idle.rounds), (100.0, 0));
        assert_eq!(idle.duration_s, 0.8, "100 MB at 125 MB/s");
        // Nothing dirtied: one full copy: 100 + 0.01 x 65,536 = 755.36 MB.
        let quiet = MasbConfig {
            machine_memory_mb: 65_536.0,
            dirty_share_per_s: 0.0,
            ..c
        };
        let quiet = migration_cost(0.0, 0.01, &quiet);
        assert!((quiet.cost_mb - 755.36).abs() < 1e-9);
        assert_eq!(quiet.rounds, 1);
    }

    /// Section 5.1's logged costs (task, used CPU, used memory, logged MB) against the defaults.
    /// By hand for task 1615: M = 0.0135 x 2,490 = 33.615 MB, D = 3 x M = 100.845 MB/s, so the
    /// first round re-sends q M = 100.845 / 125 x 33.615 = 27.12 MB, within the downtime (125 x
    /// 0.3 = 37.5 MB): it is the last. 100 + 33.615 + 27.12 = 160.73 MB against the logged
    /// 183.40 (-12 %).
    #[test]
    fn fits_the_costs_logged_in_section_5_1() {
        let c = MasbConfig::default();
        let logged = [
            ("7", 0.01682, 0.005814, 106.72),
            ("243", 0.005684, 0.005798, 106.69),
            ("959", 0.008255, 0.005791, 106.67),
            ("1447", 0.0007629, 0.007675, 112.37),
            ("137", 0.04224, 0.005592, 106.25),
            ("1615", 0.02917, 0.0135, 183.40),
            ("686", 0.0321, 0.01501, 236.79),
            ("88", 0.1665, 0.01027, 128.94),
            ("159", 0.06482, 0.008408, 115.72),
            ("2072", 0.0, 0.0, 101.00),
        ];
        for (task, cpu, mem, want) in logged {
            let got = migration_cost(cpu, mem, &c).cost_mb;
            let error = got / want - 1.0;
            assert!(
                (-0.30..0.15).contains(&error),
                "task {task}: {got:.2} MB against {want}"
            );
        }
        let by_hand = 100.0 + 33.615 + 3.0 * 33.615 * 33.615 / 125.0;
        assert!((migration_cost(0.02917, 0.0135, &c).cost_mb - by_hand).abs() < 1e-9);
        // The non-converging ones stop near 3 x M where the paper's did not: task 1081 (q = 1.6)
        // sends M, then the working set (0.9 M) per round until the next would pass 3 M, and
        // that one as the stop-and-copy: M + 3 x 0.9 M = 3.7 M = 348 MB, logged 6,876.
        let capped = migration_cost(0.01498, 0.02692, &c).cost_mb;
        let by_hand = 100.0 + 3.7 * 0.02692 * 2_490.0;
        assert!((capped - by_hand).abs() < 1e-6, "{capped}");
    }

    /// M = 1,000 MB, q = D/B = 0.5: rounds send 500, 250, 125, 62.5, then 31.25 <= 37.5 (B x
    /// 0.3 s) stops: total 1,968.75 = 1,000 (1 - 0.5^6) / (1 - 0.5), plus 100 overhead.
    #[test]
    fn converging_precopy_matches_the_closed_form() {
        let c = per_mb(62.5 / 0.1); // D = 625 x 0.1 = 62.5 MB/s = B / 2
        let r = migration_cost(0.1, 1_000.0, &c);
        assert_eq!(r.rounds, 5);
        let closed_form = 1_000.0 * (1.0 - 0.5f64.powi(6)) / 0.5;
        assert!(
            (r.cost_mb - 100.0 - closed_form).abs() < 1e-9,
            "{}",
            r.cost_mb
        );
        assert!((r.duration_s - 2_068.75 / 125.0).abs() < 1e-9);
    }

    /// q = 2 never converges: V = min(2 V, 900) = 900 per round; 1,000 + 900 + 900 = 2,800, the
    /// next 900 would pass 3 x M = 3,000, so it is the stop-and-copy round: 3,700 + 100.
    #[test]
    fn diverging_precopy_stops_at_the_caps() {
        let c = per_mb(250.0 / 0.1); // D = 250 MB/s = 2 B
        let r = migration_cost(0.1, 1_000.0, &c);
        assert_eq!((r.cost_mb, r.rounds), (3_800.0, 3));
        // A round limit of 2 stops earlier: 1,000 + 900 + 900.
        let capped = MasbConfig { max_rounds: 2, ..c };
        assert_eq!(migration_cost(0.1, 1_000.0, &capped).cost_mb, 2_900.0);
    }

    #[test]
    fn cost_grows_with_cpu_activity() {
        let c = MasbConfig {
            machine_memory_mb: 65_536.0,
            dirty_mb_per_cpu_s: 2_000.0,
            ..MasbConfig::default()
        };
        let costs: Vec<f64> = [0.0, 0.01, 0.05, 0.2]
            .iter()
            .map(|cpu| migration_cost(*cpu, 0.02, &c).cost_mb)
            .collect();
        assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    }
}
