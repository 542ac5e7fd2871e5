//! Issue 60 item 4: the structured interior point (`engine/src/nbs/interior.rs`) against
//! Clarabel on 592 random bargains of 2 to 1,000 jobs (every kind of deadline, with and without
//! each cap and the earliness tie-break), and against exact answers worked independently. The
//! bargain's value (sum_i P_i log y_i, computed here from the rates, the tie-break's term
//! added) is what is compared: each y_i is unique, but Clarabel's own y_i are 1e-6-1e-3 off on
//! these problems (the log objective is flat at the optimum), so y_i are checked against the
//! exact answers instead.

use engine::nbs::{Deadline, Job, Problem, Solver, slot_weight, solve_by};
use ingest::rng::Rng;

/// A random bargain: `n` jobs over `slots` slots.
fn random_problem(
    rng: &mut Rng,
    n: usize,
    slots: usize,
    caps: (bool, bool),
    earliness: f64,
) -> Problem {
    let slot_s = [1.0, 10.0, 60.0][rng.below(3) as usize];
    let horizon = slots as f64 * slot_s;
    let capacity: Vec<f64> = (0..slots)
        .map(|_| {
            if rng.chance(0.1) {
                0.5 + rng.f64()
            } else {
                10.0 + 1000.0 * rng.f64()
            }
        })
        .collect();
    let jobs = (0..n)
        .map(|_| {
            let cap = if caps.0 {
                0.5 + 50.0 * rng.f64()
            } else {
                f64::INFINITY
            };
            let deadline = match rng.below(4) {
                0 => Deadline::Hard(horizon * (0.2 + rng.f64())),
                1 => Deadline::Soft(horizon * (rng.f64() * 1.2 - 0.2)),
                _ => Deadline::None,
            };
            Job {
                requirement: (0.01 + rng.f64()) * horizon * 20.0,
                priority: 1.0 + rng.below(12) as f64,
                deadline,
                rate_cap: cap,
            }
        })
        .collect();
    Problem {
        slot_s,
        capacity,
        mu: [0.002, 0.1, 0.5][rng.below(3) as usize],
        earliness,
        requirement_cap: caps.1,
        jobs,
    }
}

/// Job i's weight in slot t as it bargained (a hard job named in `missed` as soft).
fn weight(p: &Problem, missed: &[usize], i: usize, t: usize) -> f64 {
    let d = match p.jobs[i].deadline {
        Deadline::Hard(d) if missed.contains(&i) => Deadline::Soft(d),
        d => d,
    };
    let w = slot_weight(d, p.mu, t as f64 * p.slot_s, (t + 1) as f64 * p.slot_s);
    if w < 1e-9 { 0.0 } else { w }
}

/// Each live job's y_i (None: outside the bargain) and the bargain's value, from the rates.
fn value(p: &Problem, x: &[f64], missed: &[usize]) -> (Vec<Option<f64>>, f64) {
    let slots = p.capacity.len();
    let scale = p.capacity.iter().copied().fold(0.0, f64::max);
    let top = p.jobs.iter().map(|j| j.priority).fold(0.0, f64::max);
    let mut total = 0.0;
    let ys = (0..p.jobs.len())
        .map(|i| {
            let j = &p.jobs[i];
            let live = j.rate_cap > 0.0
                && (0..slots).any(|t| weight(p, missed, i, t) > 0.0 && p.capacity[t] > 0.0);
            if !live {
                return None;
            }
            let y: f64 = (0..slots)
                .map(|t| weight(p, missed, i, t) * x[i * slots + t] * p.slot_s / j.requirement)
                .sum();
            let hard = matches!(j.deadline, Deadline::Hard(_)) && !missed.contains(&i);
            let bargained = match hard {
                true => j.requirement,
                false => j
                    .requirement
                    .min(j.rate_cap.min(scale) * slots as f64 * p.slot_s),
            };
            let early: f64 = (0..slots)
                .map(|t| (1.0 - (t as f64 + 0.5) / slots as f64) * x[i * slots + t] * p.slot_s)
                .sum();
            total += j.priority / top * (y.ln() + p.earliness * early / bargained);
            Some(y)
        })
        .collect();
    (ys, total)
}

/// Whether rates keep every constraint (to 1e-7 of its right-hand side); the first broken.
fn feasible(p: &Problem, x: &[f64], missed: &[usize]) -> Result<(), String> {
    let slots = p.capacity.len();
    for (t, c) in p.capacity.iter().enumerate() {
        let used: f64 = (0..p.jobs.len()).map(|i| x[i * slots + t]).sum();
        if used > c * (1.0 + 1e-7) + 1e-9 {
            return Err(format!("slot {t} uses {used} of {c}"));
        }
    }
    for (i, j) in p.jobs.iter().enumerate() {
        let rates = &x[i * slots..(i + 1) * slots];
        if !rates
            .iter()
            .all(|&r| r >= 0.0 && r <= j.rate_cap * (1.0 + 1e-7))
        {
            return Err(format!("job {i} rates {rates:?} beyond 0..{}", j.rate_cap));
        }
        let got: f64 = rates.iter().sum::<f64>() * p.slot_s;
        if p.requirement_cap && got > j.requirement * (1.0 + 1e-7) + 1e-9 {
            return Err(format!("job {i} gets {got} of {}", j.requirement));
        }
        if matches!(j.deadline, Deadline::Hard(_)) && !missed.contains(&i) {
            let by: f64 = (0..slots)
                .map(|t| weight(p, missed, i, t) * rates[t] * p.slot_s)
                .sum();
            if by < j.requirement * (1.0 - 1e-7) {
                return Err(format!("hard job {i} gets {by} of {}", j.requirement));
            }
        }
    }
    Ok(())
}

/// How the structured solve of `p` compares with Clarabel's.
enum Outcome {
    /// It stalled and Clarabel solved it.
    FellBack,
    /// The two relaxed different hard jobs, or Clarabel stopped or its rates break a
    /// constraint: no like comparison (the structured rates were checked feasible).
    Unlike,
    /// Both feasible with the same relaxed jobs: the structured value less Clarabel's, over
    /// Clarabel's (at least 1).
    Compared(f64),
}

fn compare(p: &Problem, case: &str) -> Outcome {
    let structured = solve_by(p, Solver::Structured).unwrap();
    if structured.solved_by != Solver::Structured {
        return Outcome::FellBack;
    }
    if let Err(e) = feasible(p, &structured.x, &structured.missed_hard) {
        panic!("{case}: structured: {e}");
    }
    let Ok(clarabel) = solve_by(p, Solver::Clarabel) else {
        return Outcome::Unlike;
    };
    assert_eq!(structured.left_out, clarabel.left_out, "{case}");
    let (mut a, mut b) = (structured.missed_hard.clone(), clarabel.missed_hard.clone());
    a.sort_unstable();
    b.sort_unstable();
    if a != b || feasible(p, &clarabel.x, &clarabel.missed_hard).is_err() {
        return Outcome::Unlike;
    }
    let (_, v_s) = value(p, &structured.x, &structured.missed_hard);
    let (_, v_c) = value(p, &clarabel.x, &clarabel.missed_hard);
    Outcome::Compared((v_s - v_c) / v_c.abs().max(1.0))
}

/// Over the random bargains: the structured solver solves at least 97 % itself, never worse
/// than Clarabel by more than 1e-6 of the value where both are feasible, and within 1e-6 of
/// it in at least 90 % of those (the rest: Clarabel stopping short, the structured value
/// higher).
#[test]
fn structured_agrees_with_clarabel() {
    let mut rng = Rng::new(60, 4);
    let (mut cases, mut fell_back, mut unlike, mut within, mut higher) = (0, 0, 0, 0, 0);
    let sizes = [
        (2, 1, 40),
        (3, 2, 40),
        (6, 5, 40),
        (20, 10, 20),
        (100, 10, 6),
        (100, 30, 4),
        (1000, 10, 2),
    ];
    for (n, slots, reps) in sizes {
        for rep in 0..reps {
            for caps in [(false, false), (true, false), (false, true), (true, true)] {
                let earliness = if rep % 2 == 0 { 0.0 } else { 1e-3 };
                let p = random_problem(&mut rng, n, slots, caps, earliness);
                let case = format!("{n} jobs x {slots} slots, rep {rep}, caps {caps:?}");
                cases += 1;
                match compare(&p, &case) {
                    Outcome::FellBack => fell_back += 1,
                    Outcome::Unlike => unlike += 1,
                    Outcome::Compared(d) => {
                        assert!(d >= -1e-6, "{case}: structured below Clarabel by {d:e}");
                        if d.abs() <= 1e-6 {
                            within += 1;
                        } else {
                            higher += 1;
                        }
                    }
                }
            }
        }
    }
    let compared = within + higher;
    eprintln!(
        "{cases} bargains: {fell_back} left to Clarabel, {unlike} not alike, {within} of \
         {compared} compared within 1e-6 of Clarabel's value, {higher} higher"
    );
    assert!(
        fell_back * 100 <= cases * 3,
        "{fell_back} of {cases} fell back"
    );
    assert!(
        within * 10 >= compared * 9,
        "{within} of {compared} within 1e-6"
    );
}

/// One slot without deadlines or the tie-break: the bargain is water-filling, rates
/// min(cap_i, P_i / price) with the price clearing the capacity, found here by bisection;
/// the structured rates match to 1e-7, and the capacity price (`Allocation::price`, the
/// clusters' congestion price) is the bisection's to 1e-6 (Clarabel's to 1e-4: its duals stop
/// at its 1e-8 feasibility tolerance, 5e-6 off here).
#[test]
fn one_slot_is_water_filling() {
    let mut rng = Rng::new(60, 5);
    for n in [1, 2, 5, 50, 500] {
        let mut p = random_problem(&mut rng, n, 1, (true, false), 0.0);
        p.capacity = vec![20.0 * n as f64];
        for j in p.jobs.iter_mut() {
            j.deadline = Deadline::None;
        }
        let rate = |price: f64, j: &Job| j.rate_cap.min(j.priority / price);
        let (mut lo, mut hi): (f64, f64) = (1e-12, 1e12);
        for _ in 0..200 {
            let mid = (lo * hi).sqrt();
            let used: f64 = p.jobs.iter().map(|j| rate(mid, j)).sum();
            if used > p.capacity[0] {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let a = solve_by(&p, Solver::Structured).unwrap();
        assert_eq!(a.solved_by, Solver::Structured);
        for (solved, tol) in [(&a, 1e-6), (&solve_by(&p, Solver::Clarabel).unwrap(), 1e-4)] {
            let price = solved.congestion_price();
            assert!(
                (price - hi).abs() <= tol * hi + 1e-9,
                "{n} jobs, {:?}: price {price} against {hi}",
                solved.solved_by
            );
        }
        for (i, j) in p.jobs.iter().enumerate() {
            let want = rate(hi, j);
            assert!(
                (a.rate(i, 0) - want).abs() <= 1e-7 * want.max(1.0),
                "{n} jobs, job {i}: {} against {want}",
                a.rate(i, 0)
            );
        }
    }
}

/// A slot without capacity gives nothing to anyone (by hand: job 2's hard deadline at 1 s
/// falls in slot 0, which has none, so it is named missed and bargains as soft, slot 1 worth
/// a constant (1 - e^-0.1) / 0.1 to it; log utilities with equal priorities then split slot
/// 1's 8 equally).
#[test]
fn a_slot_without_capacity_gives_nothing() {
    let job = |deadline| Job {
        requirement: 100.0,
        priority: 1.0,
        deadline,
        rate_cap: f64::INFINITY,
    };
    let p = Problem {
        slot_s: 1.0,
        capacity: vec![0.0, 8.0],
        mu: 0.1,
        earliness: 0.0,
        requirement_cap: false,
        jobs: vec![
            job(Deadline::None),
            job(Deadline::None),
            job(Deadline::Hard(1.0)),
        ],
    };
    let a = solve_by(&p, Solver::Structured).unwrap();
    assert_eq!(a.solved_by, Solver::Structured);
    assert_eq!(a.missed_hard, [2]);
    for i in 0..3 {
        assert_eq!(a.rate(i, 0), 0.0, "{a:?}");
        assert!((a.rate(i, 1) - 8.0 / 3.0).abs() < 1e-7, "{a:?}");
    }
}

/// A bargain of 1,500 jobs (six of the solver's chunks of 256 jobs) solved on 1, 2 and 8
/// threads (more than this machine's cores): the same bits each time, rates and prices, for
/// every combination of the caps (the engine's determinism across thread counts).
#[test]
fn the_same_bits_on_any_number_of_threads() {
    let mut rng = Rng::new(60, 8);
    for caps in [(false, false), (true, false), (false, true), (true, true)] {
        let p = random_problem(&mut rng, 1500, 10, caps, 0.0);
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| solve_by(&p, Solver::Structured).unwrap())
        };
        let one = on(1);
        let bits = |a: &engine::nbs::Allocation| {
            let price = a.price.iter().map(|v| v.to_bits());
            (a.x.iter().map(|v| v.to_bits()).chain(price)).collect::<Vec<u64>>()
        };
        assert!(
            one.x.iter().any(|&v| v > 0.0),
            "{caps:?}: something allocated"
        );
        for threads in [2, 8] {
            let other = on(threads);
            assert_eq!(other.iterations, one.iterations, "{caps:?} on {threads}");
            assert!(
                bits(&other) == bits(&one),
                "{caps:?}: 1 and {threads} threads"
            );
        }
    }
}
