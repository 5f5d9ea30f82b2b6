//! Shared helpers for the integration tests. Each test crate uses only part
//! of this, so unused items are expected.
#![allow(dead_code)]

pub mod core_driver;
