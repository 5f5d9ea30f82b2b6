//! Groundwork for evaluating DING on real harnesses, model-free: a scripted
//! model server on loopback and the launch description of a prepared
//! harness. Provider-neutral: the wire formats and the harness homes live
//! in `providers`, which plugs into the seams defined here.
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
//! The user documentation, with the directive grammar and the log format,
//! is `docs/providers/model-servers.md`.

pub mod http;
pub mod launch;
pub mod model_server;
pub mod script;
