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
    /// Units done before this process started (a resumed run's restored ticks), which the rate
    /// behind the plain lines' ETA leaves out.
    pub done_before: u64,
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

/// The narrowest terminal a bar is drawn on.
const MIN_BAR_COLUMNS: u16 = 60;

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
        // A bar needs room: on a terminal too narrow for one (or reporting no width), plain
        // lines, as in a log (issue 56: the bar and the table ran together at zero columns).
        let columns = ::console::Term::stderr().size_checked().map(|(_, c)| c);
        let tty = !crate::embedded() && std::io::stderr().is_terminal() && bar_fits(columns);
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
                        if s.done_before != 0 && bar.position() == s.done_before {
                            // A resumed run's restored ticks just came in one step: the ETA
                            // is for the ticks this process simulates.
                            bar.reset_eta();
                        }
                        bar.set_message(s.message.clone());
                    }
                    None if finished || last_line.elapsed() >= PLAIN_INTERVAL => {
                        if let Some(line) = plain_line(&s, started.elapsed(), finished) {
                            crate::console::progress(format_args!("{what}: {line}"));
                        }
                        last_line = Instant::now();
                    }
                    None => {}
                }
                if finished {
                    if let Some(bar) = &bar {
                        // Stopped short (a signal, an error): the bar stays where the work did,
                        // not at 100 %.
                        match stopped_short(&s) {
                            true => bar.abandon(),
                            false => bar.finish(),
                        }
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

/// Whether a terminal `columns` wide (`None`: it reports no size) has room for a bar.
fn bar_fits(columns: Option<u16>) -> bool {
    columns.is_some_and(|c| c >= MIN_BAR_COLUMNS)
}

/// Whether the work ended before its total (a signal, an error): its bar is left where it is,
/// not filled to 100 %.
fn stopped_short(s: &Sample) -> bool {
    s.total > 0 && s.done < s.total
}

/// A plain progress line after `what: `: time elapsed, share done, the time left at the rate
/// of this process's units (not on the last line, nor before there is a rate), then the work's
/// message: `run: 2h05m10s 41.3% ETA 2h58m simulated 301.2 h, 1200x real time`. No last line
/// when this process did nothing: it would say nothing (a run refused before its first tick,
/// whose error follows).
fn plain_line(s: &Sample, elapsed: Duration, last: bool) -> Option<String> {
    if last && s.done == s.done_before {
        return None;
    }
    let mut line = duration_text(elapsed);
    if s.total > 0 {
        line.push_str(&format!(" {:.1}%", 100.0 * s.done as f64 / s.total as f64));
        let fresh = s.done.saturating_sub(s.done_before);
        if !last && fresh > 0 && s.done < s.total {
            let left_s = elapsed.as_secs_f64() * (s.total - s.done) as f64 / fresh as f64;
            line.push_str(" ETA ");
            line.push_str(&duration_text(Duration::from_secs_f64(left_s.min(1e9))));
        }
    }
    if !s.message.is_empty() {
        line.push(' ');
        line.push_str(&s.message);
    }
    Some(line)
}

/// A duration as a log reader takes it in at a glance: `42s`, `12m05s`, `3h12m05s`, `2d03h12m`
/// (whole seconds, rounded down).
fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    let (days, h, m, sec) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    match (days, s / 3_600, s / 60) {
        (1.., _, _) => format!("{days}d{h:02}h{m:02}m"),
        (0, 1.., _) => format!("{}h{m:02}m{sec:02}s", s / 3_600),
        (0, 0, 1..) => format!("{m}m{sec:02}s"),
        _ => format!("{sec}s"),
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

    /// Durations worked by hand at each unit's edge.
    #[test]
    fn durations_read_at_a_glance() {
        let text = |s: u64| duration_text(Duration::from_secs(s));
        assert_eq!(text(0), "0s");
        assert_eq!(text(59), "59s");
        assert_eq!(text(60), "1m00s");
        assert_eq!(text(3_599), "59m59s");
        assert_eq!(text(3_600), "1h00m00s");
        assert_eq!(text(86_399), "23h59m59s");
        assert_eq!(text(86_400), "1d00h00m");
        assert_eq!(text(3 * 86_400 + 5 * 3_600 + 7 * 60 + 9), "3d05h07m");
        assert_eq!(
            duration_text(Duration::from_millis(61_999)),
            "1m01s",
            "rounded down"
        );
    }

    /// The time left is the remaining units at the rate of the units this process did: a run
    /// resumed at 600 of 1,000 ticks that did 100 more in 50 s has 300 left, 150 s. No ETA
    /// before any progress, on the last line, nor without a total.
    #[test]
    fn a_bar_only_where_it_fits_and_left_where_the_work_stopped() {
        assert!(!bar_fits(Some(0)) && !bar_fits(Some(59)) && !bar_fits(None));
        assert!(bar_fits(Some(60)) && bar_fits(Some(200)));
        let at = |done, total| Sample {
            done,
            total,
            done_before: 0,
            message: String::new(),
            notes: Vec::new(),
        };
        // Ctrl-C at tick 360 of 1,440 (issue 56: the bar jumped to "1440/1440 ETA 0s").
        assert!(stopped_short(&at(360, 1_440)));
        assert!(!stopped_short(&at(1_440, 1_440)) && !stopped_short(&at(5, 0)));
    }

    #[test]
    fn plain_lines_estimate_the_time_left_from_the_fresh_rate() {
        let sample = |done: u64, total: u64, done_before: u64| Sample {
            done,
            total,
            done_before,
            message: "simulated 11.7 h".into(),
            notes: Vec::new(),
        };
        let line = |done, total, elapsed_s, last| {
            plain_line(
                &sample(done, total, 600),
                Duration::from_secs(elapsed_s),
                last,
            )
            .unwrap_or_default()
        };
        assert_eq!(
            line(700, 1_000, 50, false),
            "50s 70.0% ETA 2m30s simulated 11.7 h"
        );
        assert_eq!(line(600, 1_000, 5, false), "5s 60.0% simulated 11.7 h");
        assert_eq!(
            line(1_000, 1_000, 200, true),
            "3m20s 100.0% simulated 11.7 h"
        );
        assert_eq!(line(700, 0, 50, false), "50s simulated 11.7 h");
        // Nothing done by this process: no last line (a line while it works, though).
        assert_eq!(line(600, 1_000, 3, true), "");
        assert_eq!(line(600, 1_000, 3, false), "3s 60.0% simulated 11.7 h");
        // A 30-day month at 1,600x from the start: 27 simulated days left of 30.
        assert_eq!(
            plain_line(&sample(4_320, 43_200, 0), Duration::from_secs(162), false).unwrap(),
            "2m42s 10.0% ETA 24m18s simulated 11.7 h"
        );
    }

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
                done_before: 0,
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
