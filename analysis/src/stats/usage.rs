//! Resource usage from task_usage: CPU-seconds and memory-seconds per hourly bucket, so they can
//! be divided by the capacity online in that hour.

use ingest::{Dataset, Table};

use crate::error::Result;
use ingest::columns::{f32_at, i64s};

/// Used resource-time per bucket: (CPU x seconds, memory x seconds).
pub type UsageBuckets = Vec<(f64, f64)>;

/// Sums `cpu_rate x duration` and `canonical_memory_usage x duration` of every usage row into the
/// bucket `[origin + k*width, origin + (k+1)*width)` of its start; `None` without task_usage.
pub fn usage_buckets(
    dir: &std::path::Path,
    origin_us: i64,
    width_us: i64,
    buckets: usize,
) -> Result<Option<UsageBuckets>> {
    let Some(ds) = Dataset::open(dir, Table::TaskUsage)? else {
        return Ok(None);
    };
    let mut sums = vec![(0.0, 0.0); buckets];
    for batch in ds.batches(&[
        "start_time",
        "end_time",
        "cpu_rate",
        "canonical_memory_usage",
    ])? {
        let b = batch?;
        let (start, end) = (i64s(&b, 0), i64s(&b, 1));
        for row in 0..b.num_rows() {
            if start[row] < origin_us {
                continue;
            }
            let k = ((start[row] - origin_us) / width_us) as usize;
            if k >= buckets {
                continue;
            }
            let seconds = (end[row] - start[row]).max(0) as f64 / 1e6;
            sums[k].0 += f32_at(&b, 2, row).unwrap_or(0.0) as f64 * seconds;
            sums[k].1 += f32_at(&b, 3, row).unwrap_or(0.0) as f64 * seconds;
        }
    }
    Ok(Some(sums))
}
