//! `ding status [NAME] [--json]`: why each unread message is where it is.
//!
//! A running sidecar answers from memory through `sidecar.sock`. A stopped
//! agent still gets an answer from disk: the inbox is the authority and the
//! journal says which files were rung or hook-owned. Either way the same
//! JSON document is printed with `--json`, or rendered for people.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};
use serde_json::{Value, json};

use super::agent_decl::load_agent;
use super::help_asked;
use crate::core::journal::Owner;
use crate::core::status::human_age;
use crate::core::time::Time;
use crate::decl::{Fingerprinted, drift};
use crate::sidecar::agent_record::AgentRecord;
use crate::sidecar::control::{live_pid, query_status};
use crate::sidecar::inbox::Inbox;
use crate::sidecar::journal_store::JournalStore;
use crate::sidecar::paths::{AgentPaths, DirsEnv};

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
        writeln!(
            std::io::stdout(),
            "{}",
            serde_json::to_string_pretty(&document)?
        )?;
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
            paths.state_dir().join("agent.json").display()
        );
    };
    let journal = JournalStore::new(paths.state_dir())
        .load()?
        .into_journal()
        .unwrap_or_default();
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
        .map(|name| match owners.get(name.as_str()) {
            Some(Owner::Staged) => format!("{name}  staged (journal), awaiting archive"),
            Some(Owner::HookOwned) => format!("{name}  hook-owned (journal), awaiting archive"),
            None => format!("{name}  held: sidecar not running"),
        })
        .collect();
    Ok(json!({
        "agent": name,
        "running": false,
        "policy": record.fingerprint_input.delivery,
        "fingerprint": record.fingerprint,
        "fingerprintInput": record.fingerprint_input,
        "inbox": record.inbox,
        "declaration": record.declaration,
        "ptyRunning": live_pid(&paths.pty_pid()).is_some(),
        "unreadable": scan.unreadable.iter().map(|entry| json!({
            "name": entry.name.to_string_lossy(),
            "reason": format!("{:?}", entry.reason),
        })).collect::<Vec<_>>(),
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
        None => match AgentRecord::load(paths.state_dir())? {
            Some(record) if record.declaration.exists() => record.declaration,
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
    let mut names: Vec<String> = fs::read_dir(&base)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.path().join("agent.json").is_file())
                .filter_map(|entry| entry.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut documents = Vec::new();
    for name in names {
        let paths = AgentPaths::resolve(&name, env)?;
        documents.push(agent_status(&name, &paths)?);
    }
    if as_json {
        writeln!(
            std::io::stdout(),
            "{}",
            serde_json::to_string_pretty(&documents)?
        )?;
    } else if documents.is_empty() {
        writeln!(std::io::stdout(), "no agents have run here yet")?;
    } else {
        for document in &documents {
            writeln!(
                std::io::stdout(),
                "{:<20} {:<8} {:<26} {} unread",
                document["agent"].as_str().unwrap_or("?"),
                if document["running"].as_bool() == Some(true) {
                    "running"
                } else {
                    "stopped"
                },
                document["policy"].as_str().unwrap_or("?"),
                document["engine"]["unread"].as_u64().unwrap_or(0),
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The human rendering of a status document.
pub fn render(document: &Value) -> String {
    let mut out = String::new();
    let name = document["agent"].as_str().unwrap_or("?");
    let running = document["running"].as_bool() == Some(true);
    if running {
        out.push_str(&format!(
            "agent {name}: running (sidecar pid {}, up {})\n",
            document["pid"],
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
        document["policy"].as_str().unwrap_or("?"),
        document["fingerprint"].as_str().unwrap_or("?")
    ));
    match document.get("drift") {
        Some(Value::Array(fields)) if fields.is_empty() => out.push_str("  drift        none\n"),
        Some(Value::Array(fields)) => {
            out.push_str("  drift        the declaration differs (not restarted; `ding up --replace` applies it):\n");
            for field in fields {
                out.push_str(&format!(
                    "                 {}: running {} -> declared {}\n",
                    field["field"].as_str().unwrap_or("?"),
                    field["running"],
                    field["declared"]
                ));
            }
        }
        Some(other) if other.get("error").is_some() => {
            out.push_str(&format!(
                "  drift        unknown ({})\n",
                other["error"].as_str().unwrap_or("?")
            ));
        }
        _ => {}
    }
    out.push_str(&format!(
        "  inbox        {}\n",
        document["inbox"].as_str().unwrap_or("?")
    ));
    if running {
        let engine = &document["engine"];
        let now = Time::from_millis(engine["now"].as_u64().unwrap_or(0));
        out.push_str(&format!(
            "  adapter      {}\n",
            render_adapter(&engine["adapter"], document, now)
        ));
        // The adapter's own words (opaque: shown, never interpreted, made
        // printable), for example whether the harness's hooks are in place.
        if let Some(reason) = engine["evidence"]["adapterReason"].as_str() {
            let shown = crate::core::notice::sanitize(reason).replace('\n', " ");
            out.push_str(&format!("  adapter says {shown}\n"));
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
    for line in lines {
        out.push_str(&format!("    {}\n", line.as_str().unwrap_or("?")));
    }
    if let Some(Value::Array(unreadable)) = document.get("unreadable")
        && !unreadable.is_empty()
    {
        out.push_str("  unreadable   (in new/ but not deliverable; rename or remove them)\n");
        for entry in unreadable {
            out.push_str(&format!(
                "    {}  {}\n",
                entry["name"].as_str().unwrap_or("?"),
                entry["reason"].as_str().unwrap_or("?")
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
            adapter["pid"],
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
                adapter["down"]["cause"].as_str().unwrap_or("?"),
                retry.map(human_age).unwrap_or_else(|| "?".into()),
                adapter["nextBackoffMs"]
            )
        }
        _ => format!("{adapter} {}", document["adapterPid"]),
    }
}

fn render_lease(lease: &Value) -> String {
    match lease["freshness"].as_str() {
        Some("fresh") => format!(
            "fresh, {} ms left (composer {}, revision {})",
            lease["remainingMs"],
            lease["composer"].as_str().unwrap_or("?"),
            lease["revision"]
        ),
        Some("expired") => format!(
            "expired (composer {})",
            lease["composer"].as_str().unwrap_or("?")
        ),
        _ => format!("none ({})", lease["reason"]["code"].as_str().unwrap_or("?")),
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
        identity["session"].as_str().unwrap_or("?"),
        identity["incarnation"].as_str().unwrap_or("?"),
        identity["generation"].as_str().unwrap_or("?"),
        pty["revision"]
    )
}
