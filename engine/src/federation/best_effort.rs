//! Best Effort (seed 003, section 4.3): "chooses the host with less cores in use upon allocating
//! a VM. To do this, the broker sends a message to all hosts in the selected datacenter."
//! Ties go to the lowest index. A datacenter with no suitable host declines without asking its
//! hosts (its own list of suitable hosts is empty), as for every scheduler.

use super::hosts::{Hosts, Placement};

/// Places one VM: one message per host of the datacenter, the suitable host with the fewest
/// cores in use.
pub fn place(hosts: &impl Hosts) -> Placement {
    let host = (0..hosts.count())
        .filter(|&h| hosts.suitable(h))
        .min_by(|&a, &b| hosts.cores_used(a).total_cmp(&hosts.cores_used(b)));
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
        // Host 1 has the fewest VMs but is full (2 slots of 1 core); host 3 ties host 2 and
        // loses on index. Load (VMs / cores) is not Best Effort's measure: host 0 is less
        // loaded (3/8) but uses more cores.
        let mut dc = Table::new(&[8, 1, 2, 4], &[3, 2, 2, 2]);
        dc.slots[1] = 2;
        assert_eq!(
            place(&dc),
            Placement {
                host: Some(2),
                messages: 4
            }
        );
        let full = Table {
            slots: vec![3, 2, 2, 2],
            ..dc
        };
        assert_eq!(
            place(&full),
            Placement {
                host: None,
                messages: 0
            }
        );
    }
}
