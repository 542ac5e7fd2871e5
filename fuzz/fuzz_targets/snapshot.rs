//! The snapshot decoder: any bytes, as a snapshot file, are opened by `Snapshot::open` and, when
//! it accepts them, their `cell` section is decoded by `load_cell`, whose result must pass the
//! cell's invariant check (`Cell::check`); everything else is a `SnapshotError` naming the file.
//!
//! Checksums would stop nearly every mutation at the door, so when the first input byte is odd
//! the harness first re-seals the rest as the writer would (header CRC, file length, each
//! section's CRC where its table entry lies inside the file): the fuzzer then reaches the
//! column and cell decoding behind them. Seeds: real snapshots of small runs.
#![no_main]

use engine::snapshot::{Snapshot, state};
use libfuzzer_sys::fuzz_target;

const HEADER_LEN: usize = 64;
const ENTRY_LEN: usize = 32;

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Rewrites the file length, the header's CRC and every section's CRC of `b` (format.rs).
fn reseal(b: &mut [u8]) {
    if b.len() < HEADER_LEN {
        return;
    }
    let len = b.len() as u64;
    b[40..48].copy_from_slice(&len.to_le_bytes());
    let count = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    for s in 0..count.min(1024) {
        let e = HEADER_LEN + s * ENTRY_LEN;
        if e + ENTRY_LEN > b.len() {
            break;
        }
        let (offset, section_len) = (le_u64(b, e + 8), le_u64(b, e + 16));
        let Some(end) = offset.checked_add(section_len).filter(|&end| end <= len) else {
            continue;
        };
        let crc = crc32fast::hash(&b[offset as usize..end as usize]);
        b[e + 24..e + 28].copy_from_slice(&crc.to_le_bytes());
    }
    let crc = crc32fast::hash(&b[..56]);
    b[56..60].copy_from_slice(&crc.to_le_bytes());
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let mut bytes = bytes.to_vec();
    if mode & 1 == 1 {
        reseal(&mut bytes);
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("tick-00000001.snap");
    std::fs::write(&path, &bytes).expect("writing the snapshot");
    let shown = path.display().to_string();
    let snap = match Snapshot::open(&path) {
        Ok(snap) => snap,
        Err(e) => {
            assert!(e.to_string().contains(&shown), "{e}");
            return;
        }
    };
    let _ = snap.header();
    match snap
        .section("cell")
        .and_then(|mut r| state::load_cell(&mut r))
    {
        Ok(cell) => {
            if let Err(problem) = cell.check() {
                panic!("load_cell accepted a cell that breaks an invariant: {problem}");
            }
        }
        Err(e) => assert!(e.to_string().contains(&shown), "{e}"),
    }
});
