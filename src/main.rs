//! `cellsim`: replay Google Cluster Data 2011 traces through a simulated cell.
//!
//! This file only parses arguments and dispatches to the library crates; see `cli.rs` for the
//! commands and `commands.rs` for how each is run. Exit codes: 0 success, 1 error (printed with
//! its cause chain, each cause once), 2 bad command-line usage (from clap), 75 stopped by a
//! signal after a snapshot (`cellsim resume` continues; `engine::snapshot::EXIT_SNAPSHOTTED`).

mod allocator;
mod cli;
mod commands;
mod console;
mod progress;
mod run_cmd;
mod run_lock;
mod run_log;
mod status;

fn main() {
    allocator::tune();
    engine::set_build(env!("CELLSIM_BUILD"));
    let args = <cli::Cli as clap::Parser>::parse();
    if let Err(e) = commands::run(args) {
        console::print_error(&e);
        std::process::exit(1);
    }
}
