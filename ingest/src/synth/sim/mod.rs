//! The generator's discrete-event simulation: job arrivals, hybrid best/worst-fit placement, run
//! ends, resubmissions, pending retries, machine churn, 5-minute usage windows and (with
//! `held_jobs`) the jobs the scheduler holds, emitting trace rows in time order.
//!
//! Invariants: events are processed in (time, sequence) order and every row is written at the
//! current simulated time, so each table comes out time-sorted; a task slot's `generation`
//! changes whenever it leaves a machine, which invalidates events queued for its old run; the
//! best-fit index holds exactly the online machines keyed by their free (unrequested) memory.
//! Memory: proportional to the running and pending tasks, not to the trace length.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

mod machines;

use super::cell::{ATTRIBUTES, AttrValue, Cell, Constraint};
use super::csvgz::round_sig4;
use super::model::*;
use super::writers::{UsageRow, Writers};

use crate::codes::{TRACE_START_US, task_event};
use crate::error::Result;
use crate::rng::Rng;

/// Marks a pending task's machine.
pub const NO_MACHINE: u32 = u32::MAX;
const US: i64 = 1_000_000;

/// A task slot: one (job, index) while it is pending or running.
#[derive(Debug, Clone)]
pub struct Task {
    /// Job slot.
    pub job: u32,
    /// Task index in the job.
    pub index: u32,
    /// Machine number, or none while pending.
    pub machine: u32,
    /// Requests.
    pub cpu_req: f64,
    /// Memory request.
    pub mem_req: f64,
    /// Disk request.
    pub disk_req: f64,
    /// Mean usage while running.
    pub cpu_use: f64,
    /// Mean memory usage while running.
    pub mem_use: f64,
    /// Start of the current run, or of the pending wait.
    pub since_us: i64,
    /// Planned end of the run.
    pub end_us: i64,
    /// Terminal event planned for the run.
    pub end_kind: u8,
    /// Bumped whenever the task leaves a machine or is resubmitted.
    pub generation: u32,
    /// Already sent an UPDATE_PENDING.
    pub updated: bool,
}

impl Task {
    /// The memory the task holds of its machine by Borg's rule (Verma et al., "Large-scale
    /// cluster management at Google with Borg", EuroSys 2015, section 5.5): a production task
    /// its request (its limit), another task its reservation, which Borg estimates from its
    /// usage and which this model takes as its mean usage (at most its request). So
    /// non-production requests overcommit a machine's memory as Borg's did: in the real 8.5 h,
    /// 46 % of the machines are requested above their memory at 4 h. CPU is admitted by
    /// requests up to [`CPU_OVERCOMMIT`] times the cores.
    pub fn mem_held(&self, production: bool) -> f64 {
        if production {
            self.mem_req
        } else {
            self.mem_use.min(self.mem_req)
        }
    }
}

/// A job slot.
#[derive(Debug, Clone)]
pub struct Job {
    /// Trace job ID.
    pub id: u64,
    /// User pool index.
    pub user: u32,
    /// Priority 0..11.
    pub priority: u8,
    /// Scheduling class 0..3.
    pub class: u8,
    /// Short, long or service.
    pub kind: JobKind,
    /// Constraints of every task.
    pub constraints: Vec<Constraint>,
    /// Tasks not yet ended for good.
    pub remaining: u32,
    /// Worst end so far (FINISH < FAIL < KILL decides the job's end).
    pub end_kind: u8,
    /// A task has been scheduled.
    pub scheduled: bool,
    /// A job the cell's scheduler holds ([`HELD_JOBS`]): its shape's index and its tasks.
    pub held: Option<(u8, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    RunEnd {
        slot: u32,
        generation: u32,
    },
    Schedule {
        slot: u32,
        generation: u32,
    },
    Resubmit {
        slot: u32,
        generation: u32,
    },
    UpdateRunning {
        slot: u32,
        generation: u32,
    },
    MachineRemove(u32),
    MachineAdd(u32),
    MachineUpdate(u32),
    /// A held job of [`HELD_JOBS`]`[shape]` with `tasks` tasks arrives.
    HeldArrive {
        shape: u8,
        tasks: u32,
    },
}

/// The simulation state.
pub struct Sim<'a> {
    pub(super) cell: &'a Cell,
    pub(super) rng: Rng,
    pub(super) now_us: i64,
    end_us: i64,
    seq: u64,
    heap: BinaryHeap<Reverse<(i64, u64, Event)>>,
    /// Live machine columns.
    pub(super) cpu_cap: Vec<f64>,
    pub(super) mem_cap: Vec<f64>,
    online: Vec<bool>,
    /// Live attribute values (attributes change during the trace).
    pub(super) attrs: Vec<[AttrValue; ATTRIBUTES]>,
    /// CPU requested on each machine.
    cpu_req: Vec<f64>,
    /// Memory each machine holds by Borg's rule ([`Task::mem_held`]): production requests plus
    /// the other tasks' reservations.
    mem_held: Vec<f64>,
    prod_cpu: Vec<f64>,
    prod_mem: Vec<f64>,
    free_index: BTreeSet<(u64, u32)>,
    pub(super) tasks: Vec<Task>,
    free_tasks: Vec<u32>,
    /// Slots freed by held tasks, taken only by held tasks: the other tasks' slots, whose order
    /// draws follow (`machines::evict_to_fit`), keep their order with or without held jobs.
    free_held_tasks: Vec<u32>,
    pub(super) jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    pending: VecDeque<(u32, u32)>,
    next_job_id: u64,
    job_arrival_mean_s: f64,
    service_arrival_mean_s: f64,
    pub(super) emit: bool,
    /// Usage rows of runs that ended in the current window.
    window_rows: Vec<UsageRow>,
    pub(super) window_start_us: i64,
    pub(super) out: Writers,
    /// Which band each service job is in.
    service_bands: ServiceBands,
    /// Services the cell keeps running ([`services_running`]).
    services_running: f64,
    /// The most tasks a job has in this cell ([`max_job_tasks`]).
    max_job_tasks: u32,
    /// Whether the cell has the jobs its scheduler holds ([`HELD_JOBS`]; set before
    /// [`Sim::run`]).
    pub held_jobs: bool,
    /// The held jobs' own draws, so that the rest of the trace draws as without them (their
    /// tasks' slots apart too, [`Sim::free_held_tasks`]).
    held_rng: Rng,
}

/// An index key for a share of a machine (0..1), to 1e-7.
fn share_key(share: f64) -> u64 {
    (share.max(0.0) * 1e7) as u64
}

impl<'a> Sim<'a> {
    /// A cell with every machine online and no tasks; arrivals sized for the cell.
    pub fn new(cell: &'a Cell, seed: u64, end_us: i64, out: Writers) -> Sim<'a> {
        let n = cell.len();
        let max_tasks = max_job_tasks(n);
        let (mean_run_s, mean_tasks) = means(max_tasks);
        let services = services_running(n, mean_run_s);
        Sim {
            cell,
            rng: Rng::new(seed, 0x51b),
            now_us: WARMUP_START_US,
            end_us,
            seq: 0,
            heap: BinaryHeap::new(),
            cpu_cap: cell.cpu.clone(),
            mem_cap: cell.mem.clone(),
            online: vec![true; n],
            attrs: cell.attrs.clone(),
            cpu_req: vec![0.0; n],
            mem_held: vec![0.0; n],
            prod_cpu: vec![0.0; n],
            prod_mem: vec![0.0; n],
            free_index: (0..n as u32).map(|m| (share_key(1.0), m)).collect(),
            tasks: Vec::new(),
            free_tasks: Vec::new(),
            free_held_tasks: Vec::new(),
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            pending: VecDeque::new(),
            next_job_id: 6_000_000_000 + Rng::new(seed, 0x10b).below(100_000_000),
            job_arrival_mean_s: mean_tasks / churn_submissions_per_s(n),
            service_arrival_mean_s: mean_tasks / service_submissions_per_s(services),
            emit: false,
            window_rows: Vec::new(),
            window_start_us: TRACE_START_US,
            out,
            service_bands: ServiceBands::default(),
            services_running: services,
            max_job_tasks: max_tasks,
            held_jobs: false,
            held_rng: Rng::new(seed, 0x4e1d),
        }
    }

    /// The free index's key of machine `m`: its headroom, the smaller of its free held memory
    /// and its free CPU (up to [`CPU_OVERCOMMIT`] times its cores) as shares of what it has.
    /// Spreading picks the most headroom, so both resources spread, as Borg's scoring balances
    /// them: keyed by memory alone, a spread placement filled the CPU of the machines with the
    /// most free memory, and 109k tasks waited at t = 0 (the real cell: 11k).
    pub(super) fn headroom_key(&self, m: usize) -> u64 {
        let mem = (self.mem_cap[m] - self.mem_held[m]) / self.mem_cap[m];
        let cpu_limit = self.cpu_cap[m] * CPU_OVERCOMMIT;
        let cpu = (cpu_limit - self.cpu_req[m]) / cpu_limit;
        share_key(mem.min(cpu))
    }

    fn push(&mut self, at_us: i64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at_us, self.seq, event)));
    }

    /// Ends the simulation, handing back the writers to be finished.
    pub fn into_writers(self) -> Writers {
        self.out
    }

    /// Runs the warm-up, writes the t = 0 snapshot, then simulates the trace window, calling
    /// `progress` with the simulated time every ten simulated minutes (the warm-up's too); an
    /// error it returns ends the simulation.
    pub fn run(&mut self, progress: &dyn Fn(i64) -> Result<()>) -> Result<()> {
        // The services running at the warm-up's start: their steady state at once (their run
        // times are memoryless), placed as the warm-up begins.
        let services = self.services_running;
        let mut submitted = 0;
        while (submitted as f64) < services {
            submitted += self.arrive(JobKind::Service)?;
        }
        if self.held_jobs {
            self.queue_held_jobs();
        }
        self.simulate_until(TRACE_START_US, progress)?;
        self.emit = true;
        self.write_snapshot()?;
        for m in 0..self.cell.len() as u32 {
            self.schedule_churn(m, TRACE_START_US);
        }
        let end = self.end_us;
        self.simulate_until(end, progress)?;
        self.close_window(end)?;
        Ok(())
    }

    fn simulate_until(
        &mut self,
        until_us: i64,
        progress: &dyn Fn(i64) -> Result<()>,
    ) -> Result<()> {
        let mut next_arrival = self.now_us + self.exp_us(self.job_arrival_mean_s);
        let mut next_service = self.now_us + self.exp_us(self.service_arrival_mean_s);
        let retry_us = RETRY_INTERVAL_S * US;
        let mut next_retry = self.now_us + retry_us;
        let window_us = USAGE_WINDOW_S * US;
        let mut last_report = self.now_us;
        loop {
            let heap_t = self.heap.peek().map_or(i64::MAX, |Reverse((t, _, _))| *t);
            let window_t = if self.emit {
                self.window_start_us + window_us
            } else {
                i64::MAX
            };
            let t = heap_t
                .min(next_arrival)
                .min(next_service)
                .min(next_retry)
                .min(window_t);
            if t > until_us {
                self.now_us = until_us;
                return Ok(());
            }
            self.now_us = t;
            if t - last_report > 600 * US {
                progress(t)?;
                last_report = t;
            }
            if heap_t == t {
                let Reverse((_, _, event)) = self.heap.pop().expect("peeked");
                self.handle(event)?;
            } else if window_t == t {
                self.close_window(t)?;
            } else if next_retry == t {
                self.retry_pending()?;
                next_retry += retry_us;
            } else if next_service == t {
                self.arrive(JobKind::Service)?;
                next_service = t + self.exp_us(self.service_arrival_mean_s);
            } else {
                let kind = JobKind::churn(&mut self.rng);
                self.arrive(kind)?;
                next_arrival = t + self.exp_us(self.job_arrival_mean_s);
            }
        }
    }

    fn exp_us(&mut self, mean_s: f64) -> i64 {
        ((self.rng.exp(mean_s) * US as f64) as i64).max(1)
    }

    fn handle(&mut self, event: Event) -> Result<()> {
        match event {
            Event::RunEnd { slot, generation } if self.live(slot, generation) => self.end_run(slot),
            Event::Schedule { slot, generation } if self.live(slot, generation) => {
                if !self.try_place(slot)? {
                    let generation = self.tasks[slot as usize].generation;
                    self.pending.push_back((slot, generation));
                }
                Ok(())
            }
            Event::Resubmit { slot, generation } if self.live(slot, generation) => {
                self.submit(slot, false)
            }
            Event::UpdateRunning { slot, generation } if self.live(slot, generation) => {
                self.update_running(slot)
            }
            Event::MachineRemove(m) => self.remove_machine(m),
            Event::MachineAdd(m) => self.add_machine(m),
            Event::MachineUpdate(m) => self.update_machine(m),
            Event::HeldArrive { shape, tasks } => self.arrive_held(shape, tasks),
            _ => Ok(()), // a stale event of an earlier run
        }
    }

    fn live(&self, slot: u32, generation: u32) -> bool {
        self.tasks[slot as usize].generation == generation
    }

    /// A new job of `kind` and its tasks' SUBMITs; returns the number of tasks.
    fn arrive(&mut self, kind: JobKind) -> Result<u32> {
        let rng = &mut self.rng;
        let restrictive = rng.chance(RESTRICTIVE_JOB_SHARE);
        let count = if restrictive {
            1 + rng.below(2) as u32
        } else {
            job_tasks(rng, self.max_job_tasks)
        };
        let band = match kind.churn_band(rng) {
            Some(band) => band,
            None => self.service_bands.next(count),
        };
        let (priority, class) = kind.priority_and_class(band, rng);
        let constraints = if restrictive || rng.chance(CONSTRAINED_JOB_SHARE) {
            self.cell.draw_constraints(rng, restrictive)
        } else {
            Vec::new()
        };
        let (cpu, mem) = kind.requests(band, rng);
        let disk = rng.lognormal(0.0004, 1.0).min(0.05);
        let users = users(self.cell.len()) as u64;
        let user = (rng.f64().powi(2) * users as f64) as u32;
        self.next_job_id += 1 + rng.below(40);
        let job = Job {
            id: self.next_job_id,
            user,
            priority,
            class,
            kind,
            constraints,
            remaining: count,
            end_kind: task_event::FINISH,
            scheduled: false,
            held: None,
        };
        let j = self.add_job(job)?;
        for index in 0..count {
            let cpu_use = cpu
                * self
                    .rng
                    .lognormal(kind.cpu_use_median(), CPU_USE_SIGMA)
                    .clamp(0.01, CPU_USE_MAX);
            let (lo, hi) = MEM_USE_RANGE[usize::from(band == Band::Production)];
            let mem_use = mem * (lo + (hi - lo) * self.rng.f64());
            let task = Task {
                job: j,
                index,
                machine: NO_MACHINE,
                cpu_req: cpu,
                mem_req: mem,
                disk_req: disk,
                cpu_use,
                mem_use,
                since_us: self.now_us,
                end_us: 0,
                end_kind: 0,
                generation: 0,
                updated: false,
            };
            self.add_task(task)?;
        }
        Ok(count)
    }

    /// Takes a job slot for `job` and writes its SUBMIT; returns the slot.
    fn add_job(&mut self, job: Job) -> Result<u32> {
        let j = match self.free_jobs.pop() {
            Some(j) => {
                self.jobs[j as usize] = job;
                j
            }
            None => {
                self.jobs.push(job);
                self.jobs.len() as u32 - 1
            }
        };
        if self.emit {
            self.emit_job(j, task_event::SUBMIT, self.now_us)?;
        }
        Ok(j)
    }

    /// Takes a task slot for `task` and submits it.
    fn add_task(&mut self, task: Task) -> Result<()> {
        let free = self.free_slots(task.job);
        let slot = match free.pop() {
            Some(s) => {
                let generation = self.tasks[s as usize].generation + 1;
                self.tasks[s as usize] = Task { generation, ..task };
                s
            }
            None => {
                self.tasks.push(task);
                self.tasks.len() as u32 - 1
            }
        };
        self.submit(slot, true)
    }

    /// Whether the task in `slot` belongs to a held job ([`HELD_JOBS`]).
    fn is_held(&self, slot: u32) -> bool {
        self.jobs[self.tasks[slot as usize].job as usize]
            .held
            .is_some()
    }

    /// The free task slots a task of job `j` takes from and gives back to.
    fn free_slots(&mut self, j: u32) -> &mut Vec<u32> {
        if self.jobs[j as usize].held.is_some() {
            &mut self.free_held_tasks
        } else {
            &mut self.free_tasks
        }
    }

    /// Queues the held jobs waiting at the trace's start ([`HELD_JOBS`]): each shape's tasks for
    /// this cell (its tasks per machine times the machines), in jobs of at most
    /// [`max_job_tasks`], each submitted a uniform draw of up to [`PENDING_KILL_S`] before the
    /// trace's start, so that their kills (and the jobs submitted again then) spread over the
    /// trace's first [`PENDING_KILL_S`].
    fn queue_held_jobs(&mut self) {
        let machines = self.cell.len() as f64;
        for (shape, held) in HELD_JOBS.iter().enumerate() {
            let total = (held.tasks_per_machine * machines).round() as u32;
            let jobs = total.div_ceil(self.max_job_tasks);
            for k in 0..jobs {
                let tasks = total / jobs + u32::from(k < total % jobs);
                let age_us = (self.held_rng.f64() * (PENDING_KILL_S * US) as f64) as i64;
                let shape = shape as u8;
                self.push(TRACE_START_US - age_us, Event::HeldArrive { shape, tasks });
            }
        }
    }

    /// A held job of [`HELD_JOBS`]`[shape]` with `tasks` tasks and their SUBMITs, constrained as
    /// any job is. Its tasks are never placed (`submit`, `retry_pending`); their usage is their
    /// requests (never measured).
    fn arrive_held(&mut self, shape: u8, tasks: u32) -> Result<()> {
        let held = HELD_JOBS[usize::from(shape)];
        let users = users(self.cell.len()) as u64;
        let user = self.held_rng.below(users) as u32;
        self.next_job_id += 1 + self.held_rng.below(40);
        let constraints = if self.held_rng.chance(CONSTRAINED_JOB_SHARE) {
            self.cell.draw_constraints(&mut self.held_rng, false)
        } else {
            Vec::new()
        };
        let job = Job {
            id: self.next_job_id,
            user,
            priority: held.priority,
            class: held.class,
            kind: JobKind::Long,
            constraints,
            remaining: tasks,
            end_kind: task_event::FINISH,
            scheduled: false,
            held: Some((shape, tasks)),
        };
        let j = self.add_job(job)?;
        for index in 0..tasks {
            self.add_task(Task {
                job: j,
                index,
                machine: NO_MACHINE,
                cpu_req: held.cpu,
                mem_req: held.mem,
                disk_req: 0.0004,
                cpu_use: held.cpu,
                mem_use: held.mem,
                since_us: self.now_us,
                end_us: 0,
                end_kind: 0,
                generation: 0,
                updated: false,
            })?;
        }
        Ok(())
    }

    /// SUBMIT (first time with its constraints) and queue the placement attempt.
    fn submit(&mut self, slot: u32, first: bool) -> Result<()> {
        self.tasks[slot as usize].since_us = self.now_us;
        if self.emit {
            self.emit_task(slot, task_event::SUBMIT, None, false, self.now_us)?;
            if first {
                self.emit_constraints(slot, self.now_us)?;
            }
        }
        let generation = self.tasks[slot as usize].generation;
        if self.is_held(slot) {
            // Never placed: it waits to be killed, drawing nothing from the trace's stream.
            self.pending.push_back((slot, generation));
            return Ok(());
        }
        let at = self.now_us + self.exp_us(SCHEDULE_DELAY_S);
        self.push(at, Event::Schedule { slot, generation });
        Ok(())
    }

    fn fits(&self, t: &Task, production: bool, m: usize) -> bool {
        self.online[m]
            && self.mem_held[m] + t.mem_held(production) <= self.mem_cap[m]
            && self.cpu_req[m] + t.cpu_req <= self.cpu_cap[m] * CPU_OVERCOMMIT
            && (!production
                || (self.prod_cpu[m] + t.cpu_req <= self.cpu_cap[m]
                    && self.prod_mem[m] + t.mem_req <= self.mem_cap[m]))
            && self.jobs[t.job as usize]
                .constraints
                .iter()
                .all(|c| c.matches(&self.attrs[m]))
    }

    /// Hybrid fit: with [`WORST_FIT_SHARE`] the machine with the most free memory that takes the
    /// task (scanning at most 512), then the 512 with the least; otherwise the other way round
    /// (best fit first); then every machine for constrained tasks. Starts the run on success.
    fn try_place(&mut self, slot: u32) -> Result<bool> {
        let t = &self.tasks[slot as usize];
        let production = self.jobs[t.job as usize].priority >= crate::codes::PRODUCTION_PRIORITY;
        // No machine with less headroom can take the task: the largest machine has 1.0 of each.
        let needed = share_key(
            t.mem_held(production)
                .max(t.cpu_req / CPU_OVERCOMMIT)
                .min(1.0),
        );
        let candidates = || self.free_index.range((needed, 0)..);
        let spread = self.rng.chance(WORST_FIT_SHARE);
        let fits = |e: &&(u64, u32)| self.fits(t, production, e.1 as usize);
        let mut chosen = if spread {
            (candidates().rev().take(512).chain(candidates().take(512))).find(fits)
        } else {
            (candidates().take(512).chain(candidates().rev().take(512))).find(fits)
        }
        .map(|e| e.1);
        if chosen.is_none() && !self.jobs[t.job as usize].constraints.is_empty() {
            chosen = self
                .free_index
                .range((needed, 0)..)
                .map(|e| e.1)
                .find(|&m| self.fits(t, production, m as usize));
        }
        let Some(m) = chosen else { return Ok(false) };
        self.start_run(slot, m)?;
        Ok(true)
    }

    fn charge(&mut self, slot: u32, sign: f64) {
        let t = &self.tasks[slot as usize];
        let m = t.machine as usize;
        let production = self.jobs[t.job as usize].priority >= crate::codes::PRODUCTION_PRIORITY;
        let (cpu, mem, held) = (
            t.cpu_req * sign,
            t.mem_req * sign,
            t.mem_held(production) * sign,
        );
        self.free_index.remove(&(self.headroom_key(m), m as u32));
        self.cpu_req[m] += cpu;
        self.mem_held[m] += held;
        if production {
            self.prod_cpu[m] += cpu;
            self.prod_mem[m] += mem;
        }
        if self.online[m] {
            self.free_index.insert((self.headroom_key(m), m as u32));
        }
    }

    fn start_run(&mut self, slot: u32, m: u32) -> Result<()> {
        let job = &self.jobs[self.tasks[slot as usize].job as usize];
        let (kind, priority) = (job.kind, job.priority);
        let mut run_s = kind.run_time_s(&mut self.rng);
        let mut end_kind = [
            task_event::FINISH,
            task_event::KILL,
            task_event::EVICT,
            task_event::FAIL,
            task_event::LOST,
        ][self.rng.weighted(&END_WEIGHTS)];
        if kind == JobKind::Service && priority <= crate::codes::GRATIS_MAX_PRIORITY {
            let evicted_s = self.rng.exp(GRATIS_SERVICE_EVICT_MEAN_S);
            if evicted_s < run_s {
                (run_s, end_kind) = (evicted_s.max(1.0), task_event::EVICT);
            }
        }
        let run_us = (run_s * US as f64) as i64;
        let update = kind.long() && self.rng.chance(UPDATE_RUNNING_SHARE);
        let update_at = self.now_us + (run_us as f64 * self.rng.f64()) as i64;
        let t = &mut self.tasks[slot as usize];
        t.machine = m;
        t.since_us = self.now_us;
        t.end_us = self.now_us + run_us;
        t.end_kind = end_kind;
        let (end_us, generation, job) = (t.end_us, t.generation, t.job);
        self.charge(slot, 1.0);
        self.push(end_us, Event::RunEnd { slot, generation });
        if update {
            self.push(update_at, Event::UpdateRunning { slot, generation });
        }
        let first = !self.jobs[job as usize].scheduled;
        self.jobs[job as usize].scheduled = true;
        if self.emit {
            if first {
                self.emit_job(job, task_event::SCHEDULE, self.now_us)?;
            }
            self.emit_task(slot, task_event::SCHEDULE, Some(m), false, self.now_us)?;
        }
        Ok(())
    }

    /// Ends the current run with `kind` (machine-carrying terminal events).
    fn stop_run(&mut self, slot: u32, kind: u8) -> Result<()> {
        let now = self.now_us;
        if self.emit {
            let t = &self.tasks[slot as usize];
            let machine = t.machine;
            let row = self.usage_row(slot, now);
            self.window_rows.push(row);
            self.emit_task(slot, kind, Some(machine), false, now)?;
        }
        self.charge(slot, -1.0);
        let t = &mut self.tasks[slot as usize];
        t.machine = NO_MACHINE;
        t.generation += 1;
        Ok(())
    }

    fn end_run(&mut self, slot: u32) -> Result<()> {
        let kind = self.tasks[slot as usize].end_kind;
        self.stop_run(slot, kind)?;
        self.after_end(slot, kind)
    }

    /// Resubmits after EVICT/FAIL (most of the time) or retires the task.
    fn after_end(&mut self, slot: u32, kind: u8) -> Result<()> {
        if matches!(kind, task_event::EVICT | task_event::FAIL) && self.rng.chance(RESUBMIT_SHARE) {
            let at = self.now_us + self.exp_us(RESUBMIT_DELAY_S);
            let generation = self.tasks[slot as usize].generation;
            self.push(at, Event::Resubmit { slot, generation });
            return Ok(());
        }
        self.retire(slot, kind)
    }

    fn retire(&mut self, slot: u32, kind: u8) -> Result<()> {
        let t = &mut self.tasks[slot as usize];
        t.generation += 1;
        let j = t.job;
        self.free_slots(j).push(slot);
        let job = &mut self.jobs[j as usize];
        job.remaining -= 1;
        let rank = |k: u8| match k {
            task_event::FINISH => 0,
            task_event::FAIL => 1,
            _ => 2,
        };
        if rank(kind) > rank(job.end_kind) {
            job.end_kind = if kind == task_event::FAIL {
                task_event::FAIL
            } else {
                task_event::KILL
            };
        }
        if job.remaining == 0 {
            let (end, held) = (job.end_kind, job.held);
            if self.emit {
                self.emit_job(j, end, self.now_us)?;
            }
            self.free_jobs.push(j);
            if let Some((shape, tasks)) = held {
                // Held work comes back: a job of the same shape is submitted.
                self.push(self.now_us, Event::HeldArrive { shape, tasks });
            }
        }
        Ok(())
    }

    fn retry_pending(&mut self) -> Result<()> {
        for _ in 0..self.pending.len() {
            let (slot, generation) = self.pending.pop_front().expect("counted");
            if !self.live(slot, generation) {
                continue;
            }
            let waited = self.now_us - self.tasks[slot as usize].since_us;
            if waited > PENDING_KILL_S * US {
                if self.emit {
                    self.emit_task(slot, task_event::KILL, None, false, self.now_us)?;
                }
                self.retire(slot, task_event::KILL)?;
                continue;
            }
            if self.is_held(slot) {
                // Held: it waits to be killed (above), never updated nor placed.
                self.pending.push_back((slot, generation));
                continue;
            }
            if waited > 600 * US && !self.tasks[slot as usize].updated && self.rng.chance(0.5) {
                let t = &mut self.tasks[slot as usize];
                t.updated = true;
                t.cpu_req = round_sig4(t.cpu_req * 0.8);
                t.mem_req = round_sig4(t.mem_req * 0.8);
                t.cpu_use *= 0.8;
                t.mem_use *= 0.8;
                if self.emit {
                    self.emit_task(slot, task_event::UPDATE_PENDING, None, false, self.now_us)?;
                }
            }
            if !self.try_place(slot)? {
                self.pending.push_back((slot, generation));
            }
        }
        Ok(())
    }

    /// Raises a running task's requests, if the machine still takes it (as Borg refuses an
    /// update that does not fit).
    fn update_running(&mut self, slot: u32) -> Result<()> {
        self.charge(slot, -1.0);
        let t = self.tasks[slot as usize].clone();
        let m = t.machine;
        let raised = Task {
            cpu_req: round_sig4(t.cpu_req * 1.25),
            mem_req: round_sig4(t.mem_req * 1.1),
            ..t
        };
        let production = self.jobs[t.job as usize].priority >= crate::codes::PRODUCTION_PRIORITY;
        let fits = self.fits(&raised, production, m as usize);
        if fits {
            self.tasks[slot as usize] = raised;
        }
        self.charge(slot, 1.0);
        if !fits {
            return Ok(());
        }
        if self.emit {
            self.emit_task(
                slot,
                task_event::UPDATE_RUNNING,
                Some(m),
                false,
                self.now_us,
            )?;
        }
        Ok(())
    }

    /// The usage of running task `slot` from the later of its start and the window start to
    /// `end_us`.
    fn usage_row(&self, slot: u32, end_us: i64) -> UsageRow {
        let t = &self.tasks[slot as usize];
        UsageRow {
            start_us: t.since_us.max(self.window_start_us),
            end_us,
            job_id: self.jobs[t.job as usize].id,
            index: t.index,
            machine_id: self.cell.ids[t.machine as usize],
            machine: t.machine,
            cpu_use: t.cpu_use,
            mem_use: t.mem_use,
            mem_req: t.mem_req,
            disk_req: t.disk_req,
        }
    }

    /// Writes the usage rows of the window ending at `end_us` (sorted by start) and opens the next.
    fn close_window(&mut self, end_us: i64) -> Result<()> {
        let start = self.window_start_us;
        let mut rows = std::mem::take(&mut self.window_rows);
        for slot in 0..self.tasks.len() as u32 {
            if self.tasks[slot as usize].machine != NO_MACHINE && end_us > start {
                rows.push(self.usage_row(slot, end_us));
            }
        }
        rows.sort_by_key(|r| r.start_us);
        self.emit_usage(&rows)?;
        rows.clear();
        self.window_rows = rows;
        self.window_start_us = end_us;
        Ok(())
    }
}
