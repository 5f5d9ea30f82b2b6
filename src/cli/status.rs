//! `ding status [NAME] [--json]`: why each unread message is where it is.
//!
//! A running sidecar answers from memory through `sidecar.sock`. A stopped
//! agent still gets an answer from disk: the inbox is the authority and the
//! journal says which files were rung or hook-owned. Either way the same
//! JSON document is printed with `--json`, or rendered for people.
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
use super::help_asked;
use crate::core::escape::{displayable, escape};
use crate::core::journal::{Journal, Owner};
use crate::core::status::human_age;
use crate::core::time::Time;
use crate::decl::{Fingerprinted, drift};
use crate::sidecar::agent_record::{AgentRecord, FILE as AGENT_RECORD};
use crate::sidecar::control::{live_pid, query_status};
use crate::sidecar::escaped_json::{to_json, to_json_pretty};
use crate::sidecar::inbox::Inbox;
use crate::sidecar::journal_store::{Found, JournalStore};
use crate::sidecar::paths::{AgentPaths, DirsEnv, check_agent_name};
use crate::sidecar::status_document::UnreadableView;

const HELP: &str = "\
Usage: ding status [NAME] [--json] [--decl AGENT.kdl]

Show an agent's delivery state: policy, fingerprint (and drift from its
declaration), adapter, lease, PTY identity, and every unread message in FIFO
order with its state and, if held, why. Without NAME, one line per agent.

  --json           print the status document as JSON
  --decl FILE      compare with this declaration (default: the one it runs)
  -h, --help       this help
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
        return list_agents(&env, options.json);
    };
    let paths = AgentPaths::resolve(&name, &env)?;
    let mut document = agent_status(&name, &paths)?;
    add_drift(&mut document, &paths, options.declaration.as_deref())?;
    if options.json {
        writeln!(std::io::stdout(), "{}", to_json_pretty(&document)?)?;
    } else {
        write!(std::io::stdout(), "{}", render(&document))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The live document from a running sidecar, or one built from disk.
pub fn agent_status(name: &str, paths: &AgentPaths) -> Result<Value> {
    if live_pid(&paths.sidecar_pid()).is_some()
        && let Ok(document) = query_status(&paths.sidecar_socket())
    {
        return Ok(document);
    }
    offline_status(name, paths)
}

/// Status of an agent whose sidecar is not running: the inbox from disk,
/// annotated with the journal's ownership.
fn offline_status(name: &str, paths: &AgentPaths) -> Result<Value> {
    let Some(record) = AgentRecord::load(paths.state_dir())? else {
        bail!(
            "agent `{name}` has never run here (no {})\nhint: start it with `ding up AGENT.kdl`, or pass --decl",
            paths.state_dir().join(AGENT_RECORD).display()
        );
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
        "ptyRunning": live_pid(&paths.pty_pid()).is_some(),
        "journalWarning": journal_warning,
        "unreadable": unreadable,
        "engine": { "unread": messages.len(), "messages": messages },
        "lines": lines,
    }))
}

/// Adds `drift`: the fields in which the declaration differs from what runs.
fn add_drift(
    document: &mut Value,
    paths: &AgentPaths,
    declaration: Option<&std::path::Path>,
) -> Result<()> {
    let declared_path = match declaration {
        Some(path) => path.to_path_buf(),
        // The recorded path is data from the state directory: only a
        // regular file (or a link to one) is opened, never a FIFO.
        None => match AgentRecord::load(paths.state_dir())? {
            Some(record) if fs::metadata(&record.declaration).is_ok_and(|m| m.is_file()) => {
                record.declaration
            }
            _ => return Ok(()),
        },
    };
    let name = document["agent"].as_str().unwrap_or_default().to_string();
    let Ok(spec) = load_agent(&declared_path, Some(&name)) else {
        document["drift"] = json!({ "error": format!("cannot load {}", declared_path.display()) });
        return Ok(());
    };
    let Ok(running) = serde_json::from_value::<crate::decl::FingerprintInput>(
        document["fingerprintInput"].clone(),
    ) else {
        return Ok(());
    };
    let declared = spec.fingerprint_input();
    let fields: Vec<Value> = drift(&running, &declared)
        .into_iter()
        .map(|field| json!({ "field": field.field, "running": field.old, "declared": field.new }))
        .collect();
    document["declaredFingerprint"] = json!(declared.fingerprint());
    document["drift"] = json!(fields);
    Ok(())
}

fn list_agents(env: &DirsEnv, as_json: bool) -> Result<ExitCode> {
    // Every agent that ever ran here has a state directory with its record.
    let probe = AgentPaths::resolve("probe", env)?;
    let base = probe
        .state_dir()
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    // Only directories named like agents can be agents; anything else in
    // the state directory is not listed (and its name never printed).
    let mut names: Vec<String> = fs::read_dir(&base)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.path().join(AGENT_RECORD).is_file())
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|name| check_agent_name(name).is_ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut documents = Vec::new();
    for name in names {
        let paths = AgentPaths::resolve(&name, env)?;
        // One agent that cannot be read does not hide the others.
        documents.push(
            agent_status(&name, &paths)
                .unwrap_or_else(|err| json!({ "agent": name, "error": format!("{err:#}") })),
        );
    }
    if as_json {
        writeln!(std::io::stdout(), "{}", to_json_pretty(&documents)?)?;
    } else if documents.is_empty() {
        writeln!(std::io::stdout(), "no agents have run here yet")?;
    } else {
        for document in &documents {
            let line = match document.get("error") {
                Some(error) => format!("{:<20} error: {}", text(&document["agent"]), text(error)),
                None => format!(
                    "{:<20} {:<8} {:<26} {} unread",
                    text(&document["agent"]),
                    if document["running"].as_bool() == Some(true) {
                        "running"
                    } else {
                        "stopped"
                    },
                    text(&document["policy"]),
                    document["engine"]["unread"].as_u64().unwrap_or(0),
                ),
            };
            writeln!(std::io::stdout(), "{line}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
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
    if running {
        out.push_str(&format!(
            "agent {name}: running (sidecar pid {}, up {})\n",
            shown(&document["pid"]),
            human_age(std::time::Duration::from_millis(
                document["uptimeMs"].as_u64().unwrap_or(0)
            ))
        ));
    } else {
        out.push_str(&format!(
            "agent {name}: sidecar not running (listing the inbox from disk)\n"
        ));
    }
    out.push_str(&format!(
        "  policy       {}\n  fingerprint  {}\n",
        text(&document["policy"]),
        text(&document["fingerprint"])
    ));
    match document.get("drift") {
        Some(Value::Array(fields)) if fields.is_empty() => out.push_str("  drift        none\n"),
        Some(Value::Array(fields)) => {
            out.push_str("  drift        the declaration differs (not restarted; `ding up --replace` applies it):\n");
            for field in fields {
                out.push_str(&format!(
                    "                 {}: running {} -> declared {}\n",
                    text(&field["field"]),
                    shown(&field["running"]),
                    shown(&field["declared"])
                ));
            }
        }
        Some(other) if other.get("error").is_some() => {
            out.push_str(&format!(
                "  drift        unknown ({})\n",
                text(&other["error"])
            ));
        }
        _ => {}
    }
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
            render_lease(&engine["lease"])
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
    out.push_str(&format!("  unread       {}\n", lines.len()));
    for human in &lines {
        out.push_str(&format!("    {}\n", line(human)));
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
            match adapter["last_line"].as_u64() {
                Some(_) => format!("{} ago", ago("last_line")),
                None => "never".to_string(),
            }
        ),
        Some("down") => {
            let retry = adapter["retry_at"]
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

fn render_lease(lease: &Value) -> String {
    match lease["freshness"].as_str() {
        Some("fresh") => format!(
            "fresh, {} ms left (composer {}, revision {})",
            shown(&lease["remainingMs"]),
            text(&lease["composer"]),
            shown(&lease["revision"])
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
