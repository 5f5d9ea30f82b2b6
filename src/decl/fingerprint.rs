//! Launch fingerprints and drift: what a running process was started from,
//! as a comparable value.
//!
//! A fingerprint is `sha256:<hex>` over the canonical JSON of an input
//! struct (keys sorted, values normalised: durations in milliseconds,
//! absolute normalised paths, literal argv with `$ST_HOOKS` unexpanded).
//! Because it is computed from the lowered spec and not from the text,
//! whitespace, comments, node order and equivalent spellings (`"5s"` and
//! `"5000ms"`, `inbox "./x"` and `inbox "x"`) never change it, and any edit
//! that changes behaviour does.
//!
//! Two inputs exist: [`FingerprintInput`] for the DING sidecar (policy,
//! adapter argv, tunables, name, inbox) and [`LaunchInput`] for the PTY
//! host's launch of the harness (argv, cwd, the names of the declared
//! environment variables and a digest of their values, the terminal size).
//! The runtime gives each process the input it was started from, asks for
//! it back later and calls [`drift`] to say exactly which fields changed;
//! restarting is never decided here. Keys are camelCase, like every JSON
//! DING prints; the names of version 1 are still read.
//!
//! Environment values never appear in a launch input: they may be secrets,
//! and the input is printed by `ding status` and passed on command lines.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::duration::format_duration;
use super::spec::AgentSpec;
use super::tunable::{NEVER, NOTICE_MAX_FILES_NAME, UNSAFE_RECEIPT_FENCE_NAME};
use crate::core::config::{
    ADAPTER_SILENCE, Fence, GATHER_CAP, GATHER_QUIET, LEASE_CAP, QUIET_INPUT, RE_RING_AFTER,
    SETTLED_OUTPUT, SUBMIT_DELAY,
};

/// Bumped whenever the canonical form changes, so that a stored input from
/// an older ding reports drift in `version` instead of a confusing field.
pub const FINGERPRINT_VERSION: u32 = 4;

/// Everything the sidecar's behaviour depends on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FingerprintInput {
    pub version: u32,
    pub agent: String,
    pub inbox: String,
    /// The policy token.
    pub delivery: String,
    /// Literal argv; `None` for policies without an adapter.
    #[serde(alias = "adapter_command")]
    pub adapter_command: Option<Vec<String>>,
    #[serde(alias = "lease_cap_ms")]
    pub lease_cap_ms: u64,
    #[serde(alias = "adapter_silence_ms")]
    pub adapter_silence_ms: u64,
    /// `None` is `"never"`.
    #[serde(alias = "re_ring_after_ms")]
    pub re_ring_after_ms: Option<u64>,
    #[serde(alias = "submit_delay_ms")]
    pub submit_delay_ms: u64,
    #[serde(alias = "notice_max_files")]
    pub notice_max_files: u64,
    /// Left out when false, so fingerprints from before the flag existed
    /// stay the same.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        alias = "unsafe_receipt_fence"
    )]
    pub unsafe_receipt_fence: bool,
    /// The time fence. Absent in inputs stored before it existed: they
    /// read back as `None`, which is drift, because the sidecar they
    /// describe sent without one.
    #[serde(default)]
    pub quiet_input_ms: Option<u64>,
    #[serde(default)]
    pub settled_output_ms: Option<u64>,
    /// The gather window, absent (drift) in inputs stored before it.
    #[serde(default)]
    pub gather_quiet_ms: Option<u64>,
    #[serde(default)]
    pub gather_cap_ms: Option<u64>,
}

/// A duration an older input may lack: `none` then, which is drift.
fn optional_millis(millis: Option<u64>) -> String {
    millis.map_or_else(|| "none".to_string(), millis_literal)
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

/// Everything the harness launch depends on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchInput {
    pub version: u32,
    pub agent: String,
    /// Literal argv; `None` when the declaration names no `command`.
    pub command: Option<Vec<String>>,
    pub cwd: String,
    /// The names of the declared environment variables, sorted.
    pub env: Vec<String>,
    /// `sha256:<hex>` of the declared names and values, so that a changed
    /// value is drift while no value is ever shown or stored.
    pub env_digest: String,
    /// The terminal size at launch, `COLSxROWS`.
    pub size: String,
}

/// One field that differs between two fingerprint inputs, named and
/// rendered the way the declaration writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDrift {
    /// A declaration path such as `ding.delivery` or `ding.adapter.command`.
    pub field: String,
    pub old: String,
    pub new: String,
}

impl fmt::Display for FieldDrift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} -> {}", self.field, self.old, self.new)
    }
}

/// A fingerprint input: canonical JSON, its hash, and its fields for drift.
pub trait Fingerprinted: Serialize {
    /// `(declaration path, value as the declaration would write it)`, in
    /// documentation order, covering every field.
    fn fields(&self) -> Vec<(String, String)>;

    /// The canonical serialisation: compact JSON with sorted keys.
    fn canonical_json(&self) -> String {
        // Going through `Value` sorts the keys (serde_json's map is a
        // BTreeMap), so field order in the struct cannot matter.
        serde_json::to_value(self)
            .map(|value| value.to_string())
            .unwrap_or_default()
    }

    /// `sha256:<hex>` of [`Fingerprinted::canonical_json`].
    fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.canonical_json().as_bytes());
        let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("sha256:{hex}")
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

/// An argv as the declaration writes it: `"prog" "arg"`, or `(none)`.
pub fn render_argv(argv: Option<&[String]>) -> String {
    match argv {
        Some(args) => args
            .iter()
            .map(|arg| quoted(arg))
            .collect::<Vec<_>>()
            .join(" "),
        None => "(none)".to_string(),
    }
}

fn millis_literal(millis: u64) -> String {
    quoted(&format_duration(std::time::Duration::from_millis(millis)))
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Fingerprinted for FingerprintInput {
    fn fields(&self) -> Vec<(String, String)> {
        vec![
            ("version".into(), self.version.to_string()),
            ("agent".into(), quoted(&self.agent)),
            ("inbox".into(), quoted(&self.inbox)),
            ("ding.delivery".into(), quoted(&self.delivery)),
            (
                "ding.adapter.command".into(),
                render_argv(self.adapter_command.as_deref()),
            ),
            (ding_path(LEASE_CAP.name), millis_literal(self.lease_cap_ms)),
            (
                ding_path(ADAPTER_SILENCE.name),
                millis_literal(self.adapter_silence_ms),
            ),
            (
                ding_path(RE_RING_AFTER.name),
                self.re_ring_after_ms
                    .map_or_else(|| quoted(NEVER), millis_literal),
            ),
            (
                ding_path(SUBMIT_DELAY.name),
                millis_literal(self.submit_delay_ms),
            ),
            (
                ding_path(QUIET_INPUT.name),
                optional_millis(self.quiet_input_ms),
            ),
            (
                ding_path(SETTLED_OUTPUT.name),
                optional_millis(self.settled_output_ms),
            ),
            (
                ding_path(GATHER_QUIET.name),
                optional_millis(self.gather_quiet_ms),
            ),
            (
                ding_path(GATHER_CAP.name),
                optional_millis(self.gather_cap_ms),
            ),
            (
                ding_path(NOTICE_MAX_FILES_NAME),
                self.notice_max_files.to_string(),
            ),
            (
                ding_path(UNSAFE_RECEIPT_FENCE_NAME),
                format!("#{}", self.unsafe_receipt_fence),
            ),
        ]
    }
}

impl Fingerprinted for LaunchInput {
    fn fields(&self) -> Vec<(String, String)> {
        // Names as the declaration writes them, values only as a short
        // digest: enough to see that one changed, never what it is.
        let short = self
            .env_digest
            .strip_prefix("sha256:")
            .unwrap_or(&self.env_digest);
        let env = format!(
            "{{ {} }} (values {})",
            self.env.join("; "),
            short.get(..12).unwrap_or(short)
        );
        vec![
            ("version".into(), self.version.to_string()),
            ("agent".into(), quoted(&self.agent)),
            ("command".into(), render_argv(self.command.as_deref())),
            ("cwd".into(), quoted(&self.cwd)),
            ("env".into(), env),
            ("size".into(), quoted(&self.size)),
        ]
    }
}

/// `sha256:<hex>` of the canonical JSON of `env` (names and values).
pub fn env_digest(env: &BTreeMap<String, String>) -> String {
    let canonical = serde_json::to_vec(env).unwrap_or_default();
    let digest = Sha256::digest(&canonical);
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

fn ding_path(name: &str) -> String {
    format!("ding.{name}")
}

/// Exactly the fields in which `new` differs from `old`, in documentation
/// order; empty when they are the same launch.
pub fn drift<T: Fingerprinted>(old: &T, new: &T) -> Vec<FieldDrift> {
    old.fields()
        .into_iter()
        .zip(new.fields())
        .filter(|((_, before), (_, after))| before != after)
        .map(|((field, before), (_, after))| FieldDrift {
            field,
            old: before,
            new: after,
        })
        .collect()
}

impl AgentSpec {
    /// What the DING sidecar for this agent depends on.
    pub fn fingerprint_input(&self) -> FingerprintInput {
        let tunables = &self.ding.tunables;
        FingerprintInput {
            version: FINGERPRINT_VERSION,
            agent: self.name.clone(),
            inbox: self.inbox.to_string_lossy().into_owned(),
            delivery: self.ding.policy.token().to_string(),
            adapter_command: self.adapter_command().map(<[String]>::to_vec),
            lease_cap_ms: millis(tunables.lease_cap),
            adapter_silence_ms: millis(tunables.adapter_silence),
            re_ring_after_ms: tunables.re_ring_after.map(millis),
            submit_delay_ms: millis(tunables.submit_delay),
            notice_max_files: u64::try_from(tunables.notice_max_files).unwrap_or(u64::MAX),
            unsafe_receipt_fence: tunables.fence == Fence::ReceiptUnsafe,
            quiet_input_ms: Some(millis(tunables.quiet_input)),
            settled_output_ms: Some(millis(tunables.settled_output)),
            gather_quiet_ms: Some(millis(tunables.gather_quiet)),
            gather_cap_ms: Some(millis(tunables.gather_cap)),
        }
    }

    /// The sidecar launch fingerprint, `sha256:<hex>`.
    pub fn fingerprint(&self) -> String {
        self.fingerprint_input().fingerprint()
    }

    /// What the harness launch depends on.
    pub fn launch_input(&self) -> LaunchInput {
        LaunchInput {
            version: FINGERPRINT_VERSION,
            agent: self.name.clone(),
            command: self.command.clone(),
            cwd: self.cwd.to_string_lossy().into_owned(),
            env: self.env.keys().cloned().collect(),
            env_digest: env_digest(&self.env),
            size: self.size.to_string(),
        }
    }

    /// The harness launch generation, `sha256:<hex>`.
    pub fn launch_generation(&self) -> String {
        self.launch_input().fingerprint()
    }
}
