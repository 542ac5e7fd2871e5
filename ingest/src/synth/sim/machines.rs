//! The machine side of the generator's simulation: churn (REMOVE with downtime, ADD, UPDATE of
//! capacities and attributes) and the t = 0 snapshot of everything alive after the warm-up.

use super::*;

impl Sim<'_> {
    pub(super) fn schedule_churn(&mut self, m: u32, from_us: i64) {
        let day_s = 86_400.0;
        let remove_at = from_us + self.exp_us(day_s / REMOVE_PER_DAY);
        if remove_at < self.end_us {
            self.push(remove_at, Event::MachineRemove(m));
        }
        let update_at = from_us + self.exp_us(day_s / UPDATE_PER_DAY);
        if update_at < self.end_us {
            self.push(update_at, Event::MachineUpdate(m));
        }
    }

    pub(super) fn remove_machine(&mut self, m: u32) -> Result<()> {
        if !self.online[m as usize] {
            return Ok(());
        }
        for slot in 0..self.tasks.len() as u32 {
            if self.tasks[slot as usize].machine == m {
                self.stop_run(slot, task_event::EVICT)?;
                self.after_end(slot, task_event::EVICT)?;
            }
        }
        let key = self.headroom_key(m as usize);
        self.free_index.remove(&(key, m));
        self.online[m as usize] = false;
        if self.emit {
            self.emit_machine(m, crate::codes::machine_event::REMOVE, self.now_us)?;
        }
        let back = self.now_us
            + (self.rng.lognormal(DOWNTIME_MEDIAN_S, DOWNTIME_SIGMA) * US as f64) as i64;
        if back < self.end_us {
            self.push(back, Event::MachineAdd(m));
        }
        Ok(())
    }

    pub(super) fn add_machine(&mut self, m: u32) -> Result<()> {
        let i = m as usize;
        self.online[i] = true;
        self.free_index.insert((self.headroom_key(i), m));
        if self.emit {
            self.emit_machine(m, crate::codes::machine_event::ADD, self.now_us)?;
        }
        let now = self.now_us;
        self.schedule_churn(m, now);
        Ok(())
    }

    pub(super) fn update_machine(&mut self, m: u32) -> Result<()> {
        let i = m as usize;
        if !self.online[i] {
            return Ok(());
        }
        self.free_index.remove(&(self.headroom_key(i), m));
        let base = self.cell.mem[i];
        self.mem_cap[i] = if (self.mem_cap[i] - base).abs() > 1e-9 {
            base
        } else {
            (base * 0.5).max(0.03)
        };
        self.free_index.insert((self.headroom_key(i), m));
        if self.emit {
            self.emit_machine(m, crate::codes::machine_event::UPDATE, self.now_us)?;
            if self.rng.chance(0.3) {
                self.emit_attribute_change(m)?;
            }
        }
        self.evict_to_fit(m)
    }

    /// After machine `m` lost memory: evicts its tasks, non-production first (each group in
    /// slot order), until what they hold ([`super::Task::held`]), and the production ones'
    /// requests, fit again, as Borg evicts what a shrunken machine cannot hold.
    fn evict_to_fit(&mut self, m: u32) -> Result<()> {
        let i = m as usize;
        for production_pass in [false, true] {
            for slot in 0..self.tasks.len() as u32 {
                let fits =
                    self.mem_held[i] <= self.mem_cap[i] && self.prod_mem[i] <= self.mem_cap[i];
                if fits {
                    return Ok(());
                }
                let t = &self.tasks[slot as usize];
                let production =
                    self.jobs[t.job as usize].priority >= crate::codes::PRODUCTION_PRIORITY;
                if t.machine == m && production == production_pass {
                    self.stop_run(slot, task_event::EVICT)?;
                    self.after_end(slot, task_event::EVICT)?;
                }
            }
        }
        Ok(())
    }

    /// The t = 0 rows: machines, attributes, and every job and task alive after the warm-up.
    pub(super) fn write_snapshot(&mut self) -> Result<()> {
        for m in 0..self.cell.len() as u32 {
            self.emit_machine(m, crate::codes::machine_event::ADD, 0)?;
            self.emit_attributes(m, 0)?;
        }
        let mut active_jobs = vec![false; self.jobs.len()];
        let mut live: Vec<u32> = Vec::new();
        let free: std::collections::HashSet<u32> =
            (self.free_tasks.iter().chain(&self.free_held_tasks).copied()).collect();
        for slot in 0..self.tasks.len() as u32 {
            if !free.contains(&slot) {
                live.push(slot);
                active_jobs[self.tasks[slot as usize].job as usize] = true;
            }
        }
        for (j, active) in active_jobs.iter().enumerate() {
            if *active {
                self.emit_job(j as u32, task_event::SUBMIT, 0)?;
                if self.jobs[j].scheduled {
                    self.emit_job(j as u32, task_event::SCHEDULE, 0)?;
                }
            }
        }
        for slot in live {
            let t = &self.tasks[slot as usize];
            let machine = (t.machine != NO_MACHINE).then_some(t.machine);
            // A few snapshot rows lack their creation record (missing info 2), as in the real
            // trace.
            let missing = machine.is_some() && self.rng.chance(0.00065);
            self.emit_task(slot, task_event::SUBMIT, machine, missing, 0)?;
            self.emit_constraints(slot, 0)?;
            if let Some(m) = machine {
                self.emit_task(slot, task_event::SCHEDULE, Some(m), false, 0)?;
            }
        }
        Ok(())
    }
}
