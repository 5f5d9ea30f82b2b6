//! The fuzz targets, one file each; each file's doc comment lists its
//! invariants.

pub mod adapter_lines;
pub mod declarations;
pub mod downlink;
pub mod hook_calls;
pub mod kdl_writer;
pub mod launcher_messages;
pub mod names;
pub mod provider_hooks;
pub mod pty_requests;
pub mod status_requests;

use super::target::Target;

pub const ALL: &[&Target] = &[
    &adapter_lines::TARGET,
    &declarations::TARGET,
    &pty_requests::TARGET,
    &status_requests::TARGET,
    &hook_calls::TARGET,
    &downlink::TARGET,
    &names::TARGET,
    &provider_hooks::TARGET,
    &launcher_messages::TARGET,
    &kdl_writer::TARGET,
];
