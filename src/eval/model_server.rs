//! The scripted loopback model server: one wire format, one request log,
//! one conversation's turn count.
//!
//! For every request the [`WireFormat`] reads what the harness sent (which
//! kind of request, the latest prompt, every text the model would see, the
//! harness's own turn id if it sends one); the server numbers the turn,
//! picks the [`Plan`] from the directive grammar (`script`), lets the wire
//! format render it with fresh ids, appends one JSON line to the log, and
//! only then writes the reply, so the log shows a request before any of its
//! (possibly slow) answer.
//!
//! Turns: a request that carries the harness's own turn id starts a turn
//! when that id is new. Without one, a `prompt` request starts a turn and
//! every other model call belongs to the current one. Titles, compactions,
//! token counts and side requests are logged with the current turn but are
//! not model calls of it. One server serves one harness session: two sessions on one
//! server would share the count.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::http::{self, Handler, Request, Response};
use super::script::{self, Class, Directive, Plan, ToolCall};
use crate::unix_time::unix_ms;

/// What a wire format read from one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub class: Class,
    /// The latest prompt the human (or the harness for them) submitted,
    /// which the directive is read from; `None` when the request has none.
    pub prompt: Option<String>,
    /// Every message text the model would see, in order, with its role
    /// (`system`, `developer`, `user`, `assistant`, `tool`), including
    /// hook-injected context. Tool definitions are not texts.
    pub texts: Vec<RoleText>,
    /// The harness's own id of the turn this request belongs to, if any.
    pub turn_key: Option<String>,
    /// The harness's handle for a command that the latest tool result says
    /// is still running.
    pub still_running: Option<String>,
}

impl Reading {
    /// A request of `class` read from its body (none reads as `null`) by
    /// its format's own readers: the latest prompt (of a turn's call only)
    /// and every text. No turn key and no command still running.
    pub fn from_body(
        class: Class,
        body: Option<&Value>,
        latest_prompt: impl Fn(&Value) -> Option<String>,
        texts: impl Fn(&Value) -> Vec<RoleText>,
    ) -> Reading {
        let body = body.unwrap_or(&Value::Null);
        Reading {
            class,
            prompt: class.is_turn_call().then(|| latest_prompt(body)).flatten(),
            texts: texts(body),
            turn_key: None,
            still_running: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleText {
    pub role: String,
    pub text: String,
}

impl RoleText {
    pub fn new(role: &str, text: &str) -> RoleText {
        RoleText {
            role: role.to_string(),
            text: text.to_string(),
        }
    }
}

/// The human's words among a message's `texts`: every text that is not
/// harness context, joined by newlines; `None` when nothing is left.
pub fn prompt_text<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let words: Vec<&str> = texts
        .into_iter()
        .filter(|text| !is_harness_context(text))
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .collect();
    (!words.is_empty()).then(|| words.join("\n"))
}

/// Whether `text` is context a harness wrapped in one tagged element
/// (`<system-reminder>...</system-reminder>`, `<environment_context>...`)
/// rather than words someone typed.
pub fn is_harness_context(text: &str) -> bool {
    let text = text.trim();
    text.starts_with('<') && text.ends_with('>')
}

/// How many pieces a slow reply sends per second.
const SLOW_PIECES_PER_SECOND: u32 = 4;

/// `text` cut into pieces sent one per pause, so that together they take
/// `seconds`: the words first, then dots for the time that is left.
pub fn slow_pieces(text: &str, seconds: u32) -> (Vec<String>, Duration) {
    let count = (seconds.max(1) * SLOW_PIECES_PER_SECOND) as usize;
    let mut pieces: Vec<String> = text.split_inclusive(' ').map(str::to_string).collect();
    if pieces.len() > count {
        let rest = pieces.split_off(count - 1).concat();
        pieces.push(rest);
    }
    while pieces.len() < count {
        pieces.push(".".into());
    }
    (
        pieces,
        Duration::from_millis(1000 / u64::from(SLOW_PIECES_PER_SECOND)),
    )
}

/// A reply, rendered but not yet written.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A complete JSON body (status 200).
    Json(Value),
    /// A server-sent event stream.
    Events(Vec<Event>),
    /// `404`, with a short JSON error.
    NotFound,
}

/// One server-sent event, written `after` the previous one.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub after: Duration,
    pub name: String,
    pub data: Value,
}

impl Event {
    /// An event sent right after the previous one; its name is `data.type`.
    pub fn now(data: Value) -> Event {
        Event::after(Duration::ZERO, data)
    }

    /// An event with no name: only its `data` line is sent (a client
    /// library that reads `data:` lines alone stalls on an `event:` line).
    pub fn unnamed(after: Duration, data: Value) -> Event {
        Event {
            after,
            name: String::new(),
            data,
        }
    }

    pub fn after(after: Duration, data: Value) -> Event {
        let name = data["type"].as_str().unwrap_or("message").to_string();
        Event { after, name, data }
    }
}

/// One harness's request and reply grammar. Pure: no I/O, no clock.
pub trait WireFormat: Send + Sync + 'static {
    /// Classifies `request`; `body` is its JSON body when it has one.
    fn read(&self, request: &Request, body: Option<&Value>) -> Reading;

    /// Whether the harness offered, in this request, the tool that `call`
    /// needs. A plan for a tool it did not offer becomes a text reply
    /// saying so, before it is logged.
    fn offers(&self, body: &Value, call: &ToolCall) -> bool;

    /// Renders `plan` as this format's reply, taking every message and tool
    /// call id from `ids`. A `Plan::Tool` reaches it only when `offers` said
    /// yes.
    fn render(&self, request: &Request, body: Option<&Value>, plan: &Plan, ids: &Ids) -> Reply;
}

/// Fresh ids: a per-server nonce and a counter, so no two messages or tool
/// calls ever share an id, also across server restarts.
pub struct Ids {
    nonce: String,
    counter: AtomicU64,
    issued: Mutex<Vec<String>>,
}

impl Ids {
    pub fn new(nonce: &str) -> Ids {
        Ids {
            nonce: nonce.to_string(),
            counter: AtomicU64::new(0),
            issued: Mutex::new(Vec::new()),
        }
    }

    /// A new id `PREFIX_NONCE_N`.
    pub fn fresh(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("{prefix}_{}{n:06}", self.nonce);
        self.issued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(id.clone());
        id
    }

    /// The ids issued since the last call.
    fn take_issued(&self) -> Vec<String> {
        std::mem::take(&mut *self.issued.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Where a request falls in the conversation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// 1-based request number on this server.
    pub seq: u64,
    /// The current turn (0 before the first).
    pub turn: u64,
    /// This request's number among the turn's model calls; `None` for a
    /// request that is not a model call of the turn.
    pub call_in_turn: Option<u64>,
}

/// The conversation's turn count.
#[derive(Debug, Default)]
pub struct Turns {
    seq: u64,
    turn: u64,
    calls: u64,
    key: Option<String>,
}

impl Turns {
    pub fn place(&mut self, reading: &Reading) -> Placement {
        self.seq += 1;
        if reading.class.is_turn_call() {
            let new_turn = match &reading.turn_key {
                Some(key) => self.key.as_ref() != Some(key),
                None => reading.class == Class::Prompt,
            };
            if new_turn || self.turn == 0 {
                self.turn += 1;
                self.calls = 0;
            }
            if reading.turn_key.is_some() {
                self.key.clone_from(&reading.turn_key);
            }
            self.calls += 1;
        }
        Placement {
            seq: self.seq,
            turn: self.turn,
            call_in_turn: reading.class.is_turn_call().then_some(self.calls),
        }
    }
}

/// Headers whose values are never logged, besides every `*api-key`.
const SECRET_HEADERS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

/// Whether the value of the header `name` (lowercase) is a credential:
/// one of `SECRET_HEADERS`, or an API key under any vendor's prefix
/// (`x-api-key`, `x-…-api-key`).
fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.contains(&name) || name.ends_with("api-key")
}

/// The server's state behind the HTTP handler.
pub struct ModelServer {
    wire: Box<dyn WireFormat>,
    ids: Ids,
    /// One lock for the turn count and the log, so log lines are in the
    /// order requests were placed.
    state: Mutex<State>,
}

struct State {
    turns: Turns,
    log: File,
}

impl ModelServer {
    /// A server for `wire` that appends its request log to `log`.
    pub fn new(wire: Box<dyn WireFormat>, log: &Path) -> Result<ModelServer> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("open the request log {}", log.display()))?;
        let nonce = format!("{:x}{:x}", unix_ms(), std::process::id());
        Ok(ModelServer {
            wire,
            ids: Ids::new(&nonce),
            state: Mutex::new(State {
                turns: Turns::default(),
                log: file,
            }),
        })
    }

    /// Reads, places, plans and renders one request, and logs it, all under
    /// one lock: log lines and ids follow the order of the requests.
    pub fn answer(&self, request: &Request) -> Reply {
        let body: Option<Value> = serde_json::from_slice(&request.body).ok();
        let reading = self.wire.read(request, body.as_ref());
        let directive = reading
            .prompt
            .as_deref()
            .map(script::directive)
            .unwrap_or(Directive::Text);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let placement = state.turns.place(&reading);
        let plan = script::plan(
            reading.class,
            &directive,
            placement.turn,
            reading.still_running.as_deref(),
        );
        let plan = match plan {
            // A request with no body offers no tool.
            Plan::Tool(call)
                if !body
                    .as_ref()
                    .is_some_and(|body| self.wire.offers(body, &call)) =>
            {
                Plan::Text(format!("mock: the harness offers no {} tool.", call.what()))
            }
            plan => plan,
        };
        let reply = self.wire.render(request, body.as_ref(), &plan, &self.ids);
        let ids = self.ids.take_issued();
        let line = log_line(request, body, &reading, &directive, &plan, placement, &ids);
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        // One write per line on an O_APPEND file: a reader never sees half.
        // A lost line would make a request invisible to the evaluation, so
        // it is said loudly (the reply still goes out: the harness is not
        // what failed).
        if let Err(err) = state.log.write_all(&bytes) {
            eprintln!(
                "ding-eval model-server: request {} not logged: {err}",
                placement.seq
            );
        }
        drop(state);
        reply
    }
}

impl Handler for ModelServer {
    fn handle(&self, request: &Request, response: Response<'_>) -> io::Result<()> {
        match self.answer(request) {
            Reply::Json(value) => {
                response.body(200, "application/json", value.to_string().as_bytes())
            }
            Reply::NotFound => response.body(
                404,
                "application/json",
                br#"{"error":{"type":"not_found","message":"the mock model does not serve this"}}"#,
            ),
            Reply::Events(events) => {
                let mut stream = response.events()?;
                for event in events {
                    if !event.after.is_zero() {
                        thread::sleep(event.after);
                    }
                    stream.send(&event.name, &event.data.to_string())?;
                }
                stream.finish()
            }
        }
    }
}

/// One request's log line (see docs/providers/model-servers.md).
fn log_line(
    request: &Request,
    body: Option<Value>,
    reading: &Reading,
    directive: &Directive,
    plan: &Plan,
    placement: Placement,
    ids: &[String],
) -> Value {
    let headers: Map<String, Value> = request
        .headers
        .iter()
        .map(|(name, value)| {
            let shown = if is_secret_header(name) {
                "(redacted)".to_string()
            } else {
                value.clone()
            };
            (name.clone(), Value::String(shown))
        })
        .collect();
    let body = body.unwrap_or_else(|| Value::String(String::from_utf8_lossy(&request.body).into()));
    json!({
        "t": unix_ms(),
        "seq": placement.seq,
        "method": request.method,
        "path": request.path(),
        "query": request.query(),
        "class": reading.class.as_str(),
        "turn": placement.turn,
        "callInTurn": placement.call_in_turn,
        "turnKey": reading.turn_key,
        "prompt": reading.prompt,
        "directive": reading.prompt.as_ref().map(|_| directive.to_string()),
        "reply": plan_summary(plan),
        "ids": ids,
        "texts": reading.texts.iter().map(|t| json!({"role": t.role, "text": t.text})).collect::<Vec<_>>(),
        "headers": headers,
        "body": body,
    })
}

fn plan_summary(plan: &Plan) -> Value {
    match plan {
        Plan::Text(text) => json!({"kind": "text", "text": text}),
        Plan::Slow { text, seconds } => json!({"kind": "slow", "text": text, "seconds": seconds}),
        Plan::Command(command) => json!({
            "kind": "command",
            "command": command.line,
            "needsPermission": command.needs_permission,
        }),
        Plan::Tool(call) => json!({"kind": "tool", "tool": call.what()}),
        Plan::Wait(handle) => json!({"kind": "wait", "handle": handle}),
        Plan::Title(title) => json!({"kind": "title", "text": title}),
        Plan::Summary(summary) => json!({"kind": "summary", "text": summary}),
        Plan::Tokens(tokens) => json!({"kind": "tokens", "tokens": tokens}),
        Plan::NotFound => json!({"kind": "not-found"}),
    }
}

/// How to run a server process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// 0 picks a free port.
    pub port: u16,
    pub log: PathBuf,
    /// Where to write the port once the server listens (tmp + rename, so a
    /// reader sees the whole number or no file).
    pub port_file: Option<PathBuf>,
}

/// Binds loopback, writes the port file, and serves until killed.
pub fn run(wire: Box<dyn WireFormat>, options: &Options) -> Result<()> {
    let server = ModelServer::new(wire, &options.log)?;
    let listener = http::bind_loopback(options.port)?;
    let port = listener.local_addr().context("local address")?.port();
    if let Some(path) = &options.port_file {
        write_port_file(path, port)?;
    }
    http::serve(listener, Arc::new(server))
}

fn write_port_file(path: &Path, port: u16) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, format!("{port}\n")).with_context(|| format!("write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("rename into {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_under_any_api_key_header() {
        for secret in ["authorization", "x-api-key", "x-vendor-api-key", "cookie"] {
            assert!(is_secret_header(secret), "{secret}");
        }
        for shown in ["content-type", "user-agent", "x-api-client", "api-version"] {
            assert!(!is_secret_header(shown), "{shown}");
        }
    }

    fn reading(class: Class, key: Option<&str>) -> Reading {
        Reading {
            class,
            prompt: None,
            texts: Vec::new(),
            turn_key: key.map(str::to_string),
            still_running: None,
        }
    }

    #[test]
    fn without_turn_ids_a_prompt_starts_a_turn_and_tool_results_continue_it() {
        let mut turns = Turns::default();
        let places: Vec<(u64, Option<u64>)> = [
            Class::Prompt,
            Class::Title,
            Class::ToolResult,
            Class::CountTokens,
            Class::ToolResult,
            Class::Prompt,
        ]
        .into_iter()
        .map(|class| {
            let place = turns.place(&reading(class, None));
            (place.turn, place.call_in_turn)
        })
        .collect();
        assert_eq!(
            places,
            [
                (1, Some(1)),
                (1, None),
                (1, Some(2)),
                (1, None),
                (1, Some(3)),
                (2, Some(1))
            ]
        );
    }

    #[test]
    fn a_harness_turn_id_decides_even_for_a_prompt_that_rides_a_turn() {
        let mut turns = Turns::default();
        let a1 = turns.place(&reading(Class::Prompt, Some("a")));
        let a2 = turns.place(&reading(Class::Prompt, Some("a")));
        let b1 = turns.place(&reading(Class::ToolResult, Some("b")));
        assert_eq!((a1.turn, a1.call_in_turn), (1, Some(1)));
        assert_eq!((a2.turn, a2.call_in_turn), (1, Some(2)));
        assert_eq!((b1.turn, b1.call_in_turn), (2, Some(1)));
        assert_eq!(b1.seq, 3);
    }

    #[test]
    fn harness_context_is_not_the_prompt() {
        assert_eq!(
            prompt_text(["<system-reminder>\nx\n</system-reminder>\n", " hi ", ""]),
            Some("hi".into())
        );
        assert_eq!(
            prompt_text(["<environment_context>a</environment_context>"]),
            None
        );
        assert_eq!(prompt_text(["a", "b"]), Some("a\nb".into()));
    }

    #[test]
    fn slow_pieces_fill_the_seconds_and_keep_every_word() {
        let (pieces, pace) = slow_pieces("one two three", 1);
        assert_eq!(pieces, ["one ", "two ", "three", "."]);
        assert_eq!(pace * pieces.len() as u32, Duration::from_secs(1));
        let long = "w ".repeat(50);
        let (pieces, _) = slow_pieces(&long, 2);
        assert_eq!(pieces.len(), 8);
        assert_eq!(pieces.concat(), long);
    }

    #[test]
    fn ids_are_fresh_and_carry_the_nonce() {
        let ids = Ids::new("n1");
        let a = ids.fresh("msg");
        let b = ids.fresh("msg");
        assert_ne!(a, b);
        assert!(a.starts_with("msg_n1"), "{a}");
        assert_eq!(ids.take_issued(), vec![a, b]);
        assert!(ids.take_issued().is_empty());
    }
}
