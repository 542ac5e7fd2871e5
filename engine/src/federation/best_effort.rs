//! Best Effort (seed 003, section 4.3): "chooses the host with less cores in use upon allocating
//! a VM. To do this, the broker sends a message to all hosts in the selected datacenter."
//! Ties go to the host first by [`tie_key`](crate::ties::tie_key) under a salt of the broker's
//! stream (not the lowest index: issue 55). A datacenter with no suitable host declines without asking its
//! hosts (its own list of suitable hosts is empty), as for every scheduler.

use super::hosts::{Hosts, Placement};
use crate::ties::least_by;

/// Places one VM: one message per host of the datacenter, the suitable host with the fewest
/// cores in use.
pub fn place(hosts: &impl Hosts, salt: u64) -> Placement {
    let suitable = (0..hosts.count()).filter(|&h| hosts.suitable(h));
    let host = least_by(suitable, |&h| hosts.cores_used(h), |&h| h as u64, salt);
    Placement {
        host,
        messages: if host.is_some() {
            hosts.count() as u32
        } else {
            0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::hosts::tests::Table;
    use super::*;

    #[test]
    fn asks_every_host_and_takes_the_fewest_cores_in_use() {
        // Host 1 has the fewest VMs but is full (2 slots of 1 core); host 3 ties host 2, and
        // the tie goes either way by the salt (index order gave host 2 every time). Load
        // (VMs / cores) is not Best Effort's measure: host 0 is less loaded (3/8) but uses more
        // cores.
        let mut dc = Table::new(&[8, 1, 2, 4], &[3, 2, 2, 2]);
        dc.slots[1] = 2;
        let mut took = [0u32; 4];
        for salt in 0..200 {
            let p = place(&dc, ingest::rng::mix64(salt));
            assert_eq!(p.messages, 4);
            took[p.host.unwrap()] += 1;
        }
        assert!(
            took[0] + took[1] == 0 && took[2] > 60 && took[3] > 60,
            "{took:?}"
        );
        let full = Table {
            slots: vec![3, 2, 2, 2],
            ..dc
        };
        assert_eq!(
            place(&full, 1),
            Placement {
                host: None,
                messages: 0
            }
        );
    }
}
