//! Progress display for long commands: an indicatif bar when stderr is a terminal, otherwise a
//! plain line every few seconds (SLURM logs). The work reports through shared atomic counters;
//! a background thread samples them, so the work itself never waits on the display.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::console::errln;

/// One sample of a job's progress.
pub struct Sample {
    /// Units done (bytes, simulated seconds...).
    pub done: u64,
    /// Units in total, 0 when unknown.
    pub total: u64,
    /// Extra text: rates and counts.
    pub message: String,
}

/// A running progress display; stops when dropped or [`Reporter::finish`]ed.
pub struct Reporter {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Interval between plain lines when stderr is not a terminal.
const PLAIN_INTERVAL: Duration = Duration::from_secs(10);

impl Reporter {
    /// Starts sampling `sample(elapsed)` for a job called `what` with units named by `unit`
    /// ("bytes" shows binary sizes, anything else plain counts).
    pub fn start<F>(what: &str, unit: &'static str, sample: F) -> Reporter
    where
        F: Fn(Duration) -> Sample + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = stop.clone();
        let what = what.to_string();
        let tty = std::io::stderr().is_terminal();
        let handle = std::thread::spawn(move || {
            let started = Instant::now();
            let bar = tty.then(|| {
                let bar = ProgressBar::new(0);
                let counts = if unit == "bytes" {
                    "{bytes}/{total_bytes}"
                } else {
                    "{pos}/{len}"
                };
                let template = format!(
                    "{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {counts} ETA {{eta}} {{msg}}"
                );
                bar.set_style(ProgressStyle::with_template(&template).expect("valid template"));
                bar.set_prefix(what.clone());
                bar
            });
            let mut last_line = Instant::now();
            loop {
                let finished = stop_flag.load(Ordering::Relaxed);
                let s = sample(started.elapsed());
                match &bar {
                    Some(bar) => {
                        bar.set_length(s.total);
                        bar.set_position(s.done);
                        bar.set_message(s.message);
                    }
                    None if finished || last_line.elapsed() >= PLAIN_INTERVAL => {
                        let pct = if s.total > 0 {
                            format!(" {:.1}%", 100.0 * s.done as f64 / s.total as f64)
                        } else {
                            String::new()
                        };
                        errln!(
                            "{what}: {:.0}s{pct} {}",
                            started.elapsed().as_secs_f64(),
                            s.message
                        );
                        last_line = Instant::now();
                    }
                    None => {}
                }
                if finished {
                    if let Some(bar) = &bar {
                        bar.finish();
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(if tty { 200 } else { 500 }));
            }
        });
        Reporter {
            stop,
            handle: Some(handle),
        }
    }

    /// Shows a last sample and stops the display.
    pub fn finish(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// Formats a rate per second with a metric suffix: `1.2M`.
pub fn rate(count: u64, elapsed: Duration) -> String {
    let per_s = count as f64 / elapsed.as_secs_f64().max(1e-9);
    match per_s {
        r if r >= 1e9 => format!("{:.1}G", r / 1e9),
        r if r >= 1e6 => format!("{:.1}M", r / 1e6),
        r if r >= 1e3 => format!("{:.1}k", r / 1e3),
        r => format!("{r:.0}"),
    }
}
