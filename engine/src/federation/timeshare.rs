//! Time-shared execution (seed 003: "jobs within a VM compete for CPU time with other jobs from
//! other VMs in the same hosts", CloudSim's time-shared VM and cloudlet schedulers). A host's
//! cores are shared by its VMs with jobs left: each such VM (one core) runs at
//! core MIPS x min(1, cores / VMs with jobs); a VM's speed is shared equally by its unfinished
//! jobs. All jobs start together (the broker submits them once every VM exists), so a VM's jobs
//! finish shortest first; the run advances from one completion to the next, exactly.
//!
//! Invariant: per VM, `jobs` are sorted by length and `next` indexes the first unfinished one;
//! every unfinished job of a VM has received the same work, `done_mi`.

/// A VM's jobs: (length MI, job index), any order.
pub type VmJobs = Vec<(f64, usize)>;

/// The completion time of every job (seconds after the common start), by job index; `jobs`
/// counts them. `vm_host[v]` is VM v's host; hosts have `host_cores` cores of `core_mips` each.
pub fn completion_times(
    host_cores: &[u32],
    core_mips: &[f64],
    vm_host: &[usize],
    vm_jobs: &[VmJobs],
    jobs: usize,
) -> Vec<f64> {
    let mut done = vec![0.0; jobs];
    let sorted: Vec<VmJobs> = vm_jobs
        .iter()
        .map(|j| {
            let mut j = j.clone();
            j.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            j
        })
        .collect();
    let mut next = vec![0usize; sorted.len()];
    let mut done_mi = vec![0.0f64; sorted.len()];
    let mut busy_vms = vec![0u32; host_cores.len()];
    for (v, j) in sorted.iter().enumerate() {
        if !j.is_empty() {
            busy_vms[vm_host[v]] += 1;
        }
    }
    let per_job_rate = |v: usize, next: &[usize], busy: &[u32]| {
        let h = vm_host[v];
        let share = (host_cores[h] as f64 / busy[h] as f64).min(1.0);
        core_mips[h] * share / (sorted[v].len() - next[v]) as f64
    };
    let mut now = 0.0f64;
    loop {
        // The next completion: the VM whose shortest unfinished job ends first.
        let mut dt = f64::INFINITY;
        for v in 0..sorted.len() {
            if next[v] < sorted[v].len() {
                let left = sorted[v][next[v]].0 - done_mi[v];
                dt = dt.min(left / per_job_rate(v, &next, &busy_vms));
            }
        }
        if !dt.is_finite() {
            break;
        }
        let rates: Vec<f64> = (0..sorted.len())
            .map(|v| {
                if next[v] < sorted[v].len() {
                    per_job_rate(v, &next, &busy_vms)
                } else {
                    0.0
                }
            })
            .collect();
        now += dt;
        for v in 0..sorted.len() {
            if next[v] == sorted[v].len() {
                continue;
            }
            done_mi[v] += rates[v] * dt;
            while next[v] < sorted[v].len() {
                let (len, job) = sorted[v][next[v]];
                // Equal within rounding: the job that set dt, and its equals.
                if len - done_mi[v] > 1e-9 * len.max(1.0) {
                    break;
                }
                done[job] = now;
                next[v] += 1;
            }
            if next[v] == sorted[v].len() {
                busy_vms[vm_host[v]] -= 1;
            }
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn jobs_share_a_vm_and_vms_share_a_host() {
        // Worked by hand. Host 0: 1 core of 100 MIPS, VMs 0 and 1; host 1: 2 cores of 100
        // MIPS, VM 2. VM 0 runs jobs of 100 and 300 MI, VM 1 one of 200 MI, VM 2 one of 50.
        // Until t = 4: VMs 0 and 1 get 50 MIPS each; VM 0's jobs 25 MIPS each. At t = 4 job a
        // (100 MI) is done: job b has 100 of 300, job c 200 of 200, also done at t = 4. Then
        // VM 0 alone on host 0: job b gets 100 MIPS, 200 MI left: done at t = 6. VM 2 has a
        // core to itself: 50 MI at 100 MIPS, done at 0.5.
        let t = completion_times(
            &[1, 2],
            &[100.0, 100.0],
            &[0, 0, 1],
            &[
                vec![(100.0, 0), (300.0, 1)],
                vec![(200.0, 2)],
                vec![(50.0, 3)],
            ],
            4,
        );
        let want = [4.0, 6.0, 4.0, 0.5];
        for (got, want) in t.iter().zip(want) {
            assert!(close(*got, want), "{t:?}");
        }
    }

    #[test]
    fn an_idle_vm_takes_no_cpu() {
        // VM 1 has no jobs: VM 0 runs at the full core, 1,000 MI in 10 s.
        let t = completion_times(&[1], &[100.0], &[0, 0], &[vec![(1_000.0, 0)], vec![]], 1);
        assert!(close(t[0], 10.0));
    }
}
