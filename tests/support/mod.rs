//! Shared helpers for the integration tests. Each test crate uses only part
//! of this, so unused items are expected.
#![allow(dead_code)]

pub mod core_driver;
pub mod doc_blocks;
pub mod fixture_files;
pub mod flood;
pub mod provider_fixtures;
mod pty_host;
pub mod quiet;
pub mod real_pane;
pub mod rng;
pub mod sidecar_agent;

#[allow(unused_imports)]
pub use pty_host::*;
