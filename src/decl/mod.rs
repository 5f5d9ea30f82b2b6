//! Agent declarations: KDL v2 files that say what to run and how DING
//! delivers to it, lowered into typed [`AgentSpec`]s.
//!
//! The pipeline has the low/high split of ripgrep's flags:
//!
//! 1. `source`: bytes to UTF-8 text, with the size limit and positions;
//! 2. `syntax`: text to a KDL document (`prescan` bounds nesting first);
//! 3. `raw`: the document to a raw spec with spans, shape checks only;
//! 4. `lower`: the raw spec to `AgentSpec`, with defaults, paths and the
//!    cross-field rules;
//! 5. `fingerprint` and `expand`: what the runtime does with a spec later;
//!    `preflight`: what a spec needs from this machine (variables,
//!    programs, the working directory).
//!
//! Every stage adds [`Diagnostic`]s and keeps going, so one run reports
//! every problem as `file:line:col: error: ...` plus hints. This room reads
//! files and the working directory; it never spawns, watches or restarts
//! anything. `docs/declaration.md` is the user-facing reference.

mod check;
mod diagnostic;
mod duration;
mod expand;
mod fingerprint;
mod limits;
mod lower;
mod preflight;
mod prescan;
mod raw;
mod source;
mod spec;
mod suggest;
mod syntax;
mod tunable;
pub(crate) mod write;

pub use check::{Checked, InvalidDeclaration, check_bytes, check_file, load_file};
pub use diagnostic::{Diagnostic, Severity, Span};
pub use duration::{format_duration, parse_duration};
pub use expand::{EXPANDED_VARIABLES, ExpandError, expand_argv, expand_argv_from_env};
pub use fingerprint::{
    FINGERPRINT_VERSION, FieldDrift, FingerprintInput, Fingerprinted, LaunchInput, drift,
    env_digest, render_argv,
};
pub use limits::MAX_DECLARATION_BYTES;
pub use lower::{MAX_AGENT_NAME_BYTES, default_inbox, is_valid_agent_name, is_valid_env_name};
pub use preflight::{Concerns, Problem, find_program, preflight};
pub use prescan::MAX_NESTING_DEPTH;
pub use source::{Position, Source};
pub use spec::{AdapterSpec, AgentSpec, DingSpec, TerminalSize};
pub use tunable::{NEVER, NOTICE_MAX_FILES_NAME, TunableKey};
pub use write::{Draft, quote};
