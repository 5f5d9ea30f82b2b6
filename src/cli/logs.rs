//! `ding logs NAME [--follow] [--json] [--lines N]`: the agent's logs, the
//! sidecar's (with its previous, rotated generation) and the PTY host's,
//! merged in wall-clock order.
//!
//! Every record carries `time` (RFC 3339 UTC) beside the sidecar's
//! monotonic `at`; a line without one (written by an older ding, or not a
//! record at all, such as a start error) keeps its place after the record
//! before it in its own file. Each line says where it comes from. DING's
//! own typing is `rang`/`sent` in the sidecar (`origin=delivery`) and
//! `delivery` in the PTY host; anything else typed through the PTY host's
//! unconditional send (a supervisor's `ding intervene`, a script) is an
//! `INTERVENTION`, and shown in capitals.
//!
//! Log files hold text from adapters and filenames, so everything is
//! printed by the one escape rule, as `ding status` does: human lines by
//! `\u{hex}`, `--json` with every character that is not plain as `\uXXXX`.
//! Files are opened only if they are regular files (never a planted FIFO
//! or link), and at most their last 16 MiB are read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use lexopt::{Arg, ValueExt};
use serde_json::{Value, json};

use super::agent_state::ever_ran;
use super::exit::Failure;
use super::help::help_asked;
use crate::escape::escape;
use crate::private_file::{open_for_reading, read_tail};
use crate::sidecar::escaped_json::to_json;
use crate::sidecar::log::human;
use crate::sidecar::paths::{AgentPaths, DirsEnv};

const USAGE: &str = "Usage: ding logs NAME [--follow] [--json] [--lines N]";

const HELP: &str = "\
Usage: ding logs NAME [--follow] [--json] [--lines N]

Print the agent's logs: the sidecar's (decisions and runtime events) and the
PTY host's (child starts and exits, every delivery and every intervention),
merged in wall-clock order, each line with its time and its source.

  --follow     keep printing new lines as they are written (Ctrl-C ends)
  --json       print each record as one JSON line, with `source`
  --lines N    print only the last N lines first
  -h, --help   this help

DING's own transactions are `rang`/`sent` (sidecar, origin=delivery) and
`delivery` (pty); input typed by anyone else through the PTY host is an
INTERVENTION. Everything is escaped as in `ding status`.
Exit status: 0 printed, 4 no agent NAME ever ran here.
";

/// The most read from the end of each log file.
const MAX_READ: u64 = 16 * 1024 * 1024;
/// How often `--follow` looks for new lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(200);

struct Options {
    name: String,
    follow: bool,
    json: bool,
    lines: Option<usize>,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let (mut name, mut follow, mut json, mut lines) = (None, false, false, None);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("follow") | Arg::Short('f') => follow = true,
            Arg::Long("json") => json = true,
            Arg::Long("lines") | Arg::Short('n') => lines = Some(parser.value()?.parse()?),
            Arg::Value(value) if name.is_none() => name = Some(value.string()?),
            other => bail!("{}\n{USAGE}", other.unexpected()),
        }
    }
    let Some(name) = name else {
        bail!("`ding logs` needs an agent name\n{USAGE}");
    };
    Ok(Some(Options {
        name,
        follow,
        json,
        lines,
    }))
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let paths = AgentPaths::resolve(&options.name, &DirsEnv::from_process())?;
    if !ever_ran(&paths) && !paths.pty_log().exists() && !paths.sidecar_log().exists() {
        return Err(Failure::UnknownAgent.because(format!(
            "no agent `{}` has run here\nhint: `ding ls` lists the agents that have",
            options.name
        )));
    }
    // The rotated generation is read once; the live files through the
    // handles `--follow` goes on with, so no line falls between the two.
    let previous = read_tail(&previous_generation(&paths.sidecar_log()), MAX_READ)
        .map_err(|problem| anyhow::anyhow!("cannot read the previous sidecar log: {problem}"))?
        .unwrap_or_default();
    let mut live = [
        Followed::new("sidecar", paths.sidecar_log()),
        Followed::new("pty", paths.pty_log()),
    ];
    let mut sources = vec![(
        "sidecar",
        String::from_utf8_lossy(&previous)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>(),
    )];
    for file in &mut live {
        file.open(true)?;
        let mut lines = Vec::new();
        file.read_new(&mut lines)?;
        sources.push((file.source, lines));
    }
    let mut entries = Vec::new();
    for (index, (source, lines)) in sources.iter().enumerate() {
        let mut last_time = String::new();
        for (line_index, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let record = record_of(source, line);
            if let Some(time) = record["time"].as_str() {
                last_time = time.to_string();
            }
            entries.push((last_time.clone(), index, line_index, record));
        }
    }
    // Stable: records without a time keep their place in their own file.
    entries.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
    let skip = options
        .lines
        .map_or(0, |keep| entries.len().saturating_sub(keep));
    let mut out = std::io::stdout().lock();
    for (_, _, _, record) in entries.into_iter().skip(skip) {
        writeln!(out, "{}", shown(&record, options.json))?;
    }
    out.flush()?;
    drop(out);
    if options.follow {
        follow(&mut live, options.json)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A log line as a record with its `source`: the JSON object it is, or
/// `{"source", "text"}` for a line that is not one.
fn record_of(source: &str, line: &str) -> Value {
    match serde_json::from_str::<Value>(line) {
        Ok(mut value) if value.is_object() => {
            value["source"] = json!(source);
            value
        }
        _ => json!({ "source": source, "text": line }),
    }
}

/// One record as printed: escaped JSON, or `TIME SOURCE WHAT k=v...`.
fn shown(record: &Value, as_json: bool) -> String {
    if as_json {
        return to_json(record).unwrap_or_else(|_| "null".into());
    }
    let time = record["time"]
        .as_str()
        .map_or_else(|| "-".repeat(24), escape);
    let source = record["source"].as_str().unwrap_or("?");
    if let Some(text) = record.get("text").and_then(Value::as_str)
        && record.get("event").is_none()
        && record.get("decision").is_none()
    {
        return format!("{time} {source:<7} | {}", escape(text));
    }
    let mut rest = record.clone();
    if let Some(object) = rest.as_object_mut() {
        for key in ["time", "source", "agent"] {
            object.remove(key);
        }
        if object.get("event").and_then(Value::as_str) == Some("intervention") {
            object.insert("event".into(), json!("INTERVENTION"));
        }
    }
    format!("{time} {source:<7} {}", human(&rest))
}

/// One live log file: where reading stopped, and in which file.
struct Followed {
    source: &'static str,
    path: PathBuf,
    file: Option<File>,
    inode: Option<u64>,
    partial: Vec<u8>,
    /// Reading began mid-line: the first line is cut, and dropped.
    cut: bool,
}

impl Followed {
    fn new(source: &'static str, path: PathBuf) -> Followed {
        Followed {
            source,
            path,
            file: None,
            inode: None,
            partial: Vec::new(),
            cut: false,
        }
    }

    /// Opens the file at its path, if it is there: at its last
    /// [`MAX_READ`] bytes (`tail`, a cut first line dropped) or at its
    /// start (a file that appeared, or replaced the one followed).
    fn open(&mut self, tail: bool) -> Result<()> {
        let file = open_for_reading(&self.path)
            .map_err(|problem| anyhow::anyhow!("cannot read {}: {problem}", self.path.display()))?;
        self.partial.clear();
        self.file = match file {
            Some(mut file) => {
                let meta = file.metadata()?;
                self.inode = Some(meta.ino());
                let skip = if tail {
                    meta.len().saturating_sub(MAX_READ)
                } else {
                    0
                };
                if skip > 0 {
                    file.seek(SeekFrom::Start(skip))?;
                }
                self.cut = skip > 0;
                Some(file)
            }
            None => None,
        };
        Ok(())
    }

    /// Reads what was appended since the last call; switches to a new
    /// file at the path (a rotation) once the old one is read to its end.
    fn read_new(&mut self, lines: &mut Vec<String>) -> Result<()> {
        if self.file.is_none() {
            self.open(false)?;
        }
        self.read_to_end(lines)?;
        let current = std::fs::symlink_metadata(&self.path).ok().map(|m| m.ino());
        if current.is_some() && current != self.inode {
            self.open(false)?;
            self.read_to_end(lines)?;
        }
        Ok(())
    }

    fn read_to_end(&mut self, lines: &mut Vec<String>) -> Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let mut chunk = Vec::new();
        file.read_to_end(&mut chunk)
            .with_context(|| format!("read {}", self.path.display()))?;
        self.partial.extend_from_slice(&chunk);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            if std::mem::take(&mut self.cut) {
                continue;
            }
            let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            if !text.trim().is_empty() {
                lines.push(text);
            }
        }
        Ok(())
    }
}

/// Prints lines appended to `files` until the process is ended.
fn follow(files: &mut [Followed], as_json: bool) -> Result<()> {
    loop {
        std::thread::sleep(FOLLOW_EVERY);
        let mut out = std::io::stdout().lock();
        for file in files.iter_mut() {
            let mut lines = Vec::new();
            file.read_new(&mut lines)?;
            for line in lines {
                writeln!(out, "{}", shown(&record_of(file.source, &line), as_json))?;
            }
        }
        out.flush()?;
    }
}

/// The path of a log file's previous generation.
pub fn previous_generation(log: &Path) -> PathBuf {
    let mut previous = log.as_os_str().to_owned();
    previous.push(".1");
    PathBuf::from(previous)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn append(path: &Path, text: &str) {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open");
        file.write_all(text.as_bytes()).expect("append");
    }

    #[test]
    fn a_followed_log_is_read_on_from_where_the_dump_stopped_and_through_a_rotation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("sidecar.log");
        append(&log, "one\ntwo\n");
        let mut followed = Followed::new("sidecar", log.clone());
        followed.open(true).expect("open");
        let mut lines = Vec::new();
        followed.read_new(&mut lines).expect("read");
        assert_eq!(lines, ["one", "two"]);

        // A line written in two pieces comes out once, whole.
        append(&log, "thr");
        lines.clear();
        followed.read_new(&mut lines).expect("read");
        assert!(lines.is_empty());
        append(&log, "ee\n");
        followed.read_new(&mut lines).expect("read");
        assert_eq!(lines, ["three"]);

        // Rotated: the last line of the old file, then the new file.
        std::fs::rename(&log, previous_generation(&log)).expect("rotate");
        append(&previous_generation(&log), "four\n");
        append(&log, "five\n");
        lines.clear();
        followed.read_new(&mut lines).expect("read");
        assert_eq!(lines, ["four", "five"]);
    }

    #[test]
    fn interventions_are_shown_apart_and_everything_escaped() {
        let record = record_of(
            "pty",
            r#"{"event":"intervention","op":"send","bytes":3,"time":"2026-11-30T10:15:00.123Z"}"#,
        );
        assert_eq!(
            shown(&record, false),
            "2026-11-30T10:15:00.123Z pty     INTERVENTION bytes=3 op=send"
        );
        let raw = record_of("pty", "ding: cannot start \u{1b}[31m");
        assert_eq!(
            shown(&raw, false),
            "------------------------ pty     | ding: cannot start \\u{1b}[31m"
        );
        assert!(shown(&raw, true).contains("\\u001b"));
    }
}
