//! How a cell column's elements are stored in a snapshot ([`SnapshotColumn`]): plain numbers and
//! indices raw (written from where they are, read back in place and copied), flags as bytes 0 or
//! 1, enums as their `u8` codes; every value read is checked (a flag byte other than 0 or 1, an
//! unknown code is a corrupt snapshot, not a panic). The columns themselves are declared once,
//! with their order, in `cell/columns.rs`.

use super::format::{SectionReader, SectionWriter, SnapshotError};

/// An element type of a saved column.
pub trait SnapshotColumn: Sized {
    /// Writes `col`.
    fn save(col: &[Self], w: &mut SectionWriter);
    /// Reads a column of `len` values, checked.
    fn load(r: &mut SectionReader<'_>, len: usize) -> Result<Vec<Self>, SnapshotError>;
}

macro_rules! raw {
    ($($t:ty),*) => {$(
        impl SnapshotColumn for $t {
            fn save(col: &[Self], w: &mut SectionWriter) {
                w.column(col);
            }

            fn load(r: &mut SectionReader<'_>, len: usize) -> Result<Vec<Self>, SnapshotError> {
                Ok(r.column_of::<$t>(len)?.to_vec())
            }
        }
    )*};
}

raw!(u8, u16, u32, u64, i64);

/// Reads `len` codes and maps each through `decode`, `what` naming the code in the error.
pub fn codes<T>(
    r: &mut SectionReader<'_>,
    len: usize,
    what: &str,
    decode: impl Fn(u8) -> Option<T>,
) -> Result<Vec<T>, SnapshotError> {
    let bytes = r.column_of::<u8>(len)?;
    bytes
        .iter()
        .map(|&b| decode(b))
        .collect::<Option<Vec<T>>>()
        .ok_or_else(|| r.corrupt(format!("unknown {what} code")))
}

impl SnapshotColumn for bool {
    fn save(col: &[Self], w: &mut SectionWriter) {
        w.column(&col.iter().map(|&v| v as u8).collect::<Vec<u8>>());
    }

    fn load(r: &mut SectionReader<'_>, len: usize) -> Result<Vec<Self>, SnapshotError> {
        let bytes = r.column_of::<u8>(len)?;
        if bytes.iter().any(|&b| b > 1) {
            return Err(r.corrupt("a flag byte is neither 0 nor 1"));
        }
        Ok(bytes.iter().map(|&b| b == 1).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::TaskState;
    use crate::classify::NodeClass;
    use crate::codec::format::{Header, Snapshot, SnapshotWriter};
    use crate::ids::NodeIdx;

    /// Flags, codes and raw values come back as written; a flag byte of 2 or an unknown state
    /// or class code is a corrupt snapshot, named.
    #[test]
    fn columns_round_trip_and_bad_codes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let states = [TaskState::Running, TaskState::Free, TaskState::Pending];
        let mut w = SnapshotWriter::create(&path, &["columns"]).unwrap();
        let s = w.section("columns");
        bool::save(&[true, false], s);
        TaskState::save(&states, s);
        NodeClass::save(&NodeClass::ALL, s);
        NodeIdx::save(&[NodeIdx(4), NodeIdx::NONE], s);
        s.column(&[2u8, 0]);
        s.column(&[3u8]);
        s.column(&[u8::MAX]);
        let header = Header {
            tick: 0,
            config_hash: 0,
            trace_hash: 0,
            run_id: 0,
        };
        w.finish(header).unwrap();
        let snap = Snapshot::open(&path).unwrap();
        let mut r = snap.section("columns").unwrap();
        assert_eq!(bool::load(&mut r, 2).unwrap(), [true, false]);
        assert_eq!(TaskState::load(&mut r, 3).unwrap(), states);
        assert_eq!(
            NodeClass::load(&mut r, NodeClass::ALL.len()).unwrap(),
            NodeClass::ALL
        );
        assert_eq!(
            NodeIdx::load(&mut r, 2).unwrap(),
            [NodeIdx(4), NodeIdx::NONE]
        );
        let e = bool::load(&mut r, 2).unwrap_err().to_string();
        assert!(e.contains("neither 0 nor 1"), "{e}");
        let e = TaskState::load(&mut r, 1).unwrap_err().to_string();
        assert!(e.contains("unknown task state code"), "{e}");
        let e = NodeClass::load(&mut r, 1).unwrap_err().to_string();
        assert!(e.contains("unknown node class code"), "{e}");
    }
}
