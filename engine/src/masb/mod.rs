//! MASB (seed 000): node and broker agents negotiating placements and live migrations.
//!
//! [`policy::Masb`] runs the agents ([`agents`]) with the messages of [`protocol`]. This module
//! holds the policy's parameters ([`MasbConfig`], every constant with the paper's
//! value as default) and its decision functions, each a pure function of plain data so it can be
//! tested on hand-worked cases: [`score`] (SIAS, SRAS and their GAIN variants), [`cost`] (the
//! live-migration cost model of `MIGRATION-COST.md`) and [`scs`] (Select Candidate Services by
//! Tabu Search), and [`select`] (the brokers' candidate choices and the node agents' checks).

pub mod agents;
mod config;
pub mod cost;
pub mod fit;
pub mod migrations;
pub mod policy;
pub mod protocol;
pub mod reports;
pub mod score;
pub mod scs;
pub mod select;

pub use config::{
    GainReading, InitialOrder, MasbConfig, OffloadGoal, ScoreReading, ScoreShape, ScoreUnits,
    SiasNodeLoad, TargetWeighting,
};
