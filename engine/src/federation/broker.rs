//! The broker level (seed 003): the order in which a user's VM requests try the datacenters.
//! LLTF and LTIR sort the datacenters by latency (equal latencies in an order drawn from the
//! run's seed, [`tie_key`]: seed 003 names no tie-break, issue 55); FLTF shuffles them with the
//! run's seed. LLTF and FLTF send every VM to the first datacenter of their list with
//! room; LTIR sends VM k to the (k mod D)-th and, when that one is full, on round the list.

use ingest::rng::Rng;

use crate::ties::{peek_salt, tie_key};

use super::config::BrokerPolicy;

/// The broker's list of datacenters (indices), for `latency_s` per datacenter.
pub fn datacenter_list(policy: BrokerPolicy, latency_s: &[f64], rng: &mut Rng) -> Vec<usize> {
    let mut list: Vec<usize> = (0..latency_s.len()).collect();
    match policy {
        BrokerPolicy::Lltf | BrokerPolicy::Ltir => {
            // A salt that leaves `rng`'s later draws as they were.
            let salt = peek_salt(rng);
            list.sort_by(|&a, &b| {
                (latency_s[a].total_cmp(&latency_s[b]))
                    .then(tie_key(salt, a as u64).cmp(&tie_key(salt, b as u64)))
            });
        }
        BrokerPolicy::Fltf => {
            for i in (1..list.len()).rev() {
                list.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
    }
    list
}

/// The datacenters VM `vm` (the user's k-th request, from 0) tries, in order.
pub fn tries(policy: BrokerPolicy, list: &[usize], vm: usize) -> impl Iterator<Item = usize> + '_ {
    let start = match policy {
        BrokerPolicy::Ltir if !list.is_empty() => vm % list.len(),
        _ => 0,
    };
    (0..list.len()).map(move |k| list[(start + k) % list.len()])
}

/// A user's own random datacenter order over `count` datacenters (FLTF on a GCD cell, where a
/// broker is created per job): position p holds datacenter (start + stride p) mod count, with
/// `start` and `stride` (coprime with `count`, so every datacenter comes once) drawn from
/// `draw`. An affine order, not every permutation: what FLTF needs is a list in no latency
/// order that differs between users, at no memory per user.
pub fn user_order(draw: u64, count: usize) -> (usize, usize) {
    if count <= 1 {
        return (0, 1);
    }
    let start = (draw % count as u64) as usize;
    let mut stride = 1 + ((draw >> 32) % (count as u64 - 1).max(1)) as usize;
    while gcd(stride, count) != 1 {
        stride += 1;
    }
    (start, stride % count)
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every user's order visits each datacenter once, and users' first choices spread over
    /// the datacenters (12 datacenters, 1,200 users: about 100 each).
    #[test]
    fn a_users_order_is_a_permutation_of_its_own() {
        for count in [1, 2, 7, 12, 629] {
            for draw in [0u64, 1, 0x1234_5678_9abc, u64::MAX] {
                let (start, stride) = user_order(draw, count);
                let mut seen: Vec<usize> =
                    (0..count).map(|p| (start + stride * p) % count).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..count).collect::<Vec<_>>(), "{count} {draw}");
            }
        }
        let mut firsts = [0u32; 12];
        for job in 0..1_200u64 {
            firsts[user_order(ingest::rng::hash_keys(5, &[job]), 12).0] += 1;
        }
        assert!(
            firsts.iter().all(|&n| (60..=140).contains(&n)),
            "{firsts:?}"
        );
        let orders: std::collections::BTreeSet<(usize, usize)> = (0..200u64)
            .map(|job| user_order(ingest::rng::hash_keys(5, &[job]), 12))
            .collect();
        assert!(orders.len() > 20, "users' orders differ");
    }

    /// The seed's latencies (s) of D1..D5.
    const SEED: [f64; 5] = [1.5, 0.8, 1.0, 0.15, 2.0];

    #[test]
    fn lltf_tries_the_lowest_latency_first_for_every_vm() {
        let list = datacenter_list(BrokerPolicy::Lltf, &SEED, &mut Rng::new(1, 0));
        assert_eq!(list, [3, 1, 2, 0, 4]);
        for vm in 0..7 {
            let order: Vec<usize> = tries(BrokerPolicy::Lltf, &list, vm).collect();
            assert_eq!(order, [3, 1, 2, 0, 4]);
        }
    }

    #[test]
    fn ltir_goes_round_the_latency_order() {
        let list = datacenter_list(BrokerPolicy::Ltir, &SEED, &mut Rng::new(1, 0));
        let first: Vec<usize> = (0..7)
            .map(|vm| tries(BrokerPolicy::Ltir, &list, vm).next().unwrap())
            .collect();
        assert_eq!(first, [3, 1, 2, 0, 4, 3, 1]);
        let from_d5: Vec<usize> = tries(BrokerPolicy::Ltir, &list, 4).collect();
        assert_eq!(from_d5, [4, 3, 1, 2, 0]);
    }

    /// Equal latencies: which comes first is a seeded draw, each of three equal datacenters
    /// first under about a third of 3,000 seeds (index order: always datacenter 0); the draw
    /// leaves the stream's later draws as they were; a lower latency still comes first.
    #[test]
    fn equal_latencies_are_ordered_by_a_draw_not_by_index() {
        let mut firsts = [0u32; 3];
        for seed in 0..3_000 {
            let mut rng = Rng::new(seed, 0);
            let list = datacenter_list(BrokerPolicy::Lltf, &[1.0, 1.0, 0.5, 1.0], &mut rng);
            assert_eq!(list[0], 2);
            firsts[[0, 1, 3].iter().position(|&d| d == list[1]).unwrap()] += 1;
            assert_eq!(rng.next_u64(), Rng::new(seed, 0).next_u64());
        }
        assert!(
            firsts.iter().all(|&f| (850..=1_150).contains(&f)),
            "{firsts:?}"
        );
    }

    #[test]
    fn fltf_is_a_seeded_permutation_kept_for_every_vm() {
        let a = datacenter_list(BrokerPolicy::Fltf, &SEED, &mut Rng::new(1, 0));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3, 4]);
        assert_eq!(
            a,
            datacenter_list(BrokerPolicy::Fltf, &SEED, &mut Rng::new(1, 0))
        );
        let lists: std::collections::BTreeSet<Vec<usize>> = (0..50)
            .map(|s| datacenter_list(BrokerPolicy::Fltf, &SEED, &mut Rng::new(s, 0)))
            .collect();
        assert!(lists.len() > 20, "seeds give different orders");
        assert_eq!(tries(BrokerPolicy::Fltf, &a, 3).next(), Some(a[0]));
    }
}
