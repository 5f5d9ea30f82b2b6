//! Evaluating DING on real harnesses, model-free: a scripted model server
//! on loopback, the launch description of a prepared harness, and the A/B
//! evaluation (`make eval`) that drives the product from outside, as a user
//! would, and counts from the model server's log and the PTY host's.
//! The `ding-eval` binary, apart from the `ding` users install: the
//! product (the `ding` library) never names this tree, and only its
//! per-harness folders (`harnesses`) name a harness. The careful arm's
//! adapter and agent compiler are the product's own.
//!
//! * `harnesses`: one folder per harness: its wire format, scratch home
//!   and pane, plugged into the seams defined here.
//! * `http`: a minimal HTTP/1.1 server with server-sent events, loopback
//!   only, one thread per connection.
//! * `script`: the directive grammar (`mock:run N`, `mock:permission PATH`,
//!   `mock:slow N`) and the plan that answers each kind of request.
//! * `model_server`: the [`model_server::WireFormat`] seam, turn counting,
//!   fresh ids, the JSON-lines request log, and the server process.
//! * `launch`: what a harness room needs to prepare a harness and what it
//!   answers (argv, environment, cwd), printable as JSON or a declaration.
//!
//! The A/B evaluation:
//!
//! * `row`, `arm`: the matrix rows and the two arms (and the seam through
//!   which a harness sets up the careful arm).
//! * `pane`: the seam through which a harness says how its screen reads.
//! * `rng`: the seeded chance behind every random moment.
//! * `typist`: a person typing, one keystroke at a time.
//! * `sender`: messages arriving by `ding send`.
//! * `trial`: one trial's processes, waits and teardown.
//! * `scenario`: each row's workload.
//! * `logs`, `evidence`: the logs read as records, and the metrics.
//! * `processes`: finding and ending a trial's processes by pid.
//! * `fewest_calls`: the fewest model calls a person who knew every
//!   arrival would need (the simulation's cost oracle compiles it too).
//! * `report`, `run`: the whole matrix and its report.
//!
//! The user documentation is `docs/providers/model-servers.md` (servers,
//! homes) and `docs/evaluation.md` (the method and the latest table).

mod arm;
mod cell;
mod cli;
mod confidence;
mod evidence;
mod fewest_calls;
mod harnesses;
mod home_files;
mod http;
mod launch;
mod logs;
mod model_server;
mod pane;
mod processes;
mod report;
mod rng;
mod row;
mod run;
mod scenario;
mod script;
mod sender;
mod trial;
mod trial_command;
mod typist;
mod unix_time;
mod verdict;

fn main() -> std::process::ExitCode {
    cli::main()
}
