//! A run's allocation classes hour by hour: the mean share of the online nodes in each class of
//! seed 000's Table 4 (idle, STA, TA, PA, DA, overloaded) over each whole simulated hour of
//! `RUN/ticks/`, from the run's first tick. The paper's shares are a month's averages; a shorter
//! run's average can hide a trend its hours show (`cellsim report --paper` prints them).
//!
//! Invariant: an hour is whole when it holds every tick that starts in it (`3,600 s / tick`,
//! rounded down); the run's last hour, cut short, is left out, and so is a tick-less hour. A
//! tick with no node online has no shares: an hour's mean is over its other ticks (an hour of
//! none is left out).

use std::path::Path;

use arrow_array::types::UInt32Type;

use crate::error::{AnalysisError, Result};
use crate::parts::for_each_batch;

/// The `ticks/` columns read, in Table 4's order (as [`crate::paper::Measured::classes_pct`]).
pub const CLASSES: [&str; 6] = ["idle", "sta", "ta", "pa", "da", "overloaded"];

/// Microseconds in an hour.
const HOUR_US: u64 = 3_600_000_000;

/// The mean % of the online nodes in each of [`CLASSES`] over each whole hour of the run in
/// `run` whose ticks last `tick_us` microseconds, hour 0 first; an error naming the table when
/// the run has no ticks or a part lacks a column.
pub fn class_shares_by_hour(run: &Path, tick_us: u64) -> Result<Vec<[f64; 6]>> {
    let mut ticks = Vec::new();
    let mut online = Vec::new();
    let mut counts: [Vec<u32>; 6] = Default::default();
    for_each_batch(run, "ticks", |part| {
        ticks.extend_from_slice(part.column::<UInt32Type>("tick")?.values());
        online.extend_from_slice(part.column::<UInt32Type>("nodes_online")?.values());
        for (name, column) in CLASSES.iter().zip(&mut counts) {
            column.extend_from_slice(part.column::<UInt32Type>(name)?.values());
        }
        Ok(())
    })?;
    let Some(&first) = ticks.iter().min() else {
        return Err(AnalysisError::NoTicks {
            path: run.join("ticks"),
        });
    };
    let tick_us = tick_us.max(1);
    let per_hour = (HOUR_US / tick_us).max(1);
    let hour_of =
        |tick: u32| (u128::from(tick - first) * u128::from(tick_us) / u128::from(HOUR_US)) as usize;
    let hours = ticks.iter().map(|&t| hour_of(t)).max().unwrap_or(0) + 1;
    // Per hour: the shares summed over its ticks with nodes online, those ticks, all its ticks.
    let mut sums = vec![([0.0; 6], 0u64, 0u64); hours];
    for (i, &tick) in ticks.iter().enumerate() {
        let (shares, online_ticks, n) = &mut sums[hour_of(tick)];
        if online[i] > 0 {
            for (share, column) in shares.iter_mut().zip(&counts) {
                *share += 100.0 * f64::from(column[i]) / f64::from(online[i]);
            }
            *online_ticks += 1;
        }
        *n += 1;
    }
    Ok(sums
        .into_iter()
        .filter(|(_, online_ticks, n)| *n >= per_hour && *online_ticks > 0)
        .map(|(shares, online_ticks, _)| shares.map(|s| s / online_ticks as f64))
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Writes the ticks `rows` (tick, nodes online, counts in [`CLASSES`] order) as the part of
    /// `run`'s `ticks/` starting at `rows[0]`'s tick.
    fn write_ticks(run: &Path, rows: &[(u32, u32, [u32; 6])]) {
        let mut fields = vec![
            Field::new("tick", DataType::UInt32, false),
            Field::new("nodes_online", DataType::UInt32, false),
        ];
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.1))),
        ];
        for (k, name) in CLASSES.iter().enumerate() {
            fields.push(Field::new(*name, DataType::UInt32, false));
            columns.push(Arc::new(UInt32Array::from_iter_values(
                rows.iter().map(|r| r.2[k]),
            )));
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        std::fs::create_dir_all(run.join("ticks")).unwrap();
        let path = run.join(format!("ticks/part-{:08}.parquet", rows[0].0));
        crate::parts::write_part(&path, &batch);
    }

    /// 20-minute ticks, hand-worked: hour 0 (ticks 0-2) has DA on 1, 2 and 3 of 10 nodes (20 %
    /// on average), PA on the rest; hour 1 (ticks 3-5, in a part of its own, with 20 nodes
    /// online in its last tick and none in its first) DA on 5 and 10 (50 %, 50 %); tick 6
    /// starts an hour it does not fill, which is left out.
    #[test]
    fn whole_hours_are_averaged_and_the_last_partial_hour_left_out() {
        let run = tempfile::tempdir().unwrap();
        let da = |tick: u32, online: u32, da: u32| (tick, online, [0, 0, 0, online - da, da, 0]);
        write_ticks(
            run.path(),
            &[(3, 0, [0; 6]), da(4, 10, 5), da(5, 20, 10), da(6, 10, 9)],
        );
        write_ticks(run.path(), &[da(0, 10, 1), da(1, 10, 2), da(2, 10, 3)]);
        let hours = class_shares_by_hour(run.path(), 20 * 60 * 1_000_000).unwrap();
        assert_eq!(hours.len(), 2, "{hours:?}");
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(hours[0][4], 20.0) && close(hours[0][3], 80.0),
            "{hours:?}"
        );
        assert!(
            close(hours[1][4], 50.0) && close(hours[1][3], 50.0),
            "{hours:?}"
        );
        assert!(hours.iter().all(|h| h[0] == 0.0 && h[5] == 0.0));
    }

    /// A run without ticks, or whose ticks lack a column, is an error naming what is missing.
    #[test]
    fn missing_ticks_are_named() {
        let run = tempfile::tempdir().unwrap();
        let err = class_shares_by_hour(run.path(), 60_000_000).unwrap_err();
        assert!(err.to_string().contains("ticks"), "{err}");
        std::fs::create_dir(run.path().join("ticks")).unwrap();
        let err = class_shares_by_hour(run.path(), 60_000_000).unwrap_err();
        assert!(err.to_string().contains("ticks"), "{err}");
    }
}
