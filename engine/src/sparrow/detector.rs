//! Seed 002's FailureDetector. Every peer (and the one scheduler) subscribes the nodes it works
//! with: a master the workers holding its probes and those running its tasks, a worker the
//! masters of its place-holders. It pings each every `ping_interval`, at a phase of its own
//! drawn from the run's seed; a node that has not acknowledged a ping `failure_timeout` after
//! it was sent is dead (seed 002: 3 s).
//!
//! A live node acknowledges within two network delays, far inside the timeout, so a ping
//! changes nothing until one goes unanswered: a subscriber's verdict on a node that failed at
//! `t` comes `failure_timeout` after the first ping it sends at or after `t - net_delay` (the
//! first to arrive after the failure). Pings to live nodes are therefore not played as messages
//! (they would be nearly all of a GCD cell's traffic and decide nothing); each verdict is a
//! `Dead` message the subscriber's detector hands it at that time ([`verdict_us`]).
//!
//! A failure is a crash: the node's peer loses its state at once, and back online it is a new
//! incarnation that answers no ping of the old one, so a node that returns before the timeout is
//! still reported. Its subscribers are the peers related to it when it failed
//! ([`subscribers`]); a master that assigned a task to it later (an assignment in flight) or
//! whose task was running there learns at its own verdict too (`Action::Lost`, `mod.rs`).

use ingest::rng::hash_keys;

use super::config::SparrowConfig;
use super::peer::{Peer, agent_of};
use crate::ids::{AgentIdx, NodeIdx};

/// The random stream of the detectors' phases.
const PING_STREAM: u64 = 0x7069_6e67; // "ping"

/// When `agent`'s detector pings, microseconds past a multiple of `interval_us`.
pub fn ping_phase_us(seed: u64, agent: AgentIdx, interval_us: i64) -> i64 {
    let draw = hash_keys(seed, &[PING_STREAM, u64::from(agent.0)]);
    (draw % interval_us.max(1) as u64) as i64
}

/// When `agent`'s detector declares dead a node that failed at `failed_us` (module doc).
pub fn verdict_us(config: &SparrowConfig, seed: u64, agent: AgentIdx, failed_us: i64) -> i64 {
    let interval = config.ping_interval.us();
    let phase = ping_phase_us(seed, agent, interval);
    let first_late = failed_us - config.net_delay.us();
    let ping = first_late + (phase - first_late).rem_euclid(interval);
    ping + config.failure_timeout.us()
}

/// (subscriber, failed node) for every peer related to a node in `failed` (module doc), in
/// agent order; the failed nodes' own peers are left out (they crashed).
pub fn subscribers(agents: &[Peer], failed: &[NodeIdx]) -> Vec<(AgentIdx, NodeIdx)> {
    let mut failing = vec![false; agents.len()];
    for &n in failed {
        if let Some(f) = failing.get_mut(agent_of(n).index()) {
            *f = true;
        }
    }
    let is_failed = |a: AgentIdx| failing.get(a.index()).copied().unwrap_or(false);
    let mut pairs = Vec::new();
    let mut related: Vec<AgentIdx> = Vec::new();
    for (a, peer) in agents.iter().enumerate() {
        if failing[a] {
            continue;
        }
        related.clear();
        let probed = peer.probes.iter().flat_map(|r| [r.first, r.worker]);
        let masters = peer.queue.iter().chain(&peer.reserved).map(|p| p.master);
        related.extend(probed.chain(masters).filter(|&b| is_failed(b)));
        related.sort_unstable();
        related.dedup();
        let me = AgentIdx(a as u32);
        pairs.extend(related.iter().map(|&b| (me, super::node_of(b))));
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim_time::SimDuration;

    /// A detector pinging every second, 0.5 ms delay, one of its pings sent at P: a node that
    /// failed 0.1 s before P, or 0.4 or 0.5 ms after it (the ping arrives at P + 0.5 ms to a dead
    /// node), is reported at P + 3 s; one that failed 0.6 ms after P answered that ping and is
    /// reported 3 s after the next, at P + 4 s.
    #[test]
    fn the_first_ping_to_arrive_after_the_failure_goes_unanswered() {
        let config = SparrowConfig {
            ping_interval: SimDuration::from_secs(1),
            ..SparrowConfig::default()
        };
        let agent = AgentIdx(7);
        let phase = ping_phase_us(0, agent, 1_000_000);
        assert!((0..1_000_000).contains(&phase));
        let at = |failed_offset_us: i64| {
            verdict_us(&config, 0, agent, 10_000_000 + phase + failed_offset_us)
                - (10_000_000 + phase)
        };
        // Failed 0.1 s before the ping of 10 s + phase: that ping is the first unanswered.
        assert_eq!(at(-100_000), 3_000_000);
        // Failed 0.4 ms after it was sent: it arrives at 0.5 ms, after the failure.
        assert_eq!(at(400), 3_000_000);
        // Failed exactly as it arrives: unanswered (the node is dead on arrival).
        assert_eq!(at(500), 3_000_000);
        // Failed 0.6 ms after: it was answered; the next one, a second later, is not.
        assert_eq!(at(600), 4_000_000);
    }

    #[test]
    fn phases_spread_over_the_interval() {
        let phases: Vec<i64> = (1..=2_000)
            .map(|a| ping_phase_us(42, AgentIdx(a), 1_000_000))
            .collect();
        let deciles = phases.iter().fold([0u32; 10], |mut d, &p| {
            d[(p / 100_000) as usize] += 1;
            d
        });
        // 200 expected per decile; a binomial's 4.5 standard deviations is 60.
        assert!(
            deciles.iter().all(|&c| (140..=260).contains(&c)),
            "{deciles:?}"
        );
    }
}
