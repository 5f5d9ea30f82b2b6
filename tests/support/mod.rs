//! Shared helpers for the integration tests. Each test crate uses only part
//! of this, so unused items are expected.
#![allow(dead_code)]

pub mod core_driver;
pub mod doc_blocks;
pub mod fixture_files;
pub mod flood;
/// The evaluation's own process finder, the same file (`ding-eval` is a
/// binary the tests run, not a library they import).
#[path = "../../src/eval/processes.rs"]
pub mod processes;
pub mod provider_fixtures;
mod pty_host;
pub mod quiet;
pub mod real_pane;
pub mod rng;
pub mod sidecar_agent;

#[allow(unused_imports)]
pub use pty_host::*;
