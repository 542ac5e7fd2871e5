//! `cellsim._cellsim`, the native half of the Python package (`python/cellsim/`): the `cellsim`
//! commands run in this process through the command library (`cellsim_cli`), so a call prints,
//! writes and fails exactly as the command line does.
//!
//! A command runs on its own thread while the calling thread waits with the GIL released,
//! taking it back every [`POLL`] to let Python handle its signals: an exception from that
//! (Ctrl-C's `KeyboardInterrupt`) stops the command as a signal stops the command line (a run
//! finishes its tick and snapshots; `cellsim.resume` continues it), and is raised once the
//! command has ended. The commands install no signal handlers here, and what they print
//! (results, progress lines, notes) goes to Python's `sys.stdout` and `sys.stderr`, which a
//! notebook shows (`cellsim_cli::set_embedded`). A run of a scheduler written in Python gets
//! the object with the command (`policy.rs`).

mod policy;

use std::time::Duration;

use cellsim_cli::Ended;
use crossbeam_channel::{RecvTimeoutError, bounded};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    _cellsim,
    CellsimError,
    PyException,
    "A cellsim command failed; the message is the one the command line prints."
);

/// How often a waiting call lets Python handle its signals.
const POLL: Duration = Duration::from_millis(50);
/// The command thread's stack (the main thread's usual size, where the command line runs).
const STACK_BYTES: usize = 8 << 20;

/// Runs the command `cellsim ARGS...` and returns (exit code, message): (0, "") done, (0,
/// text) for `--help` and `--version`, (3, ...) unfinished under `--strict`, (75, ...) stopped
/// after a snapshot. Raises `CellsimError` with the command line's message for an error (code
/// 1) or bad usage (code 2), and a Python signal's exception after stopping the command. With
/// `policy` (an object with `schedule(tick)`), a run or resume of policy `python` is decided by
/// it, and an exception it raises is raised as itself.
#[pyfunction]
#[pyo3(signature = (args, policy=None))]
fn command(
    py: Python<'_>,
    args: Vec<String>,
    policy: Option<Py<PyAny>>,
) -> PyResult<(i32, String)> {
    let argv: Vec<String> = std::iter::once("cellsim".to_string()).chain(args).collect();
    let (sender, results) = bounded(1);
    let raised = policy::Raised::default();
    let decider = policy.map(|p| Box::new(policy::PyDecider::new(p, raised.clone())));
    let worker = std::thread::Builder::new()
        .name("cellsim".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let command = || cellsim_cli::run_command(argv).map_err(Ended::of);
            let ended = match decider {
                Some(decider) => engine::hosted::with_decider(decider, command),
                None => command(),
            };
            let _ = sender.send(ended);
        })
        .map_err(|e| CellsimError::new_err(format!("starting the command's thread: {e}")))?;
    let mut interrupted: Option<PyErr> = None;
    let ended = loop {
        match py.detach(|| results.recv_timeout(POLL)) {
            Ok(ended) => break ended,
            Err(RecvTimeoutError::Timeout) => {
                show_output(py);
                if interrupted.is_none()
                    && let Err(e) = py.check_signals()
                {
                    cellsim_cli::request_stop();
                    interrupted = Some(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                break Err(Ended {
                    code: 101,
                    message: "the command panicked (its message is on standard error)".into(),
                });
            }
        }
    };
    let _ = py.detach(|| worker.join());
    show_output(py);
    let _ = py
        .import("cellsim._progress")
        .and_then(|m| m.call_method0("end"));
    if let Some(e) = interrupted {
        return Err(e);
    }
    let raised = raised.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let (Err(_), Some(e)) = (&ended, raised) {
        return Err(e);
    }
    match ended {
        Ok(()) => Ok((0, String::new())),
        Err(end) if end.code == 0 || end.code == 3 || end.code == 75 => Ok((end.code, end.message)),
        Err(end) => Err(CellsimError::new_err(end.message)),
    }
}

/// Writes what the commands printed to Python's `sys.stdout` and `sys.stderr` (a notebook
/// shows those, not the process's own streams), progress lines through
/// `cellsim._progress.show` (in a notebook, one line updated in place); a failing write is
/// ignored, as the command line ignores a closed stderr.
fn show_output(py: Python<'_>) {
    let held = cellsim_cli::take_output();
    if held.is_empty() {
        return;
    }
    let (Ok(sys), Ok(progress)) = (py.import("sys"), py.import("cellsim._progress")) else {
        return;
    };
    for (stream, text) in held {
        let _ = match stream {
            cellsim_cli::Stream::Out => sys.getattr("stdout"),
            cellsim_cli::Stream::Err => sys.getattr("stderr"),
            cellsim_cli::Stream::Progress => {
                let _ = progress.call_method1("show", (text,));
                continue;
            }
        }
        .and_then(|file| file.call_method1("write", (text,)));
    }
}

/// The build's identity, as `cellsim --version` and every run's summary give it.
#[pyfunction]
fn build() -> &'static str {
    cellsim_cli::BUILD
}

#[pymodule]
fn _cellsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    cellsim_cli::set_build();
    cellsim_cli::set_embedded();
    m.add("CellsimError", m.py().get_type::<CellsimError>())?;
    m.add_function(wrap_pyfunction!(command, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    Ok(())
}
