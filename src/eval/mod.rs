//! Evaluating DING on real harnesses, model-free: a scripted model server
//! on loopback, the launch description of a prepared harness, and the A/B
//! evaluation (`make eval`) that drives the product from outside, as a user
//! would, and counts from the model server's log and the PTY host's.
//! Provider-neutral: the wire formats, the harness homes, the screens and
//! the careful arm's setup live in `providers`, which plugs into the seams
//! defined here.
//!
//! * `http`: a minimal HTTP/1.1 server with server-sent events, loopback
//!   only, one thread per connection.
//! * `script`: the directive grammar (`mock:run N`, `mock:permission PATH`,
//!   `mock:slow N`) and the plan that answers each kind of request.
//! * `model_server`: the [`model_server::WireFormat`] seam, turn counting,
//!   fresh ids, the JSON-lines request log, and the server process.
//! * `launch`: what a provider room needs to prepare a harness and what it
//!   answers (argv, environment, cwd), printable as JSON or a declaration.
//!
//! The A/B evaluation:
//!
//! * `row`, `arm`: the matrix rows and the two arms (and the seam through
//!   which a provider sets up the careful arm).
//! * `pane`: the seam through which a provider says how its screen reads.
//! * `rng`: the seeded chance behind every random moment.
//! * `typist`: a person typing, one keystroke at a time.
//! * `sender`: messages arriving by `ding send`.
//! * `trial`: one trial's processes, waits and teardown.
//! * `scenario`: each row's workload.
//! * `logs`, `evidence`: the logs read as records, and the metrics.
//! * `processes`: finding and ending a trial's processes by pid.
//! * `report`, `run`: the whole matrix and its report.
//!
//! The user documentation is `docs/providers/model-servers.md` (servers,
//! homes) and `docs/evaluation.md` (the method and the latest table).

pub mod arm;
pub mod cell;
pub mod cli;
pub mod confidence;
pub mod evidence;
pub mod home_files;
pub mod http;
pub mod launch;
pub mod logs;
pub mod model_server;
pub mod pane;
pub mod processes;
pub mod report;
pub mod rng;
pub mod row;
pub mod run;
pub mod scenario;
pub mod script;
pub mod sender;
pub mod trial;
pub mod trial_command;
pub mod typist;
pub mod verdict;

/// The wall clock in Unix milliseconds: the model server stamps its log
/// with it, and the evaluation compares against it.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
