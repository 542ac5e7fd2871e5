//! Formatting the generator's rows: one [`TableWriter`] per table, and the `emit_*` methods the
//! simulation calls, which read the task, job and machine columns and write one trace row each
//! in the official column order (see `tables.rs`).

use std::path::Path;

use super::cell::{ATTRIBUTES, AttrValue, hash_string};
use super::csvgz::{TableWriter, empty, end_row, int, sig4, text};
use super::sim::Sim;
use crate::error::Result;
use crate::rng::Rng;

const HASH_KIND_USER: u64 = 10;
const HASH_KIND_JOB_NAME: u64 = 11;
const HASH_KIND_LOGICAL_NAME: u64 = 12;
/// Logical job names are drawn from this many.
const LOGICAL_NAMES: u64 = 1_000;

/// What a task_usage row needs of its task, captured when the window or the run closes.
#[derive(Debug, Clone, Copy)]
pub struct UsageRow {
    /// Window start (or run start).
    pub start_us: i64,
    /// Window end (or run end).
    pub end_us: i64,
    /// Trace job ID.
    pub job_id: u64,
    /// Task index.
    pub index: u32,
    /// Trace machine ID.
    pub machine_id: u64,
    /// The machine's index in the generated cell.
    pub machine: u32,
    /// Mean CPU use of the run.
    pub cpu_use: f64,
    /// Mean memory use of the run.
    pub mem_use: f64,
    /// Memory request.
    pub mem_req: f64,
    /// Disk request.
    pub disk_req: f64,
}

/// The six table writers and the per-row randomness of usage samples.
pub struct Writers {
    machine_events: TableWriter,
    machine_attributes: TableWriter,
    job_events: TableWriter,
    task_events: TableWriter,
    task_constraints: TableWriter,
    task_usage: TableWriter,
    users: Vec<String>,
    seed: u64,
    noise: Rng,
    /// Rows written per table, in `Table::ALL` order.
    pub rows: [u64; 6],
}

impl Writers {
    /// Creates the table directories under `root`; time-sharded tables get `parts` files.
    pub fn new(
        root: &Path,
        parts: u32,
        part_len_us: i64,
        users: usize,
        seed: u64,
    ) -> Result<Writers> {
        let w = |table: &str, parts: u32| TableWriter::new(root, table, parts, part_len_us);
        Ok(Writers {
            machine_events: w("machine_events", 1)?,
            machine_attributes: w("machine_attributes", 1)?,
            job_events: w("job_events", parts)?,
            task_events: w("task_events", parts)?,
            task_constraints: w("task_constraints", parts)?,
            task_usage: w("task_usage", parts)?,
            users: (0..users as u64)
                .map(|u| hash_string(seed, HASH_KIND_USER, u))
                .collect(),
            seed,
            noise: Rng::new(seed, 0x05a6e),
            rows: [0; 6],
        })
    }

    /// Flushes and closes every part file.
    pub fn finish(self) -> Result<()> {
        for w in [
            self.machine_events,
            self.machine_attributes,
            self.job_events,
            self.task_events,
            self.task_constraints,
            self.task_usage,
        ] {
            w.finish()?;
        }
        Ok(())
    }
}

impl Sim<'_> {
    /// A task_events row for `slot` at `at_us`.
    pub(super) fn emit_task(
        &mut self,
        slot: u32,
        event: u8,
        machine: Option<u32>,
        missing: bool,
        at_us: i64,
    ) -> Result<()> {
        let t = &self.tasks[slot as usize];
        let job = &self.jobs[t.job as usize];
        let out = &mut self.out;
        out.rows[3] += 1;
        let user = &out.users[job.user as usize];
        let b = out.task_events.row(at_us)?;
        int(b, at_us);
        if missing {
            int(b, 2u8)
        } else {
            empty(b)
        }
        int(b, job.id);
        int(b, t.index);
        match machine {
            Some(m) => int(b, self.cell.ids[m as usize]),
            None => empty(b),
        }
        int(b, event);
        text(b, user);
        int(b, job.class);
        int(b, job.priority);
        if missing {
            b.extend_from_slice(b",,,,");
        } else {
            sig4(b, t.cpu_req);
            sig4(b, t.mem_req);
            sig4(b, t.disk_req);
            int(b, 0u8);
        }
        end_row(b);
        Ok(())
    }

    /// A job_events row for job slot `j` at `at_us`.
    pub(super) fn emit_job(&mut self, j: u32, event: u8, at_us: i64) -> Result<()> {
        let job = &self.jobs[j as usize];
        let out = &mut self.out;
        out.rows[2] += 1;
        let (seed, user) = (out.seed, &out.users[job.user as usize]);
        let b = out.job_events.row(at_us)?;
        int(b, at_us);
        empty(b);
        int(b, job.id);
        int(b, event);
        text(b, user);
        int(b, job.class);
        text(b, &hash_string(seed, HASH_KIND_JOB_NAME, job.id));
        text(
            b,
            &hash_string(seed, HASH_KIND_LOGICAL_NAME, job.id % LOGICAL_NAMES),
        );
        end_row(b);
        Ok(())
    }

    /// The task_constraints rows of `slot`'s job, one per constraint.
    pub(super) fn emit_constraints(&mut self, slot: u32, at_us: i64) -> Result<()> {
        let t = &self.tasks[slot as usize];
        let job = &self.jobs[t.job as usize];
        for c in &job.constraints {
            self.out.rows[4] += 1;
            let b = self.out.task_constraints.row(at_us)?;
            int(b, at_us);
            int(b, job.id);
            int(b, t.index);
            int(b, c.op);
            text(b, &self.cell.attr_names[c.attribute as usize]);
            text(b, &self.cell.value_text(c.attribute, c.value));
            end_row(b);
        }
        Ok(())
    }

    /// A machine_events row with the machine's current capacities.
    pub(super) fn emit_machine(&mut self, m: u32, event: u8, at_us: i64) -> Result<()> {
        let i = m as usize;
        self.out.rows[0] += 1;
        let b = self.out.machine_events.row(at_us)?;
        int(b, at_us);
        int(b, self.cell.ids[i]);
        int(b, event);
        text(
            b,
            &self.cell.platform_hashes[self.cell.platform[i] as usize],
        );
        sig4(b, self.cpu_cap[i]);
        sig4(b, self.mem_cap[i]);
        end_row(b);
        Ok(())
    }

    fn attribute_row(
        &mut self,
        m: u32,
        attribute: usize,
        value: AttrValue,
        deleted: bool,
        at_us: i64,
    ) -> Result<()> {
        self.out.rows[1] += 1;
        let value_text = self.cell.value_text(attribute as u8, value);
        let b = self.out.machine_attributes.row(at_us)?;
        int(b, at_us);
        int(b, self.cell.ids[m as usize]);
        text(b, &self.cell.attr_names[attribute]);
        text(b, &value_text);
        int(b, u8::from(deleted));
        end_row(b);
        Ok(())
    }

    /// The machine_attributes rows of every attribute `m` carries.
    pub(super) fn emit_attributes(&mut self, m: u32, at_us: i64) -> Result<()> {
        for a in 0..ATTRIBUTES {
            let value = self.attrs[m as usize][a];
            if value != AttrValue::Absent {
                self.attribute_row(m, a, value, false, at_us)?;
            }
        }
        Ok(())
    }

    /// A kernel-upgrade style change: `a0` goes up by one, or `a3` is deleted.
    pub(super) fn emit_attribute_change(&mut self, m: u32) -> Result<()> {
        let now = self.now_us;
        let attrs = &mut self.attrs[m as usize];
        if attrs[3] != AttrValue::Absent && self.rng.chance(0.2) {
            let old = attrs[3];
            attrs[3] = AttrValue::Absent;
            return self.attribute_row(m, 3, old, true, now);
        }
        if let AttrValue::Int(v) = attrs[0] {
            attrs[0] = AttrValue::Int(v + 1);
            return self.attribute_row(m, 0, AttrValue::Int(v + 1), false, now);
        }
        Ok(())
    }

    /// The task_usage rows of one window, already sorted by start.
    ///
    /// CPU is throttled as a machine throttles it: when the CPU of the machine's rows in the
    /// window, summed as if they all ran at once (so at no instant of it is the sum higher),
    /// exceeds the machine's capacity, every row of that machine is scaled down to fit, so no
    /// machine's measured CPU exceeds its cores (the real trace's cannot). Memory is not
    /// compressible and is left as drawn.
    pub(super) fn emit_usage(&mut self, rows: &[UsageRow]) -> Result<()> {
        struct Drawn {
            cpu: f64,
            mem: f64,
            max_cpu: f64,
            max_mem: f64,
            cpi: f64,
            mai: f64,
            sampled: f64,
            disk_io: f64,
        }
        let n = &mut self.out.noise;
        let drawn: Vec<Drawn> = rows
            .iter()
            .map(|t| {
                let cpu = t.cpu_use * n.lognormal(1.0, 0.25);
                let mem = t.mem_use * (1.0 + 0.03 * n.normal()).max(0.5);
                let (max_cpu, max_mem) = (cpu * (1.2 + 0.8 * n.f64()), mem * (1.0 + 0.1 * n.f64()));
                let (cpi, mai) = (n.lognormal(1.6, 0.3), n.lognormal(0.006, 0.4));
                let sampled = cpu * n.lognormal(1.0, 0.5);
                let disk_io = n.exp(0.002);
                Drawn {
                    cpu,
                    mem,
                    max_cpu,
                    max_mem,
                    cpi,
                    mai,
                    sampled,
                    disk_io,
                }
            })
            .collect();
        let mut demand = vec![0.0; self.cpu_cap.len()];
        for (t, d) in rows.iter().zip(&drawn) {
            demand[t.machine as usize] += d.cpu;
        }
        for (t, d) in rows.iter().zip(drawn) {
            let (start, end) = (t.start_us, t.end_us);
            let (cap, want) = (self.cpu_cap[t.machine as usize], demand[t.machine as usize]);
            // A margin for the 4 significant digits each row is written with.
            let room = cap * (1.0 - 1e-3);
            let throttle = if want > room { room / want } else { 1.0 };
            let Drawn {
                mem,
                max_mem,
                cpi,
                mai,
                disk_io,
                ..
            } = d;
            let (cpu, max_cpu, sampled) =
                (d.cpu * throttle, d.max_cpu * throttle, d.sampled * throttle);
            let out = &mut self.out;
            out.rows[5] += 1;
            let b = out.task_usage.row(start)?;
            int(b, start);
            int(b, end);
            int(b, t.job_id);
            int(b, t.index);
            int(b, t.machine_id);
            sig4(b, cpu);
            sig4(b, mem);
            sig4(b, t.mem_req * 0.98);
            sig4(b, mem * 0.05);
            sig4(b, mem * 0.15);
            sig4(b, max_mem);
            sig4(b, disk_io);
            sig4(b, t.disk_req * 0.5);
            sig4(b, max_cpu);
            sig4(b, disk_io * 3.0);
            sig4(b, cpi);
            sig4(b, mai);
            int(b, 1u8);
            int(b, 0u8);
            sig4(b, sampled);
            end_row(b);
        }
        Ok(())
    }
}
