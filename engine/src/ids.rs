//! Newtype indices into the cell's columns. An index is only meaningful for the table that
//! issued it; `NONE` marks an absent value inside a column (e.g. a pending task's node).

use bytemuck::{Pod, Zeroable};

use crate::codec::column::SnapshotColumn;
use crate::codec::{SectionReader, SectionWriter, SnapshotError};

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Pod, Zeroable, Default,
            serde::Serialize, serde::Deserialize,
        )]
        pub struct $name(pub u32);

        impl $name {
            /// The "no such entry" marker.
            pub const NONE: $name = $name(u32::MAX);

            /// The position in the column.
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// True unless this is [`Self::NONE`].
            pub fn is_some(self) -> bool {
                self != Self::NONE
            }
        }
    };
}

index_type!(
    /// A node (machine) of the cell: a row of [`crate::cell::Nodes`].
    NodeIdx
);
/// Saved raw, as it is in the cell's columns.
impl SnapshotColumn for NodeIdx {
    fn save(col: &[Self], w: &mut SectionWriter) {
        w.column(col);
    }

    fn load(r: &mut SectionReader<'_>, len: usize) -> Result<Vec<Self>, SnapshotError> {
        Ok(r.column_of::<NodeIdx>(len)?.to_vec())
    }
}

index_type!(
    /// A task slot: a row of [`crate::cell::Tasks`]; slots are recycled after a task ends.
    TaskIdx
);
index_type!(
    /// An agent of the running policy (its own numbering, e.g. node agents then brokers).
    AgentIdx
);
index_type!(
    /// A distinct set of task constraints, numbered by the cell as tasks get them
    /// ([`crate::cell::Cell::constraint_set`]), so caches of per-set results index a vector.
    ConstraintSetIdx
);

impl ConstraintSetIdx {
    /// The empty set (a task without constraints).
    pub const EMPTY: ConstraintSetIdx = ConstraintSetIdx(0);
}

index_type!(
    /// A simulated tick (one minute by default) counted from the start of the trace window.
    Tick
);
