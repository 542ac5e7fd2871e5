//! The machine side of trace statistics: the machine mix at first ADD, online capacity at each
//! sample instant, and the final attribute values (for constraint matching).

use std::collections::HashMap;

use ingest::codes::machine_event;
use ingest::{Dataset, Table};
use serde::Serialize;

use crate::error::Result;
use ingest::columns::{bool_at, f32_at, i64_at, i64s, strings, u8s, u64s};

/// The 2011 cell's machine shapes (Reiss et al., SoCC 2012): CPU, memory, machines of 12,583.
pub use ingest::synth::cell::{MACHINE_MIX, REAL_CELL_MACHINES};

/// One machine shape and how many machines have it.
#[derive(Debug, Clone, Serialize)]
pub struct MixRow {
    /// CPU capacity (normalised, 2 decimals).
    pub cpu: f64,
    /// Memory capacity (normalised, 2 decimals).
    pub mem: f64,
    /// Machines with this shape at their first ADD.
    pub machines: u64,
    /// Machines the 2011 mix would have for this cell size (0 for shapes it lacks).
    pub reference: f64,
}

/// Online capacity at one instant.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Capacity {
    /// Machines online.
    pub machines: u64,
    /// Sum of their CPU capacities.
    pub cpu: f64,
    /// Sum of their memory capacities.
    pub mem: f64,
}

/// An attribute value of a machine: text and integer reading.
pub type AttrValue = (String, Option<i64>);

/// What the machine tables say.
pub struct MachineFacts {
    /// Distinct machine IDs.
    pub machines: u64,
    /// Machine shapes, most common first.
    pub mix: Vec<MixRow>,
    /// Machines whose first ADD has no capacities.
    pub unknown_shape: u64,
    /// Online capacity at each sample instant.
    pub capacity: Vec<Capacity>,
    /// Events per type (ADD, REMOVE, UPDATE).
    pub events: [u64; 3],
    /// Attribute values per machine after all rows, by attribute name.
    pub attributes: HashMap<u64, HashMap<String, AttrValue>>,
}

fn round2(v: f32) -> f64 {
    (v as f64 * 100.0).round() / 100.0
}

/// Replays machine_events (and machine_attributes when present), sampling capacity at `instants`.
pub fn machine_facts(dir: &std::path::Path, instants: &[i64]) -> Result<MachineFacts> {
    let mut state: HashMap<u64, (bool, f64, f64)> = HashMap::new();
    let mut first_shape: HashMap<u64, Option<(f64, f64)>> = HashMap::new();
    let mut events = [0u64; 3];
    let mut capacity = Vec::with_capacity(instants.len());
    let mut now = Capacity::default();
    let mut next = 0;
    if let Some(ds) = Dataset::open(dir, Table::MachineEvents)? {
        for batch in ds.batches(&["time", "machine_id", "event_type", "cpus", "memory"])? {
            let b = batch?;
            let (time, id, kind) = (i64s(&b, 0), u64s(&b, 1), u8s(&b, 2));
            for row in 0..b.num_rows() {
                while next < instants.len() && time[row] > instants[next] {
                    capacity.push(now);
                    next += 1;
                }
                events[kind[row] as usize] += 1;
                let (cpu, mem) = (f32_at(&b, 3, row), f32_at(&b, 4, row));
                first_shape
                    .entry(id[row])
                    .or_insert_with(|| cpu.zip(mem).map(|(c, m)| (round2(c), round2(m))));
                let entry = state.entry(id[row]).or_insert((false, 0.0, 0.0));
                if entry.0 {
                    now.machines -= 1;
                    now.cpu -= entry.1;
                    now.mem -= entry.2;
                }
                if let Some(c) = cpu {
                    entry.1 = c as f64;
                }
                if let Some(m) = mem {
                    entry.2 = m as f64;
                }
                entry.0 = kind[row] != machine_event::REMOVE;
                if entry.0 {
                    now.machines += 1;
                    now.cpu += entry.1;
                    now.mem += entry.2;
                }
            }
        }
    }
    while capacity.len() < instants.len() {
        capacity.push(now);
    }
    let mut counts: HashMap<(u64, u64), u64> = HashMap::new();
    let mut unknown_shape = 0;
    for shape in first_shape.values() {
        match shape {
            Some((c, m)) => {
                *counts
                    .entry(((c * 100.0).round() as u64, (m * 100.0).round() as u64))
                    .or_default() += 1
            }
            None => unknown_shape += 1,
        }
    }
    let machines = first_shape.len() as u64;
    let scale = machines as f64 / REAL_CELL_MACHINES as f64;
    for (c, m, _) in MACHINE_MIX {
        counts
            .entry(((c * 100.0).round() as u64, (m * 100.0).round() as u64))
            .or_default();
    }
    let mut mix: Vec<MixRow> = counts
        .into_iter()
        .map(|((c, m), n)| {
            let (cpu, mem) = (c as f64 / 100.0, m as f64 / 100.0);
            let reference = MACHINE_MIX
                .iter()
                .find(|r| (r.0 - cpu).abs() < 1e-9 && (r.1 - mem).abs() < 1e-9)
                .map_or(0.0, |r| r.2 as f64 * scale);
            MixRow {
                cpu,
                mem,
                machines: n,
                reference,
            }
        })
        .collect();
    mix.sort_by(|a, b| {
        (b.machines, b.reference as u64)
            .cmp(&(a.machines, a.reference as u64))
            .then(a.cpu.total_cmp(&b.cpu))
            .then(a.mem.total_cmp(&b.mem))
    });
    Ok(MachineFacts {
        machines,
        mix,
        unknown_shape,
        capacity,
        events,
        attributes: attributes(dir)?,
    })
}

fn attributes(dir: &std::path::Path) -> Result<HashMap<u64, HashMap<String, AttrValue>>> {
    let mut attrs: HashMap<u64, HashMap<String, AttrValue>> = HashMap::new();
    let Some(ds) = Dataset::open(dir, Table::MachineAttributes)? else {
        return Ok(attrs);
    };
    let columns = [
        "machine_id",
        "attribute_name",
        "attribute_value",
        "attribute_value_int",
        "attribute_deleted",
    ];
    for batch in ds.batches(&columns)? {
        let b = batch?;
        let (ids, names, values) = (u64s(&b, 0), strings(&b, 1), strings(&b, 2));
        for row in 0..b.num_rows() {
            let name = names[row].unwrap_or_default().to_string();
            let machine = attrs.entry(ids[row]).or_default();
            if bool_at(&b, 4, row) {
                machine.remove(&name);
            } else {
                let text = values[row].unwrap_or_default().to_string();
                machine.insert(name, (text, i64_at(&b, 3, row)));
            }
        }
    }
    Ok(attrs)
}
