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
//! document (`agent_status`, typed throughout) is printed with `--json`,
//! or rendered for people.
//!
//! Exit status: 0 when the sidecar, the PTY host and the harness all run,
//! 3 when any of them does not (the document is printed all the same, as
//! `systemctl status` does), 4 for an agent that never ran here.
//!
//! Filenames, identities and adapter text in the document are not ours, so
//! everything printed goes through the one rule of [`crate::escape`]:
//! the JSON with every character that is not plain as `\uXXXX`, the human
//! rendering with raw values escaped as `\u{hex}` and the human lines (which
//! the sidecar escaped already) made displayable. Nothing a hostile name
//! holds reaches the operator's terminal as a control or escape sequence.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};
use serde::Serialize;

use super::agent_state::AgentState;
use super::agent_status::{AgentStatus, Drift, judge_drift};
use super::exit::Failure;
use super::help::help_asked;
use super::remote::Remote;
use super::status_pages;
use crate::core::adapter::AdapterPhase;
use crate::core::config::{Fence, Policy};
use crate::core::hold::HoldAdvice;
use crate::core::lease::LeaseSlot;
use crate::core::status::{
    AdapterStatus, EvidenceView, Freshness, LeaseStatus, MessageWindow, PtyView, StateCounts,
    human_age,
};
use crate::core::time::Time;
use crate::escape::{displayable, escape};
use crate::pty::last_exit::LastExit;
use crate::sidecar::escaped_json::to_json_pretty;
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::status_document::StatusReport;

const HELP: &str = "\
Usage: ding status [[HOST:]NAME | HOST:] [--all] [--json] [--decl AGENT.kdl]

Show an agent's state: its harness (starting, running, restarting, exited
with its code or signal), PTY host and sidecar (running, not answering,
dead, stopped), policy, fingerprint and drift from its declaration (of both
the PTY host's launch and the sidecar), adapter, lease, PTY identity, how
many messages are unread in each state, why the held ones are held and
what to do, and the oldest and newest unread messages (and those being
delivered) in FIFO order. Without NAME, one line per agent (as `ding ls`).
HOST:NAME (HOST: for every agent) asks the ding on another host over ssh,
as `ding send HOST:NAME` does, and prints its answer escaped.

  --all            list every unread message (fetched page by page)
  --json           print the status document as JSON, every unread
                   message in it (written as its pages come)
  --decl FILE      compare with this declaration (default: the one it runs)
  -h, --help       this help

Exit status: 0 everything runs, 3 something does not (still printed),
4 no agent NAME ever ran here.
";

struct Options {
    name: Option<String>,
    json: bool,
    all: bool,
    declaration: Option<PathBuf>,
}

/// How many of the oldest and of the newest unread files `ding status`
/// lists by default (and as many of each state but pending).
const SUMMARY_ENDS: usize = 5;

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut options = Options {
        name: None,
        json: false,
        all: false,
        declaration: None,
    };
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("json") => options.json = true,
            Arg::Long("all") => options.all = true,
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
    if let Some(remote) = options.name.as_deref().and_then(Remote::parse) {
        if options.declaration.is_some() {
            super::remote::refuse_local_option("--decl", &remote)?;
        }
        return super::remote::show(&remote, "status", options.json);
    }
    let env = DirsEnv::from_process();
    let Some(name) = options.name.clone() else {
        return super::ls::list(&env, options.json);
    };
    let paths = AgentPaths::resolve(&name, &env)?;
    // Every file listed (`--json`, `--all`) comes page by page after the
    // rest of the document; by default the document lists a few.
    let every_file = options.json || options.all;
    let window = MessageWindow::Ends(if every_file { 0 } else { SUMMARY_ENDS });
    let state = AgentState::probe_listing(&paths, &window);
    let all_running = state.all_running();
    let drift = judge_drift(&name, &state, &paths, options.declaration.as_deref());
    let status = AgentStatus::of(&name, &paths, state)?.with_drift(drift);
    let paged = every_file && status.document.live().is_some();
    let mut out = std::io::stdout().lock();
    if options.json {
        // Through a `Value`, whose maps sort their keys: the order in
        // which `ding status --json` has always printed them.
        let document = serde_json::to_value(&status)?;
        if paged {
            status_pages::print_json(&paths.sidecar_socket(), document, &mut out)?;
        } else {
            writeln!(out, "{}", to_json_pretty(&document)?)?;
        }
    } else if paged {
        let mut every_line = Vec::new();
        status_pages::each_file(&paths.sidecar_socket(), |_, line| {
            every_line.push(line.to_string());
            Ok(())
        })?;
        write!(out, "{}", render_listing(&status, Some(&every_line)))?;
    } else {
        write!(out, "{}", render(&status))?;
    }
    Ok(if all_running {
        ExitCode::SUCCESS
    } else {
        Failure::NotRunning.exit_code()
    })
}

/// A path of the document as people see it: escaped by the one rule
/// (lossily, if it is not UTF-8), `?` when absent.
fn path_text(path: Option<&std::path::Path>) -> String {
    path.map_or_else(|| "?".into(), |path| escape(&path.to_string_lossy()))
}

/// A number of the document as people see it, `?` when absent.
fn number(value: Option<u64>) -> String {
    value.map_or_else(|| "?".into(), |n| n.to_string())
}

/// The word `--json` has for `value` (or for its field `tag`), escaped:
/// people read the enums' own words, never a second spelling of them.
fn json_word(value: &impl Serialize, tag: Option<&str>) -> String {
    let value = serde_json::to_value(value).unwrap_or_default();
    let word = match tag {
        Some(tag) => &value[tag],
        None => &value,
    };
    word.as_str().map_or_else(|| "?".into(), escape)
}

/// The human rendering of a status. Every value is escaped by the one rule
/// (see the module documentation).
pub fn render(status: &AgentStatus) -> String {
    render_listing(status, None)
}

/// [`render`], with `every_line` (every unread file's human line, fetched
/// page by page) in place of the ones the document lists.
fn render_listing(status: &AgentStatus, every_line: Option<&[String]>) -> String {
    let document = &status.document;
    let live = document.live();
    let mut out = String::new();
    let name = escape(document.agent());
    let held = held_codes(document);
    let down = status.processes.not_running();
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
    let uptime = live.map(|live| Duration::from_millis(live.uptime_ms));
    for state in status.processes.lines(status.terminal.as_ref(), uptime) {
        out.push_str(&format!("{state}\n"));
    }
    if let Some(last) = &status.last_exit {
        render_last_exit(&mut out, last);
    }
    if live.is_none() {
        match &status.sidecar_status_error {
            Some(why) => out.push_str(&format!(
                "  (the inbox is listed from disk, with the journal's states: {})\n",
                escape(why)
            )),
            None => out.push_str("  (the sidecar does not answer: the inbox is listed from disk, with the journal's states)\n"),
        }
    }
    if let Some(declaration) = document.declaration() {
        out.push_str(&format!(
            "  declaration  {}\n",
            path_text(Some(declaration))
        ));
    }
    out.push_str(&format!(
        "  policy       {}\n  fingerprint  {}\n",
        document.policy().map_or("?", Policy::token),
        document.fingerprint().map_or_else(|| "?".into(), escape)
    ));
    render_drift(&mut out, status.drift.as_ref());
    out.push_str(&format!("  inbox        {}\n", path_text(document.inbox())));
    if let Some(warning) = document.journal_warning() {
        out.push_str(&format!("  journal      {}\n", escape(warning)));
    }
    if let Some(error) = live.and_then(|live| live.journal_write_error.as_deref()) {
        out.push_str(&format!(
            "  journal      NOT SAVED, retrying: {} (a crash now may ring staged messages again)\n",
            escape(error)
        ));
    }
    let failures = [
        (
            live.and_then(|live| live.log_write_failure.as_deref()),
            "sidecar",
        ),
        (status.pty_host_log_write_failure.as_ref(), "pty host"),
    ];
    for (failure, whose) in failures {
        if let Some(failure) = failure {
            out.push_str(&format!(
                "  logs         {whose} log writes failing since {}: {} lines lost ({})\n",
                escape(&failure.since),
                failure.lost_lines,
                escape(&failure.error)
            ));
        }
    }
    if let Some(live) = live {
        let engine = &live.engine;
        out.push_str(&format!(
            "  adapter      {}\n",
            render_adapter(&engine.adapter, engine.now)
        ));
        // The adapter's own words (opaque: shown, never interpreted,
        // escaped), for example whether the harness's hooks are in place.
        if let Some(reason) = &engine.evidence.adapter_reason {
            out.push_str(&adapter_words(&engine.evidence, reason, engine.now));
        }
        let lease = if live.policy == Policy::Aggressive {
            "not used by this policy".to_string()
        } else {
            render_lease(&engine.lease, held.first().map(|(code, _)| *code))
        };
        out.push_str(&format!("  lease        {lease}\n"));
        if engine.evidence.fence == Fence::ReceiptUnsafe {
            out.push_str(
                "  fence        UNSAFE: at receipt (unsafe-receipt-fence), not at the adapter's observation\n",
            );
        }
        if live.policy != Policy::Aggressive {
            out.push_str(&format!(
                "  evidence     {}\n",
                if engine.evidence.wanted {
                    "wanted (unread work waits for the terminal)"
                } else {
                    "not wanted (nothing for the terminal to deliver)"
                }
            ));
        }
        out.push_str(&format!(
            "  pty          {}\n",
            render_pty(&engine.pty, live.pty_connected)
        ));
    }
    let lines = every_line.unwrap_or(document.lines());
    let held_count = held.iter().map(|(_, count)| count).sum::<usize>();
    let unread = document.unread();
    out.push_str(&format!(
        "  unread       {unread}{}{}\n",
        if held_count > 0 {
            format!(" ({held_count} held)")
        } else {
            String::new()
        },
        live.map(|live| busy_counts(&live.engine.by_state))
            .unwrap_or_default()
    ));
    // The sidecar escaped its lines already; made displayable in case it
    // did not.
    for human in lines {
        out.push_str(&format!("    {}\n", displayable(human)));
    }
    if every_line.is_none() && lines.len() < unread {
        out.push_str(&format!(
            "    ({} of {unread} listed: the oldest and the newest, and those being delivered; `ding status {name} --all` lists every one)\n",
            lines.len()
        ));
    }
    for (code, _) in &held {
        if let Some(advice) = HoldAdvice::of(code) {
            out.push_str(&format!(
                "  why held     {}: {}\n               what to do: {}\n",
                advice.code, advice.meaning, advice.what_to_do
            ));
        }
    }
    let unreadable = document.unreadable();
    if !unreadable.is_empty() {
        out.push_str("  unreadable   (in new/ but not deliverable; rename or remove them)\n");
        for entry in unreadable {
            out.push_str(&format!(
                "    {}  {}\n",
                displayable(&entry.name),
                escape(&entry.reason)
            ));
        }
    }
    out
}

/// The hold code of the held messages (every pending one is under the
/// engine's one hold), with how many it holds.
fn held_codes(document: &StatusReport) -> Vec<(&'static str, usize)> {
    document
        .live()
        .and_then(|live| live.engine.held())
        .map(|(hold, count)| (hold.reason.code(), count))
        .into_iter()
        .collect()
}

/// The drift lines: for the PTY host's launch and for the sidecar, field
/// by field.
/// `; 2 in flight, 40 staged`: the unread files that are not pending, by
/// state (empty when every one is pending).
fn busy_counts(counts: &StateCounts) -> String {
    let parts: Vec<String> = [
        (counts.in_flight, "in flight"),
        (counts.staged, "staged"),
        (counts.hook_owned, "hook-owned"),
    ]
    .into_iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, state)| format!("{count} {state}"))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

/// Why a harness that is not running stopped: how it ended, when, and the
/// last lines of its screen, escaped.
fn render_last_exit(out: &mut String, last: &LastExit) {
    out.push_str(&format!(
        "  last exit    the harness {} at {} (incarnation {})\n",
        last.how(),
        escape(&last.at),
        escape(&last.incarnation)
    ));
    if last.screen.is_empty() {
        out.push_str("               (its screen was blank)\n");
    }
    for row in &last.screen {
        out.push_str(&format!("               | {}\n", escape(row)));
    }
}

fn render_drift(out: &mut String, drift: Option<&Drift>) {
    let (sidecar, harness) = match drift {
        None => return,
        Some(Drift::Unknown { error }) => {
            out.push_str(&format!("  drift        unknown ({})\n", escape(error)));
            return;
        }
        Some(Drift::Judged {
            sidecar, harness, ..
        }) => (sidecar, harness),
    };
    let mut fields = Vec::new();
    for (what, part) in [("pty host", harness), ("sidecar", sidecar)] {
        for field in part.iter().flatten() {
            fields.push(format!(
                "    {what}  {}: running {} -> declared {}",
                escape(&field.field),
                escape(&field.running),
                escape(&field.declared)
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

fn render_adapter(adapter: &AdapterStatus, now: Time) -> String {
    let ago = |at: Time| human_age(now.since(at));
    match &adapter.phase {
        AdapterPhase::Disabled => "none (this policy runs no adapter)".to_string(),
        AdapterPhase::Starting { since } => format!("starting (since {} ago)", ago(*since)),
        AdapterPhase::Up {
            pid,
            since,
            last_line,
            ..
        } => format!(
            "up, pid {pid}, since {} ago, last line {}",
            ago(*since),
            match last_line {
                Some(at) => format!("{} ago", ago(*at)),
                None => "never".to_string(),
            }
        ),
        AdapterPhase::Down { down, retry_at, .. } => format!(
            "down ({}), respawn in {} (next backoff {} ms)",
            json_word(down, Some("cause")),
            human_age(retry_at.since(now)),
            adapter.next_backoff_ms
        ),
    }
}

/// The lease as people read it. A fresh lease beside held work is not a
/// contradiction, and says so: it exists, but something else (the first
/// hold, `held`) keeps it from allowing delivery.
fn render_lease(lease: &LeaseStatus, held: Option<&str>) -> String {
    match &lease.slot {
        LeaseSlot::Granted(granted) if lease.freshness == Freshness::Fresh => format!(
            "fresh, {} ms left (composer {}, revision {}){}",
            number(lease.remaining_ms),
            json_word(&granted.composer, None),
            number(granted.revision),
            match held {
                Some(code) => format!(", but it does not allow delivery now: held by {code}"),
                None => String::new(),
            }
        ),
        LeaseSlot::Granted(granted) => {
            format!("expired (composer {})", json_word(&granted.composer, None))
        }
        LeaseSlot::Ended { reason, .. } => format!("none ({})", reason.code()),
    }
}

fn render_pty(pty: &PtyView, connected: bool) -> String {
    let Some(identity) = &pty.identity else {
        return if connected {
            "connected, identity unknown".into()
        } else {
            "not connected".into()
        };
    };
    format!(
        "{} {} incarnation {} generation {} revision {}",
        if connected {
            "connected"
        } else {
            "unreachable, last seen"
        },
        escape(&identity.session),
        escape(&identity.incarnation),
        escape(&identity.generation),
        number(pty.revision)
    )
}

/// The adapter's last words, as they stand now: said while evidence was
/// wanted, then not read again because nothing waits, they describe a
/// screen of the past and are shown as such.
fn adapter_words(evidence: &EvidenceView, reason: &str, now: Time) -> String {
    let stale_since = match (evidence.wanted, evidence.since, evidence.adapter_reason_at) {
        (false, Some(since), Some(said)) if said <= since => Some(said),
        _ => None,
    };
    match stale_since {
        Some(said) => format!(
            "  adapter said {} ({} s ago, when work last waited; no screen is read while nothing does)\n",
            escape(reason),
            now.since(said).as_secs()
        ),
        None => format!("  adapter says {}\n", escape(reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_adapters_words_from_before_nothing_waited_are_shown_as_past() {
        let evidence = |wanted, since, said| EvidenceView {
            wanted,
            since: Some(Time::from_millis(since)),
            fence: Fence::Evidence,
            adapter_reason: Some("ready, human text".into()),
            adapter_reason_at: Some(Time::from_millis(said)),
        };
        let now = Time::from_millis(200_000);
        let stale = adapter_words(&evidence(false, 20_000, 10_000), "ready, human text", now);
        assert!(
            stale.starts_with("  adapter said ready, human text (190 s ago"),
            "{stale}"
        );
        let current = adapter_words(&evidence(true, 20_000, 10_000), "ready, human text", now);
        assert_eq!(current, "  adapter says ready, human text\n");
        // A remark said after nothing waited any more is today's.
        let remark = adapter_words(&evidence(false, 20_000, 30_000), "hooks firing", now);
        assert_eq!(remark, "  adapter says hooks firing\n");
    }
    use crate::cli::agent_state::{Harness, Process, Processes};
    use crate::sidecar::status_document::{DiskEngine, DiskStatus, Running};

    fn status(sidecar: Process, why: Option<&str>) -> AgentStatus {
        AgentStatus {
            document: StatusReport::FromDisk(Box::new(DiskStatus {
                agent: "w".into(),
                running: Running,
                recorded: None,
                engine: DiskEngine::default(),
                lines: Vec::new(),
            })),
            sidecar_status_error: why.map(str::to_string),
            processes: Processes {
                sidecar,
                pty_host: Process::Running { pid: 8 },
                harness: Harness::Running {
                    pid: 9,
                    for_ms: 5000,
                },
            },
            terminal: None,
            last_exit: None,
            pty_host_log_write_failure: None,
            declared_fingerprint: None,
            drift: None,
        }
    }

    /// A process that is alive but does not answer is told apart from one
    /// that is gone, on the first line people read.
    #[test]
    fn a_silent_sidecar_is_not_answering_not_not_running() {
        let shown = render(&status(Process::NotAnswering { pid: 7 }, None));
        assert!(
            shown.starts_with("agent w: NOT ANSWERING: sidecar\n"),
            "{shown}"
        );
        let shown = render(&status(Process::Dead { pid: 7 }, None));
        assert!(
            shown.starts_with("agent w: NOT RUNNING: sidecar dead\n"),
            "{shown}"
        );
    }

    /// A sidecar whose answer this ding cannot read runs all the same: the
    /// inbox is listed from disk and the status says why, escaped.
    #[test]
    fn an_unreadable_answer_is_said_beside_the_inbox_from_disk() {
        let why = "the sidecar's status is not one this ding reads (\u{1b}[2J)";
        let shown = render(&status(Process::Running { pid: 7 }, Some(why)));
        assert!(shown.starts_with("agent w: running\n"), "{shown}");
        assert!(
            shown.contains("  (the inbox is listed from disk, with the journal's states: the sidecar's status is not one this ding reads (\\u{1b}[2J))\n"),
            "{shown}"
        );
    }
}
