//! Progress display for long commands: an indicatif bar when stderr is a terminal, otherwise a
//! plain line every few seconds (SLURM logs). The work reports through shared atomic counters;
//! a background thread samples them, so the work itself never waits on the display. Stopping
//! wakes that thread at once (it waits on a channel, not a sleep), so a command ends as soon as
//! its work does.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
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
    /// Lines to show once, at once (above the bar on a terminal, and in the run's log): notes
    /// and warnings from the work (warnings with their `warning: ` prefix).
    pub notes: Vec<String>,
}

/// A running progress display; stops when dropped or [`Reporter::finish`]ed.
pub struct Reporter {
    /// Dropped to stop the display: the thread's wait ends at once.
    stop: Option<Sender<()>>,
    handle: Option<JoinHandle<()>>,
}

/// Interval between plain lines when stderr is not a terminal.
const PLAIN_INTERVAL: Duration = Duration::from_secs(10);

impl Reporter {
    /// Starts sampling `sample(elapsed)` for a job called `what` with units named by `unit`
    /// ("bytes" shows binary sizes, anything else plain counts): a bar refreshed every 200 ms on
    /// a terminal, else a check every 500 ms whether a plain line is due.
    pub fn start<F>(what: &str, unit: &'static str, sample: F) -> Reporter
    where
        F: Fn(Duration) -> Sample + Send + 'static,
    {
        let tty = std::io::stderr().is_terminal();
        let interval = Duration::from_millis(if tty { 200 } else { 500 });
        Reporter::sampling(what, unit, (tty, interval), sample)
    }

    /// [`Reporter::start`] with a bar or not (`tty`) and the interval between samples.
    fn sampling<F>(
        what: &str,
        unit: &'static str,
        (tty, interval): (bool, Duration),
        sample: F,
    ) -> Reporter
    where
        F: Fn(Duration) -> Sample + Send + 'static,
    {
        let (stop, stopped) = mpsc::channel::<()>();
        let what = what.to_string();
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
            let mut finished = false;
            loop {
                let s = sample(started.elapsed());
                for note in &s.notes {
                    match &bar {
                        Some(bar) => {
                            crate::run_log::append(note);
                            bar.println(note);
                        }
                        None => errln!("{note}"),
                    }
                }
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
                        crate::console::status(format_args!(
                            "{what}: {:.0}s{pct} {}",
                            started.elapsed().as_secs_f64(),
                            s.message
                        ));
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
                // Nothing is ever sent: the wait ends early when the reporter drops its sender.
                finished = stopped.recv_timeout(interval) != Err(RecvTimeoutError::Timeout);
            }
        });
        Reporter {
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    /// Shows a last sample and stops the display.
    pub fn finish(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop = None;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Finishing wakes the sampling thread at once, however long its interval, and it takes one
    /// last sample: a command ends when its work does (the thread used to sleep out its interval).
    #[test]
    fn finishing_does_not_wait_out_the_interval_and_samples_once_more() {
        let interval = Duration::from_secs(120);
        let (done, samples) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (d, n) = (done.clone(), samples.clone());
        let started = Instant::now();
        let reporter = Reporter::sampling("test", "ticks", (false, interval), move |_| {
            n.fetch_add(1, Ordering::SeqCst);
            Sample {
                done: d.load(Ordering::SeqCst),
                total: 7,
                message: String::new(),
                notes: Vec::new(),
            }
        });
        done.store(7, Ordering::SeqCst);
        reporter.finish();
        assert!(started.elapsed() < interval / 4, "{:?}", started.elapsed());
        // The first sample and the last (the first may already see the work done).
        assert_eq!(samples.load(Ordering::SeqCst), 2);
    }
}
