//! `cellsim`: replay Google Cluster Data 2011 traces through a simulated cell.
//!
//! This file only sets the allocator and dispatches to the command library (`lib.rs`; see
//! `cli.rs` for the commands and `commands.rs` for how each is run). Exit codes: 0 success, 1
//! error (printed with its cause chain, each cause once), 2 bad command-line usage (from clap),
//! 3 unfinished under `--strict`, 75 stopped by a signal after a snapshot (`cellsim resume`
//! continues; `engine::snapshot::EXIT_SNAPSHOTTED`).

mod allocator;

use cellsim_cli::{Exit, run_command};

fn main() {
    allocator::tune();
    cellsim_cli::set_build();
    let Err(e) = run_command(std::env::args_os()) else {
        return;
    };
    if let Some(exit) = e.downcast_ref::<Exit>() {
        std::process::exit(exit.code);
    }
    if let Some(usage) = e.downcast_ref::<clap::Error>() {
        usage.exit();
    }
    cellsim_cli::print_error(&e);
    std::process::exit(1);
}
