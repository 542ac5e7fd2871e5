//! The snapshot file's encoding, below everything that saves state in it: the file format
//! ([`format`]: header, section table, checksummed sections of columns) and how a column's
//! elements are stored ([`column`]). What a snapshot holds, when it is taken and which run it
//! belongs to are `snapshot/`'s; each type that saves a column says how (`SnapshotColumn`
//! beside the type).

pub mod column;
pub mod format;

pub use format::{
    Header, SectionReader, SectionWriter, Snapshot, SnapshotError, SnapshotWriter, read_header,
};

/// A 64-bit hash of `bytes` (the project's key hash over its 8-byte words): what a snapshot's
/// header records of the run's configuration and trace.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let words: Vec<u64> = bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    ingest::rng::hash_keys(bytes.len() as u64, &words)
}
