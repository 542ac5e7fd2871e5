//! Files written whole or not at all: the content goes to a temporary file beside the target
//! (`NAME.tmp`), which is synced and renamed over the target, and the directory synced. A reader
//! (or a process started after a crash) sees the old file or the new one, never a part; a write
//! that fails removes its temporary file, so a full disk gets its space back. Used for every
//! small file that marks or records something (summaries, `run.toml`) and for snapshots.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A failed atomic write: the file it concerns (the temporary one, or the target for the
/// rename) and the OS error. Callers fold it into their own error type.
#[derive(Debug)]
pub struct WriteError {
    /// The file involved.
    pub path: PathBuf,
    /// The OS error.
    pub source: std::io::Error,
}

/// The temporary file [`write_atomically`] writes for `path`: its name with `.tmp` appended.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Replaces `path` with what `write` writes (through a buffer), atomically and durably; see
/// the module doc.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    let mut file = AtomicFile::create(path)?;
    write(file.writer()).map_err(|source| file.error(source))?;
    file.commit()
}

/// A file being written under its temporary name ([`tmp_path`]), for writers that produce it
/// piece by piece or seek back (snapshots write their sections, then the table before them).
/// [`AtomicFile::commit`] syncs it and renames it over the target; dropped without a commit
/// (an error, a panic), the temporary file is removed.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    /// `None` once committed.
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file for `path`.
    pub fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        let tmp = tmp_path(path);
        let file = File::create(&tmp).map_err(|source| WriteError {
            path: tmp.clone(),
            source,
        })?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(BufWriter::new(file)),
        })
    }

    /// The buffered temporary file.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.file.as_mut().expect("an uncommitted file is open")
    }

    /// `source` as a failure of the temporary file.
    pub fn error(&self, source: std::io::Error) -> WriteError {
        WriteError {
            path: self.tmp.clone(),
            source,
        }
    }

    /// Flushes and syncs the temporary file, renames it over the target and syncs the
    /// directory.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let file = self.file.take().expect("committed once");
        let synced = (|| file.into_inner().map_err(|e| e.into_error())?.sync_all())();
        if let Err(source) = synced {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(self.error(source));
        }
        let failed = |source| WriteError {
            path: self.path.clone(),
            source,
        };
        std::fs::rename(&self.tmp, &self.path).map_err(failed)?;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir).and_then(|d| d.sync_all()).map_err(failed)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_or_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        write_atomically(&path, |w| w.write_all(b"old")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        // A write that fails halfway leaves the old file and no temporary one.
        let err = write_atomically(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.path, dir.path().join("summary.json.tmp"));
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(!tmp_path(&path).exists());
        write_atomically(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        // A file abandoned before its commit (an error or a panic in its writer) leaves
        // nothing behind either.
        let mut abandoned = AtomicFile::create(&path).unwrap();
        abandoned.writer().write_all(b"half").unwrap();
        assert!(tmp_path(&path).exists());
        drop(abandoned);
        assert!(!tmp_path(&path).exists());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
