//! The log of waiting tasks whose need changed: a pending task's requests, usage, priority or
//! constraints, in change order (a task may appear more than once). A placer that keeps
//! waiting tasks grouped by what they need across ticks (`greedy/class_queues.rs`) reads the
//! changes since its last look instead of looking at every waiting task each tick.
//!
//! Invariants: positions count every change ever logged, so a reader's position stays
//! meaningful while the log runs; when the log is forgotten (it reached [`NEED_LOG_MAX`]
//! entries, or the constraint sets were numbered again) every earlier position becomes
//! unreadable ([`NeedLog::since`] answers `None`) and readers must look at every waiting task
//! again. A pure cache: not saved (a restored reader starts from nothing).

use crate::ids::TaskIdx;

/// Entries at which the log is forgotten (1 MiB of task numbers): readers look at every
/// waiting task again, which costs about what reading that many changes does.
pub const NEED_LOG_MAX: usize = 1 << 18;

/// Changes to pending tasks' needs since position `start` (module doc).
#[derive(Debug, Default, Clone)]
pub struct NeedLog {
    tasks: Vec<TaskIdx>,
    /// The position of `tasks[0]`.
    start: u64,
}

impl NeedLog {
    /// Logs that pending task `t`'s need changed.
    pub fn push(&mut self, t: TaskIdx) {
        if self.tasks.len() >= NEED_LOG_MAX {
            self.forget();
        }
        self.tasks.push(t);
    }

    /// Makes every position so far unreadable (readers look at every waiting task again).
    pub fn forget(&mut self) {
        self.start += self.tasks.len() as u64 + 1;
        self.tasks.clear();
    }

    /// The position after the last change.
    pub fn end(&self) -> u64 {
        self.start + self.tasks.len() as u64
    }

    /// The changes logged from position `since` on, or `None` if they were forgotten.
    pub fn since(&self, since: u64) -> Option<&[TaskIdx]> {
        let k = usize::try_from(since.checked_sub(self.start)?).ok()?;
        self.tasks.get(k..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: positions count from the run's start; a forgotten log answers `None` for every
    /// earlier position, a later one reads on; a full log forgets itself.
    #[test]
    fn positions_read_until_forgotten() {
        let mut log = NeedLog::default();
        let (a, b) = (TaskIdx(4), TaskIdx(9));
        assert_eq!(log.since(log.end()), Some(&[][..]));
        log.push(a);
        log.push(b);
        log.push(a);
        assert_eq!(log.since(0), Some(&[a, b, a][..]));
        assert_eq!(log.since(2), Some(&[a][..]));
        assert_eq!(log.since(4), None, "beyond the end");
        let end = log.end();
        log.forget();
        assert!(log.since(0).is_none() && log.since(end).is_none());
        let now = log.end();
        log.push(b);
        assert_eq!(log.since(now), Some(&[b][..]));
        for _ in 0..NEED_LOG_MAX {
            log.push(a);
        }
        assert!(log.since(now).is_none(), "forgotten when full");
        assert_eq!(log.since(log.end() - 1), Some(&[a][..]));
    }
}
