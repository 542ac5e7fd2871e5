//! What a task needs of a node and whether a node has it: the greedy placers' one fit rule,
//! pure functions of the node columns tested alone. The nodes say what the rule reads
//! ([`Nodes::fit_by`], the run's `fit`, `fit_by.rs`):
//!
//! - **requests** (the default): a task fits a node when the requests of the node's tasks plus
//!   its own stay within the node's capacity (every other simulator's first-fit; the
//!   production rule below then always holds too).
//! - **usage**: a task fits a node when, with it placed, the node stays stable under seed 000's
//!   RUS rule (section 6.4, SPEC 5.4): the actual usage of its tasks within its capacity, and,
//!   for a production task, the requests of its production tasks within its capacity. A task's
//!   usage is its request until the trace measures it (`Tasks::use_is_request`), or the usage
//!   model's share. So a greedy placer never makes a node overloaded when it places, as MASB's
//!   node agents accept no task that would; CPU requests of non-production tasks may exceed
//!   capacity (Borg overcommits them: the synthetic 12.5k cell requests ~105 % of its CPU).
//!
//! Either way the rule reads four amounts ([`Amounts`]): CPU and memory as the rule charges
//! them (requests or usage), and production CPU and memory requests.

use crate::cell::{Cell, Nodes};
use crate::fit_by::FitBy;
use crate::ids::TaskIdx;

/// CPU and memory as the rule charges them, production CPU request, production memory request
/// (units, signed so that room can be counted down past zero): the four amounts the fit rule
/// reads.
pub type Amounts = [i64; 4];

/// The amounts a task adds to the node it is placed on (units).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Need {
    /// CPU the rule charges: the request, or the usage (the request until measured).
    pub cpu: u32,
    /// Memory the rule charges, likewise.
    pub mem: u32,
    /// CPU requested.
    pub cpu_req: u32,
    /// Memory requested.
    pub mem_req: u32,
    /// Production priority (its requests are reserved).
    pub production: bool,
}

impl Need {
    /// What the task takes of a node, as [`Amounts`] (the requests count for a production task
    /// only).
    pub fn amounts(&self) -> Amounts {
        let prod = |v: u32| if self.production { v as i64 } else { 0 };
        [
            self.cpu as i64,
            self.mem as i64,
            prod(self.cpu_req),
            prod(self.mem_req),
        ]
    }

    /// Task `t`'s need under the cell's rule ([`Nodes::fit_by`]).
    pub fn of(cell: &Cell, t: TaskIdx) -> Need {
        let (tasks, i) = (&cell.tasks, t.index());
        let (cpu, mem) = match cell.nodes.fit_by() {
            FitBy::Requests => (tasks.cpu_req()[i], tasks.mem_req()[i]),
            FitBy::Usage => (tasks.usage()[i].cpu(), tasks.usage()[i].mem()),
        };
        Need {
            cpu,
            mem,
            cpu_req: tasks.cpu_req()[i],
            mem_req: tasks.mem_req()[i],
            production: tasks.production()[i],
        }
    }

    /// True when every node that lacks room for `other` lacks room for `self` too: `self`
    /// needs at least as much of everything the fit rule reads for `other`.
    pub fn at_least(&self, other: &Need) -> bool {
        self.cpu >= other.cpu
            && self.mem >= other.mem
            && (!other.production
                || (self.production
                    && self.cpu_req >= other.cpu_req
                    && self.mem_req >= other.mem_req))
    }
}

/// Node `n`'s CPU and memory as the rule charges them: its tasks' requests or their usage.
pub fn charged(nodes: &Nodes, n: usize) -> (u32, u32) {
    match nodes.fit_by() {
        FitBy::Requests => (nodes.cpu_req()[n], nodes.mem_req()[n]),
        FitBy::Usage => (nodes.cpu_used()[n], nodes.mem_used()[n]),
    }
}

/// Node `n`'s free [`Amounts`]: capacity less what the rule charges, and capacity less
/// production requests.
pub fn free_amounts(nodes: &Nodes, n: usize) -> Amounts {
    let (c, m) = (nodes.cpu_cap()[n] as i64, nodes.mem_cap()[n] as i64);
    let (cpu, mem) = charged(nodes, n);
    [
        c - cpu as i64,
        m - mem as i64,
        c - nodes.prod_cpu_req()[n] as i64,
        m - nodes.prod_mem_req()[n] as i64,
    ]
}

/// Whether `free` has room for `want` in every amount.
pub fn covers(free: &Amounts, want: &Amounts) -> bool {
    free.iter().zip(want).all(|(f, w)| f >= w)
}

/// Whether node `n` is online and has room for `need` (the module's rule; constraints are
/// checked by the caller).
pub fn fits(nodes: &Nodes, n: usize, need: &Need) -> bool {
    let within = |have: u32, add: u32, cap: u32| have as u64 + add as u64 <= cap as u64;
    let (cpu, mem) = charged(nodes, n);
    nodes.online()[n]
        && within(cpu, need.cpu, nodes.cpu_cap()[n])
        && within(mem, need.mem, nodes.mem_cap()[n])
        && (!need.production
            || (within(nodes.prod_cpu_req()[n], need.cpu_req, nodes.cpu_cap()[n])
                && within(nodes.prod_mem_req()[n], need.mem_req, nodes.mem_cap()[n])))
}

/// The shares of node `n`'s CPU and memory left free (as the rule charges them) with `need`
/// placed on it, summed (0 = full in both, 2 = empty): what best-fit makes least. The node must
/// fit `need`.
pub fn free_after(nodes: &Nodes, n: usize, need: &Need) -> f64 {
    let share = |used: u32, add: u32, cap: u32| {
        if cap == 0 {
            0.0
        } else {
            (cap as f64 - used as f64 - add as f64) / cap as f64
        }
    };
    let (cpu, mem) = charged(nodes, n);
    share(cpu, need.cpu, nodes.cpu_cap()[n]) + share(mem, need.mem, nodes.mem_cap()[n])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One online node of capacity (100, 100) using (60, 50), its production tasks requesting
    /// (70, 40).
    fn node() -> Nodes {
        let mut nodes = Nodes::default();
        nodes.push(1);
        nodes.set_for_test(0, true, (100, 100), (60, 50), (70, 40));
        nodes
    }

    fn need(cpu: u32, mem: u32, req: (u32, u32), production: bool) -> Need {
        Need {
            cpu,
            mem,
            cpu_req: req.0,
            mem_req: req.1,
            production,
        }
    }

    #[test]
    fn fit_is_usage_within_capacity_and_production_requests_within_capacity() {
        let mut nodes = node();
        // Usage: 60 + 40 = 100 fits exactly, 41 does not; memory likewise.
        assert!(fits(&nodes, 0, &need(40, 50, (90, 90), false)));
        assert!(!fits(&nodes, 0, &need(41, 0, (0, 0), false)));
        assert!(!fits(&nodes, 0, &need(0, 51, (0, 0), false)));
        // A production task's request is reserved: 70 + 30 = 100 fits, 70 + 31 does not,
        // whatever its usage; a non-production task's request is not looked at.
        assert!(fits(&nodes, 0, &need(10, 10, (30, 60), true)));
        assert!(!fits(&nodes, 0, &need(10, 10, (31, 10), true)));
        assert!(!fits(&nodes, 0, &need(10, 10, (10, 61), true)));
        assert!(fits(&nodes, 0, &need(10, 10, (31, 61), false)));
        nodes.set_for_test(0, false, (100, 100), (60, 50), (70, 40));
        assert!(!fits(&nodes, 0, &need(0, 0, (0, 0), false)));
    }

    /// The same node by requests and by usage: using (60, 50) of (100, 100) while its tasks
    /// request (95, 80). By requests a (10, 10) task does not fit (95 + 10 > 100), a (5, 20)
    /// one does exactly; by usage both do. Best-fit's shares follow the rule too.
    #[test]
    fn the_rule_reads_requests_or_usage() {
        let mut nodes = node();
        nodes.set_requests_for_test(0, (95, 80), FitBy::Requests);
        assert!(!fits(&nodes, 0, &need(10, 10, (10, 10), false)));
        assert!(fits(&nodes, 0, &need(5, 20, (5, 20), false)));
        assert!(!fits(&nodes, 0, &need(5, 21, (5, 21), false)));
        assert_eq!(free_amounts(&nodes, 0), [5, 20, 30, 60]);
        let left = free_after(&nodes, 0, &need(5, 10, (5, 10), false));
        assert!((left - 0.1).abs() < 1e-12, "{left}");
        nodes.set_requests_for_test(0, (95, 80), FitBy::Usage);
        assert!(fits(&nodes, 0, &need(10, 10, (10, 10), false)));
        assert_eq!(free_amounts(&nodes, 0), [40, 50, 30, 60]);
    }

    /// `Cell::charge` (what a task's end frees, read by the replay, which cannot call this
    /// module) is `Need::of(..).amounts()`: by requests and by usage, production or not. A
    /// production task's requests count; a batch one's do not.
    #[test]
    fn the_cells_charge_is_the_needs_amounts() {
        for fit_by in [FitBy::Requests, FitBy::Usage] {
            let mut cell = Cell::default();
            cell.set_fit_by(fit_by);
            for (k, priority) in [0u8, 9].into_iter().enumerate() {
                let t = cell.tasks.alloc(1, k as u32, priority, 0);
                cell.set_request(t, 300, 200);
                cell.set_usage(t, 120, 80);
                let want = Need::of(&cell, t).amounts();
                assert_eq!(cell.charge(t), want, "{fit_by:?} priority {priority}");
                assert_eq!(want[2] > 0, priority >= ingest::codes::PRODUCTION_PRIORITY);
            }
        }
    }

    #[test]
    fn free_after_sums_the_shares_left() {
        let nodes = node();
        // (100 - 60 - 20) / 100 + (100 - 50 - 10) / 100 = 0.2 + 0.4.
        let left = free_after(&nodes, 0, &need(20, 10, (0, 0), false));
        assert!((left - 0.6).abs() < 1e-12, "{left}");
    }

    #[test]
    fn at_least_is_the_fit_rules_order() {
        let small = need(10, 10, (20, 20), false);
        assert!(need(10, 10, (0, 0), false).at_least(&small));
        assert!(need(11, 12, (0, 0), true).at_least(&small));
        assert!(!need(9, 12, (0, 0), false).at_least(&small));
        let small_prod = need(10, 10, (20, 20), true);
        // A non-production task is not refused for want of production room.
        assert!(!need(50, 50, (50, 50), false).at_least(&small_prod));
        assert!(need(10, 10, (20, 20), true).at_least(&small_prod));
        assert!(!need(10, 10, (19, 20), true).at_least(&small_prod));
        // Exhaustively on a small grid: whenever `a.at_least(b)` and `b` does not fit the node,
        // `a` does not either.
        let nodes = node();
        let grid = |f: &mut dyn FnMut(Need)| {
            for cpu in (0..=60).step_by(15) {
                for mem in (0..=60).step_by(15) {
                    for req in [(0, 0), (30, 60), (40, 70)] {
                        for production in [false, true] {
                            f(need(cpu, mem, req, production));
                        }
                    }
                }
            }
        };
        grid(&mut |a| {
            grid(&mut |b| {
                if a.at_least(&b) && !fits(&nodes, 0, &b) {
                    assert!(!fits(&nodes, 0, &a), "{a:?} >= {b:?}");
                }
            })
        });
    }
}
