//! The choices a broker agent (BA) and a node agent (NA) make in MASB's protocol, as pure
//! functions of a broker's cache and a random stream (SPEC 6, seed 000 sections 4-5):
//!
//! - [`initial_candidates`]: for a new task, score at most `initial_candidates` (200) matching,
//!   fresh cache entries from a random offset with SIAS (on *requested* resources); the BA then
//!   asks the best nodes in a score-weighted random order ([`weighted_order`]).
//! - [`migration_candidates`]: for a task leaving an overloaded node, score at most
//!   `migration_scan` (2,000) matching entries with SRAS (on *actual* usage), draw
//!   `migration_candidates` (15) by score weight, and add **forced** candidates (total capacity and
//!   constraints fit, free resources do not) when too few nodes can take the task.
//! - [`accepts`] / [`final_check`]: a target's answer to a migration request and to the process
//!   request; [`target_order`]: the source's re-scoring of acceptors with fresh usage, forced
//!   candidates last.
//!
//! Submodules: `draw.rs` (score-weighted random orders), `initial.rs` (a new task's candidates
//! and asking order), `migration.rs` (a migrating task's candidates and its targets' answers);
//! this file holds what they read: the cache entries, the demand, the scan of the cache.

mod draw;
mod initial;
mod migration;

pub use draw::{DrawScratch, draw_to_front, drawn_order, weighted_order, weighted_order_into};
pub use initial::{ScoreScratch, initial_asks, initial_candidates, initial_top, window_offset};
pub use migration::{MigrationScratch, accepts, final_check, migration_candidates, target_order};

use ingest::rng::Rng;

use super::score::NodeState;
use super::{MasbConfig, SiasNodeLoad};
use crate::ids::NodeIdx;

/// What a broker knows of a node (normalised units), from the node's last report.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CacheEntry {
    /// The node.
    pub node: NodeIdx,
    /// Capacity.
    pub cpu_cap: f64,
    /// Memory capacity.
    pub mem_cap: f64,
    /// Requested by its tasks (and incoming migrations).
    pub cpu_req: f64,
    /// Memory requested.
    pub mem_req: f64,
    /// Used by its tasks (and incoming migrations).
    pub cpu_used: f64,
    /// Memory used.
    pub mem_used: f64,
    /// When the report was made, seconds of simulated time.
    pub reported_s: f64,
}

impl CacheEntry {
    /// A node not heard of yet (`reported_s` = -inf: never fresh).
    pub fn unset() -> CacheEntry {
        CacheEntry {
            reported_s: f64::NEG_INFINITY,
            ..CacheEntry::default()
        }
    }

    /// Whether this report replaces `cached` of its node: it is at least as new (the one rule
    /// of every cache store: `store`, the shared cache's `ReportBook::store_into`, a broker's
    /// fresh reports).
    pub fn supersedes(&self, cached: &CacheEntry) -> bool {
        self.reported_s >= cached.reported_s
    }

    /// Keeps `entry` in `cache` (indexed by node, grown as needed) unless the cache holds a
    /// newer report of its node.
    pub fn store(cache: &mut Vec<CacheEntry>, entry: CacheEntry) {
        let i = entry.node.index();
        if cache.len() <= i {
            cache.resize(i + 1, CacheEntry::unset());
        }
        if entry.supersedes(&cache[i]) {
            cache[i] = entry;
        }
    }

    /// The node as its requested totals (what SIAS scores under `sias_node_load = "requested"`).
    pub fn requested(&self) -> NodeState {
        NodeState {
            cpu_cap: self.cpu_cap,
            mem_cap: self.mem_cap,
            cpu: self.cpu_req,
            mem: self.mem_req,
        }
    }

    /// The node as SIAS reads it before the new task: its requested totals or its usage
    /// (`sias_node_load`).
    pub fn sias_load(&self, load: SiasNodeLoad) -> NodeState {
        match load {
            SiasNodeLoad::Requested => self.requested(),
            SiasNodeLoad::Used => self.used(),
        }
    }

    /// This report with a new task's request added to what its node uses and requests: a
    /// broker's booking of a task it sent the node (`MasbConfig::book_asks`).
    pub fn booked(&self, cpu_req: f64, mem_req: f64) -> CacheEntry {
        CacheEntry {
            cpu_req: self.cpu_req + cpu_req,
            mem_req: self.mem_req + mem_req,
            cpu_used: self.cpu_used + cpu_req,
            mem_used: self.mem_used + mem_req,
            ..*self
        }
    }

    /// The node as its actual usage (what SRAS scores).
    pub fn used(&self) -> NodeState {
        NodeState {
            cpu_cap: self.cpu_cap,
            mem_cap: self.mem_cap,
            cpu: self.cpu_used,
            mem: self.mem_used,
        }
    }
}

/// A task's demand (normalised units).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Demand {
    /// CPU requested.
    pub cpu_req: f64,
    /// Memory requested.
    pub mem_req: f64,
    /// CPU in use.
    pub cpu_use: f64,
    /// Memory in use.
    pub mem_use: f64,
}

/// A scored candidate node.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recommendation {
    /// The node.
    pub node: NodeIdx,
    /// Its score (0 for forced candidates).
    pub score: f64,
    /// Forced: the node must take the task though its free resources do not fit.
    pub forced: bool,
}

/// A broker's cache as the selections read it: the entries, and when known the positions of
/// those whose nodes can host the task (from a [`MatchMemo`](crate::match_memo::MatchMemo); ascending).
#[derive(Debug, Clone, Copy)]
pub struct CacheView<'a> {
    /// The cache, by node index.
    pub entries: &'a [CacheEntry],
    /// Positions in `entries` of the nodes meeting the task's constraints, if known, with which
    /// nodes are online: a scan over them need not test the constraints again.
    pub matching: Option<(&'a [u32], &'a [bool])>,
    /// Where unconstrained tasks fit, when current (initial allocation only).
    pub fit: Option<&'a super::fit::FitIndex>,
    /// An index current for this round, to tell which entries are fresh and whose nodes are
    /// online without reading them (initial allocation only: scans that exclude no node).
    pub ok: Option<&'a super::fit::FitIndex>,
}

impl<'a> CacheView<'a> {
    /// The whole cache, matching unknown.
    pub fn all(entries: &'a [CacheEntry]) -> Self {
        CacheView {
            entries,
            matching: None,
            fit: None,
            ok: None,
        }
    }
}
/// Positions of the entries fresh at `now_s`, matching `matches` (online, meeting the
/// constraints, not `exclude`), at most `limit` of them, in cache order from a random offset,
/// appended to `out`. With the view's matching positions only those are visited, tested for
/// being fresh, online and not `exclude` (by the view's `ok` index, without reading the entries,
/// when it is given and nothing is excluded); the entries and the random draw are the same as
/// without.
pub(super) fn scan(
    view: CacheView<'_>,
    now_s: f64,
    limit: u32,
    (config, exclude): (&MasbConfig, NodeIdx),
    rng: &mut Rng,
    matches: &dyn Fn(NodeIdx) -> bool,
    out: &mut Vec<u32>,
) {
    let cache = view.entries;
    let n = cache.len();
    let offset = if n == 0 {
        0
    } else {
        rng.below(n as u64) as usize
    };
    let ttl = config.cache_ttl_s as f64;
    let fresh = |e: &CacheEntry| now_s - e.reported_s <= ttl && e.node != exclude;
    match view.matching {
        None => out.extend(
            (offset..n)
                .chain(0..offset)
                .filter(|&p| fresh(&cache[p]) && matches(cache[p].node))
                .take(limit as usize)
                .map(|p| p as u32),
        ),
        Some((p, online)) => {
            let index = view.ok.filter(|_| !exclude.is_some());
            let ok = |&x: &u32| match index {
                Some(index) => index.is_ok(x as usize),
                None => {
                    let e = &cache[x as usize];
                    fresh(e) && online.get(e.node.index()) == Some(&true)
                }
            };
            let p = &p[..p.partition_point(|&x| (x as usize) < n)];
            let start = p.partition_point(|&x| (x as usize) < offset);
            out.extend(
                p[start..]
                    .iter()
                    .chain(&p[..start])
                    .copied()
                    .filter(ok)
                    .take(limit as usize),
            );
        }
    }
}

#[cfg(test)]
mod test_cache {
    //! Cache entries and demands the submodules' tests build.
    use super::*;

    pub(super) fn entry(node: u32, used: f64, reported_s: f64) -> CacheEntry {
        CacheEntry {
            node: NodeIdx(node),
            cpu_cap: 0.5,
            mem_cap: 0.5,
            cpu_req: used,
            mem_req: used,
            cpu_used: used,
            mem_used: used,
            reported_s,
        }
    }

    pub(super) fn task(amount: f64) -> Demand {
        Demand {
            cpu_req: amount,
            mem_req: amount,
            cpu_use: amount,
            mem_use: amount,
        }
    }
}
