//! The lock a run directory is held with while a cellsim process uses it: an exclusive advisory
//! lock (`flock`) on `RUN/.cellsim.lock`, taken before anything in the directory is written (the
//! synthetic cell included) and released when the process ends, however it ends: the kernel
//! drops it with the process, so a killed run leaves no stale lock behind. A second process on
//! the same directory (the same sbatch submitted twice, a resume started by hand beside a running
//! job) is refused at once rather than interleaving its outputs and snapshots with the first's.
//! Where the file system cannot lock (some network mounts), a note says so and the run goes on
//! unprotected.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::console::errln;

use engine::run_dir::LOCK_FILE;

/// A held run-directory lock (released when dropped or when the process ends).
pub struct RunLock {
    _file: Option<File>,
}

/// Locks `dir` (created if missing) for this process, or says which process holds it.
pub fn lock(dir: &Path) -> Result<RunLock> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {
            // Who holds it, for the message a second process prints.
            let pid = format!("{}\n", std::process::id());
            file.set_len(0)
                .and_then(|()| file.write_all(pid.as_bytes()))
                .with_context(|| format!("writing {}", path.display()))?;
            Ok(RunLock { _file: Some(file) })
        }
        Err(TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = match holder.trim() {
                "" => String::new(),
                pid => format!(" (pid {pid})"),
            };
            bail!(
                "{} is in use by another cellsim process{holder}; wait for it to end, or give another directory",
                dir.display()
            )
        }
        Err(TryLockError::Error(e)) => {
            errln!(
                "note: {} cannot be locked ({e}); make sure no other cellsim uses {}",
                path.display(),
                dir.display()
            );
            Ok(RunLock { _file: None })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second lock on a held directory is refused naming the holder; once the first is
    /// dropped the directory can be locked again.
    #[test]
    fn one_holder_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let first = lock(&run).unwrap();
        let refused = lock(&run).err().unwrap().to_string();
        let pid = format!("(pid {})", std::process::id());
        assert!(refused.contains("in use by another cellsim process") && refused.contains(&pid));
        drop(first);
        lock(&run).unwrap();
    }
}
