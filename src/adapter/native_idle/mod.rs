//! The kit's native idle path: a harness that can start a turn by itself
//! (its own queue, its own prompt call) is served through it, with no
//! byte typed into its terminal.
//!
//! A *reporter* runs inside the harness's process tree (a provider's
//! launcher, or a plugin the harness loads): it watches the conversation
//! the person's terminal shows and tells the adapter, in one parked hook
//! call (`queue`), whether that conversation is idle and which of DING's
//! deliveries still wait in it. The adapter parks the call (the kit's
//! [`HookAction::Park`](crate::adapter::HookAction::Park)) while nothing
//! is owed; once unread work is pending and the screen reads fresh idle,
//! the claim is answered with a delivery (an id and exactly its text),
//! which the reporter hands to the harness. The turn's prompt hook then
//! carries that text back: the receipt.
//!
//! * `wire`: what a reporter and its adapter say to each other.
//! * `deliveries`: the deliveries handed to a reporter whose turn has not
//!   started, and the files owed when one could not be handed on.
//! * `path`: whether the native path works, is starting, is down or cannot
//!   work here, and what that means for the terminal path and for people.
//! * `plan`: the parked call's plan, and which hooks end it.
//! * `report`: what the adapter does with the reporter's calls and the
//!   answers it renders for them, around the provider's own plan.

pub mod deliveries;
pub mod path;
pub mod plan;
pub mod report;
pub mod wire;
