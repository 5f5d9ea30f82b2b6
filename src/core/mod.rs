//! The harness-neutral DING engine, sans IO.
//!
//! Nothing in this room touches a file, a socket, a process or a clock, and
//! nothing here names a provider or a renderer glyph (a test enforces it).
//! The runtime feeds facts in and carries decisions out.

pub mod adapter;
pub mod backoff;
pub mod config;
pub mod decision;
pub mod downlink;
pub mod encode;
pub mod engine;
pub mod fence;
mod gather;
pub mod hold;
pub mod identity;
pub mod journal;
mod json_reader;
pub mod lease;
pub mod message;
pub mod notice;
pub mod ownership;
pub mod protocol;
pub mod status;
pub mod time;
pub mod transport;
mod typed;
