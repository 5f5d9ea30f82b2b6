//! `ding status [NAME] [--json]`: what runs, and why each unread message is
//! where it is.
//!
//! The harness, the PTY host and the sidecar are each probed on their own
//! (`agent_state`), so a dead one is reported as dead beside the others'
//! states. A running sidecar answers from memory through `sidecar.sock`. A
//! stopped one still gets an answer from disk: the inbox is the authority
//! and the journal says which files were rung or hook-owned. Drift is
//! judged for both processes against the declaration: the sidecar's
//! fingerprint input and the launch the PTY host reports. Either way the
//! same JSON document is printed with `--json`, or rendered for people.
//!
//! Exit status: 0 when the sidecar, the PTY host and the harness all run,
//! 3 when any of them does not (the document is printed all the same, as
//! `systemctl status` does), 4 for an agent that never ran here.
//!
//! Filenames, identities and adapter text in the document are not ours, so
//! everything printed goes through the one rule of [`crate::core::escape`]:
//! the JSON with every character that is not plain as `\uXXXX`, the human
//! rendering with raw values escaped as `\u{hex}` and the human lines (which
//! the sidecar escaped already) made displayable. Nothing a hostile name
//! holds reaches the operator's terminal as a control or escape sequence.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};
use serde_json::{Value, json};

use super::agent_decl::load_agent;
use super::agent_state::{AgentState, not_running, state_lines};
use super::exit::Failure;
use super::help_asked;
use crate::core::escape::{displayable, escape};
use crate::core::hold::HoldAdvice;
use crate::core::journal::{Journal, Owner};
use crate::core::status::human_age;
use crate::core::time::Time;
use crate::sidecar::agent_record::{AgentRecord, FILE as AGENT_RECORD};
use crate::sidecar::escaped_json::{to_json, to_json_pretty};
use crate::sidecar::inbox::Inbox;
use crate::sidecar::journal_store::{Found, JournalStore};
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::status_document::UnreadableView;

const HELP: &str = "\
Usage: ding status [NAME] [--json] [--decl AGENT.kdl]

Show an agent's state: its harness (starting, running, restarting, exited
with its code or signal), PTY host and sidecar (running, not answering,
dead, stopped), policy, fingerprint and drift from its declaration (of both
the PTY host's launch and the sidecar), adapter, lease, PTY identity, and
every unread message in FIFO order with its state and, if held, why and
what to do. Without NAME, one line per agent (as `ding ls`).

  --json           print the status document as JSON
  --decl FILE      compare with this declaration (default: the one it runs)
  -h, --help       this help

Exit status: 0 everything runs, 3 something does not (still printed),
4 no agent NAME ever ran here.
";

struct Options {
    name: Option<String>,
    json: bool,
    declaration: Option<PathBuf>,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut options = Options {
        name: None,
        json: false,
        declaration: None,
    };
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("json") => options.json = true,
            Arg::Long("decl") => options.declaration = Some(PathBuf::from(parser.value()?)),
            Arg::Value(value) if options.name.is_none() => options.name = Some(value.string()?),
            other => bail!("{}\nRun `ding status -h` for usage", other.unexpected()),
        }
    }
    Ok(Some(options))
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let env = DirsEnv::from_process();
    let Some(name) = options.name.clone() else {
        return super::ls::list(&env, options.json);
    };
    let paths = AgentPaths::resolve(&name, &env)?;
    let (mut document, state) = agent_status(&name, &paths)?;
    add_drift(
        &mut document,
        &state,
        &paths,
        options.declaration.as_deref(),
    )?;
    if options.json {
        writeln!(std::io::stdout(), "{}", to_json_pretty(&document)?)?;
    } else {
        write!(std::io::stdout(), "{}", render(&document))?;
    }
    Ok(if state.all_running() {
        ExitCode::SUCCESS
    } else {
        Failure::NotRunning.exit_code()
    })
}

/// The document of agent `name`: the live one from a running sidecar, or
/// one built from disk; with the state of each of its processes.
pub fn agent_status(name: &str, paths: &AgentPaths) -> Result<(Value, AgentState)> {
    let state = AgentState::probe(paths);
    let mut document = match &state.sidecar_status {
        Some(document) => document.clone(),
        None => offline_status(name, paths, &state)?,
    };
    state.add_to(&mut document);
    Ok((document, state))
}

/// Status of an agent whose sidecar is not running: the inbox from disk,
/// annotated with the journal's ownership.
fn offline_status(name: &str, paths: &AgentPaths, state: &AgentState) -> Result<Value> {
    let Some(record) = AgentRecord::load(paths.state_dir())? else {
        if state.nothing_running() && !super::down::ever_ran(paths) {
            return Err(Failure::UnknownAgent.because(format!(
                "no agent `{name}` has run here (no {})\nhint: start it with `ding up AGENT.kdl`; `ding ls` lists the agents that have run",
                paths.state_dir().join(AGENT_RECORD).display()
            )));
        }
        // Its PTY host runs (or ran), but no sidecar ever recorded what it
        // delivers: say what can be said.
        return Ok(json!({
            "agent": name,
            "running": false,
            "engine": { "unread": 0, "messages": [] },
            "lines": [],
        }));
    };
    let (journal, journal_warning) = match JournalStore::new(paths.state_dir()).read()? {
        Found::Journal(journal) => (journal, None),
        Found::Missing => (Journal::default(), None),
        Found::Unreadable(reason) => (
            Journal::default(),
            Some(format!(
                "the journal is unreadable ({reason}); every message is listed as pending"
            )),
        ),
    };
    let owners: std::collections::BTreeMap<String, Owner> = journal
        .entries
        .iter()
        .map(|entry| (entry.name.to_string(), entry.owner))
        .collect();
    let scan = Inbox::open(&record.inbox)?.scan_unread()?;
    let messages: Vec<Value> = scan
        .unread
        .iter()
        .map(|name| {
            let state = match owners.get(name.as_str()) {
                Some(Owner::Staged) => "staged",
                Some(Owner::HookOwned) => "hook-owned",
                None => "pending",
            };
            json!({ "name": name, "state": state })
        })
        .collect();
    let lines: Vec<String> = scan
        .unread
        .iter()
        .map(|name| {
            let shown = escape(name.as_str());
            match owners.get(name.as_str()) {
                Some(Owner::Staged) => format!("{shown}  staged (journal), awaiting archive"),
                Some(Owner::HookOwned) => {
                    format!("{shown}  hook-owned (journal), awaiting archive")
                }
                None => format!("{shown}  held: sidecar not running"),
            }
        })
        .collect();
    let unreadable: Vec<UnreadableView> = scan.unreadable.iter().map(UnreadableView::of).collect();
    Ok(json!({
        "agent": name,
        "running": false,
        "policy": record.fingerprint_input.delivery,
        "fingerprint": record.fingerprint,
        "fingerprintInput": record.fingerprint_input,
        "inbox": record.inbox,
        "declaration": record.declaration,
        "journalWarning": journal_warning,
        "unreadable": unreadable,
        "engine": { "unread": messages.len(), "messages": messages },
        "lines": lines,
    }))
}

/// Adds `drift`: the fields in which the declaration differs from what
/// runs, for the sidecar (its fingerprint input) and the harness (the
/// launch its PTY host reports), each `null` when the process does not
/// run or cannot say.
fn add_drift(
    document: &mut Value,
    state: &AgentState,
    paths: &AgentPaths,
    declaration: Option<&std::path::Path>,
) -> Result<()> {
    let declared_path = match declaration {
        Some(path) => path.to_path_buf(),
        None => match recorded_declaration(document, state, paths) {
            Some(path) => path,
            None => return Ok(()),
        },
    };
    let name = document["agent"].as_str().unwrap_or_default().to_string();
    let Ok(spec) = load_agent(&declared_path, Some(&name)) else {
        document["drift"] = json!({ "error": format!("cannot load {}", declared_path.display()) });
        return Ok(());
    };
    let fields = |fields: Option<Vec<crate::decl::FieldDrift>>| -> Value {
        match fields {
            Some(fields) => fields
                .into_iter()
                .map(|f| json!({ "field": f.field, "running": f.old, "declared": f.new }))
                .collect(),
            None => Value::Null,
        }
    };
    let sidecar = state
        .sidecar_status
        .is_some()
        .then(|| super::up::sidecar_drift(state, &spec))
        .map_or(Value::Null, fields);
    let harness = state
        .host
        .is_some()
        .then(|| super::up::harness_drift(state, &spec))
        .map_or(Value::Null, fields);
    document["declaredFingerprint"] = json!(spec.fingerprint());
    document["drift"] = json!({
        "declaration": declared_path,
        "sidecar": sidecar,
        "harness": harness,
    });
    Ok(())
}

/// The declaration the agent runs from: the sidecar's, the PTY host's, or
/// the one its sidecar last recorded. Data from processes and the state
/// directory: only a regular file (or a link to one) is opened, never a
/// FIFO.
fn recorded_declaration(
    document: &Value,
    state: &AgentState,
    paths: &AgentPaths,
) -> Option<PathBuf> {
    let from_sidecar = document["declaration"].as_str().map(PathBuf::from);
    let from_host = state
        .host
        .as_ref()
        .and_then(super::launch::LaunchRecord::from_status)
        .map(|record| record.declaration);
    let from_record = AgentRecord::load(paths.state_dir())
        .ok()
        .flatten()
        .map(|record| record.declaration);
    [from_sidecar, from_host, from_record]
        .into_iter()
        .flatten()
        .find(|path| fs::metadata(path).is_ok_and(|m| m.is_file()))
}

/// A raw string of the document as people see it: escaped by the one rule,
/// `?` when absent.
fn text(value: &Value) -> String {
    value.as_str().map(escape).unwrap_or_else(|| "?".into())
}

/// Any value of the document as people see it: a string escaped, anything
/// else as escaped JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(raw) => escape(raw),
        other => to_json(other).unwrap_or_else(|_| "?".into()),
    }
}

/// A human line the sidecar wrote (already escaped), made displayable in
/// case it was not.
fn line(value: &Value) -> String {
    value
        .as_str()
        .map(displayable)
        .unwrap_or_else(|| "?".into())
}

/// The human rendering of a status document. Every value is escaped by
/// the one rule (see the module documentation).
pub fn render(document: &Value) -> String {
    let mut out = String::new();
    let name = text(&document["agent"]);
    let running = document["running"].as_bool() == Some(true);
    let held = held_codes(document);
    let down = not_running(document);
    let everything_down = down.len() == 3;
    out.push_str(&format!(
        "agent {name}: {}\n",
        if down.is_empty() {
            "running".to_string()
        } else if everything_down {
            "stopped".to_string()
        } else if let Some(silent) = down
            .iter()
            .map(|part| part.strip_suffix(" not-answering"))
            .collect::<Option<Vec<&str>>>()
        {
            // Alive, only silent (starting, hung, or swamped): not the same
            // as a process that is gone.
            format!("NOT ANSWERING: {}", silent.join(", "))
        } else {
            format!("NOT RUNNING: {}", down.join(", "))
        }
    ));
    for state in state_lines(document) {
        out.push_str(&format!("{state}\n"));
    }
    if !running {
        out.push_str("  (the sidecar does not answer: the inbox is listed from disk, with the journal's states)\n");
    }
    if let Some(declaration) = document["declaration"].as_str() {
        out.push_str(&format!("  declaration  {}\n", escape(declaration)));
    }
    out.push_str(&format!(
        "  policy       {}\n  fingerprint  {}\n",
        text(&document["policy"]),
        text(&document["fingerprint"])
    ));
    render_drift(&mut out, &document["drift"]);
    out.push_str(&format!("  inbox        {}\n", text(&document["inbox"])));
    if let Some(warning) = document["journalWarning"].as_str() {
        out.push_str(&format!("  journal      {}\n", escape(warning)));
    }
    if let Some(error) = document["journalWriteError"].as_str() {
        out.push_str(&format!(
            "  journal      NOT SAVED, retrying: {} (a crash now may ring staged messages again)\n",
            escape(error)
        ));
    }
    for (key, whose) in [
        ("logWriteFailure", "sidecar"),
        ("ptyHostLogWriteFailure", "pty host"),
    ] {
        let failure = &document[key];
        if failure.is_object() {
            out.push_str(&format!(
                "  logs         {whose} log writes failing since {}: {} lines lost ({})\n",
                text(&failure["since"]),
                shown(&failure["lostLines"]),
                text(&failure["error"])
            ));
        }
    }
    if running {
        let engine = &document["engine"];
        let now = Time::from_millis(engine["now"].as_u64().unwrap_or(0));
        out.push_str(&format!(
            "  adapter      {}\n",
            render_adapter(&engine["adapter"], document, now)
        ));
        // The adapter's own words (opaque: shown, never interpreted,
        // escaped), for example whether the harness's hooks are in place.
        if let Some(reason) = engine["evidence"]["adapterReason"].as_str() {
            out.push_str(&format!("  adapter says {}\n", escape(reason)));
        }
        let lease = if document["policy"] == "aggressive" {
            "not used by this policy".to_string()
        } else {
            render_lease(
                &engine["lease"],
                held.first().map(|(code, _)| code.as_str()),
            )
        };
        out.push_str(&format!("  lease        {lease}\n"));
        if engine["evidence"]["fence"] == "receipt-unsafe" {
            out.push_str(
                "  fence        UNSAFE: at receipt (unsafe-receipt-fence), not at the adapter's observation\n",
            );
        }
        if document["policy"] != "aggressive" {
            let wanted = engine["evidence"]["wanted"].as_bool() == Some(true);
            out.push_str(&format!(
                "  evidence     {}\n",
                if wanted {
                    "wanted (unread work waits for the terminal)"
                } else {
                    "not wanted (nothing for the terminal to deliver)"
                }
            ));
        }
        out.push_str(&format!(
            "  pty          {}\n",
            render_pty(&engine["pty"], document)
        ));
    }
    let lines = document["lines"].as_array().cloned().unwrap_or_default();
    let held_count = held.iter().map(|(_, count)| count).sum::<usize>();
    out.push_str(&format!(
        "  unread       {}{}\n",
        lines.len(),
        if held_count > 0 {
            format!(" ({held_count} held)")
        } else {
            String::new()
        }
    ));
    for human in &lines {
        out.push_str(&format!("    {}\n", line(human)));
    }
    for (code, _) in &held {
        if let Some(advice) = HoldAdvice::of(code) {
            out.push_str(&format!(
                "  why held     {}: {}\n               what to do: {}\n",
                advice.code, advice.meaning, advice.what_to_do
            ));
        }
    }
    if let Some(Value::Array(unreadable)) = document.get("unreadable")
        && !unreadable.is_empty()
    {
        out.push_str("  unreadable   (in new/ but not deliverable; rename or remove them)\n");
        for entry in unreadable {
            out.push_str(&format!(
                "    {}  {}\n",
                line(&entry["name"]),
                text(&entry["reason"])
            ));
        }
    }
    out
}

/// The hold codes of the held messages, each with how many it holds, in
/// the order they first appear (FIFO).
fn held_codes(document: &Value) -> Vec<(String, usize)> {
    let mut codes: Vec<(String, usize)> = Vec::new();
    let messages = document["engine"]["messages"].as_array();
    for message in messages.into_iter().flatten() {
        let Some(code) = message["hold"]["code"].as_str() else {
            continue;
        };
        match codes.iter_mut().find(|(known, _)| known == code) {
            Some((_, count)) => *count += 1,
            None => codes.push((code.to_string(), 1)),
        }
    }
    codes
}

/// The drift lines: for the PTY host's launch and for the sidecar, field
/// by field.
fn render_drift(out: &mut String, drift: &Value) {
    if drift.is_null() {
        return;
    }
    if let Some(error) = drift.get("error") {
        out.push_str(&format!("  drift        unknown ({})\n", text(error)));
        return;
    }
    let parts = [
        ("pty host", &drift["harness"]),
        ("sidecar", &drift["sidecar"]),
    ];
    let mut fields = Vec::new();
    for (what, part) in parts {
        for field in part.as_array().into_iter().flatten() {
            fields.push(format!(
                "    {what}  {}: running {} -> declared {}",
                text(&field["field"]),
                shown(&field["running"]),
                shown(&field["declared"])
            ));
        }
    }
    if fields.is_empty() {
        out.push_str("  drift        none\n");
        return;
    }
    out.push_str("  drift        the declaration differs from what runs (`ding up --replace` restarts what drifted):\n");
    for field in fields {
        out.push_str(&format!("  {field}\n"));
    }
}

fn render_adapter(adapter: &Value, document: &Value, now: Time) -> String {
    let ago = |key: &str| {
        adapter[key]
            .as_u64()
            .map(|at| human_age(now.since(Time::from_millis(at))))
            .unwrap_or_else(|| "?".into())
    };
    match adapter["state"].as_str() {
        Some("disabled") => "none (this policy runs no adapter)".to_string(),
        Some("starting") => format!("starting (since {} ago)", ago("since")),
        Some("up") => format!(
            "up, pid {}, since {} ago, last line {}",
            shown(&adapter["pid"]),
            ago("since"),
            match adapter["lastLine"].as_u64() {
                Some(_) => format!("{} ago", ago("lastLine")),
                None => "never".to_string(),
            }
        ),
        Some("down") => {
            let retry = adapter["retryAt"]
                .as_u64()
                .map(|at| Time::from_millis(at).since(now));
            format!(
                "down ({}), respawn in {} (next backoff {} ms)",
                text(&adapter["down"]["cause"]),
                retry.map(human_age).unwrap_or_else(|| "?".into()),
                shown(&adapter["nextBackoffMs"])
            )
        }
        _ => format!("{} {}", shown(adapter), shown(&document["adapterPid"])),
    }
}

/// The lease as people read it. A fresh lease beside held work is not a
/// contradiction, and says so: it exists, but something else (the first
/// hold, `held`) keeps it from allowing delivery.
fn render_lease(lease: &Value, held: Option<&str>) -> String {
    match lease["freshness"].as_str() {
        Some("fresh") => format!(
            "fresh, {} ms left (composer {}, revision {}){}",
            shown(&lease["remainingMs"]),
            text(&lease["composer"]),
            shown(&lease["revision"]),
            match held {
                Some(code) => format!(", but it does not allow delivery now: held by {code}"),
                None => String::new(),
            }
        ),
        Some("expired") => format!("expired (composer {})", text(&lease["composer"])),
        _ => format!("none ({})", text(&lease["reason"]["code"])),
    }
}

fn render_pty(pty: &Value, document: &Value) -> String {
    let connected = document["ptyConnected"].as_bool() == Some(true);
    let identity = &pty["identity"];
    if identity.is_null() {
        return if connected {
            "connected, identity unknown".into()
        } else {
            "not connected".into()
        };
    }
    format!(
        "{} {} incarnation {} generation {} revision {}",
        if connected {
            "connected"
        } else {
            "unreachable, last seen"
        },
        text(&identity["session"]),
        text(&identity["incarnation"]),
        text(&identity["generation"]),
        shown(&pty["revision"])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A process that is alive but does not answer is told apart from one
    /// that is gone, on the first line people read.
    #[test]
    fn a_silent_sidecar_is_not_answering_not_not_running() {
        let document = |sidecar: &str| {
            json!({
                "agent": "w",
                "harness": {"state": "running", "pid": 9, "forMs": 5000},
                "ptyHost": {"state": "running", "pid": 8},
                "sidecar": {"state": sidecar, "pid": 7},
            })
        };
        let shown = render(&document("not-answering"));
        assert!(
            shown.starts_with("agent w: NOT ANSWERING: sidecar\n"),
            "{shown}"
        );
        let shown = render(&document("dead"));
        assert!(
            shown.starts_with("agent w: NOT RUNNING: sidecar dead\n"),
            "{shown}"
        );
    }
}
