//! The neutral adapter kit: everything a DING provider adapter needs that is
//! not about one provider.
//!
//! A provider is data plus pure functions ([`Provider`]): it reads a screen
//! snapshot, and it answers hook calls, each with the time as an input.
//! Every decision that is not about one provider is the adapter machine's
//! (`machine`): sans-IO like the core engine, driven by the kit's process
//! shell (`kit`) in an adapter and by the whole-agent simulation in tests.
//! What they share:
//!
//! * the **uplink** (`uplink`): protocol v1 lines on stdout, with the
//!   identity the sidecar fences on and a strictly increasing sequence,
//!   written by the typed encoder ([`crate::core::encode`]);
//! * the **downlink** (stdin): the terminal identity, the demand signal and
//!   claim answers ([`crate::core::downlink`]);
//! * the **hook channel** (`hook_wire`, served on `DING_HOOK_SOCKET`): hooks
//!   running inside the harness (`ding hook PROVIDER EVENT`) reach the
//!   adapter, and a hook that is about to inject files claims them first;
//! * the **PTY view** (`pty_watch`): a `watch` stream and snapshots stamped
//!   with their revision, opened only while evidence is wanted;
//! * **parked calls** (`parked`): a hook call the provider holds open, at
//!   most one per provider-named slot, answered when evidence becomes
//!   wanted (claim first), or with nothing at its deadline, below the
//!   hook's own timeout: how a harness that wakes on a background hook's
//!   answer gets idle work with no terminal input;
//! * the **context text** (`context`): the bounded, sanitized words a hook
//!   puts into the model's next context, naming exact files;
//! * the **screen** pieces (`screen`): the kinds of screen a grammar tells
//!   apart and their reading, and which styled run covers a cell;
//! * the **harness environment** (`harness_env`): the variables a harness
//!   will run in, as `ding check --adapters` and `ding compile-agent` can
//!   know them, for a provider to judge whether its harness will draw a
//!   screen it reads;
//! * every timing of the room, with its orderings tested (`timing`);
//! * the process shell (`kit`): one mio loop with no busy polling and no
//!   policy; with nothing wanted and no hook running it sleeps in `poll`
//!   with no timeout at all.
//!
//! Nothing here names a provider; the neutrality test covers this room.

pub mod adapter_args;
#[cfg(test)]
pub(crate) mod captures;
pub mod clock;
pub mod compile;
pub mod context;
pub mod find_program;
pub mod harness_env;
pub mod heard_hooks;
pub mod hook_activity;
pub mod hook_config;
pub mod hook_plan;
pub mod hook_wire;
mod incarnation;
pub mod kit;
pub mod machine;
pub mod native_idle;
mod parked;
mod provider;
mod pty_watch;
mod reading;
pub mod relay;
pub mod screen;
mod settings_check;
pub mod settings_compile;
pub mod settings_hooks;
pub mod timing;
pub mod turn_hooks;
pub mod uplink;

pub use harness_env::HarnessEnv;
pub use hook_plan::{
    AgentContext, ClaimRequest, HookAction, HookPlan, HookReading, Park, ParkEnded,
};
pub use hook_wire::{HookAnswer, HookCall, ParkAnswer};
pub use incarnation::{Incarnation, identity_from_env};
pub use provider::Provider;
pub use reading::Reading;
pub use settings_check::SettingsRead;
