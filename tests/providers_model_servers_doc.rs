//! `docs/providers/model-servers.md` is run, not just read: every example
//! request is sent to a real `ding-eval model-server` (one server per API,
//! examples in document order), and its reply and log line must contain
//! what the page says; every `sh` block runs in bash with `ding` on PATH.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use support::real_pane::ModelServer;
use support::sidecar_agent::DING;

const DOC: &str = "docs/providers/model-servers.md";

/// A fenced block: its info string and its text.
struct Block {
    info: String,
    text: String,
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for line in doc.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_string(),
                    text: String::new(),
                })
            }
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some(block), None) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// One example: the request, what its reply must contain, what its log
/// line must contain.
struct Example {
    api: String,
    request: String,
    events: Option<String>,
    reply: Option<Value>,
    log: Value,
}

fn examples(blocks: &[Block]) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    for block in blocks {
        let mut words = block.info.split_whitespace();
        let (_, kind, api) = (words.next(), words.next(), words.next());
        match kind {
            Some("model-request") => out.push(Example {
                api: api.expect("model-request names its API").to_string(),
                request: block.text.clone(),
                events: None,
                reply: None,
                log: Value::Null,
            }),
            Some("model-events") => {
                out.last_mut().expect("a request first").events = Some(block.text.clone())
            }
            Some("model-reply") => {
                out.last_mut().expect("a request first").reply =
                    Some(serde_json::from_str(&block.text).expect("model-reply is JSON"))
            }
            Some("model-log") => {
                out.last_mut().expect("a request first").log =
                    serde_json::from_str(&block.text).expect("model-log is JSON")
            }
            _ => {}
        }
    }
    out
}

/// Whether `actual` contains `expected`: objects key by key, arrays of the
/// same length element by element, recursively; anything else equal.
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected
            .iter()
            .all(|(key, value)| actual.get(key).is_some_and(|found| contains(found, value))),
        (Value::Array(actual), Value::Array(expected)) => {
            actual.len() == expected.len()
                && actual
                    .iter()
                    .zip(expected)
                    .all(|(found, value)| contains(found, value))
        }
        _ => actual == expected,
    }
}

/// Sends an example's HTTP request (head lines, blank line, body) and
/// returns the status and the de-chunked body.
fn send(port: u16, example: &str) -> (u16, String) {
    let (head, body) = example.split_once("\n\n").unwrap_or((example, ""));
    let body = body.trim_end();
    let mut lines = head.lines();
    let request_line = lines.next().expect("request line");
    let mut request = format!("{request_line} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n");
    for header in lines {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status");
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).expect("header");
        if header.trim().is_empty() {
            break;
        }
    }
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
        if size == 0 {
            break;
        }
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).expect("chunk");
        body.extend_from_slice(&chunk[..size]);
    }
    (status, String::from_utf8(body).expect("utf-8 reply"))
}

/// `(name, data)` of each server-sent event.
fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            let mut name = String::new();
            let mut data = String::new();
            for line in event.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = value.to_string();
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            (
                name,
                serde_json::from_str(&data).expect("event data is JSON"),
            )
        })
        .collect()
}

#[test]
fn every_example_request_gets_the_documented_reply_and_log_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join(DOC)).expect("the doc");
    let examples = examples(&blocks(&doc));
    assert!(examples.len() >= 8, "the examples were found");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut servers: BTreeMap<String, ModelServer> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (number, example) in examples.iter().enumerate() {
        let server = servers
            .entry(example.api.clone())
            .or_insert_with(|| ModelServer::start(&example.api, &dir.path().join(&example.api)));
        let (status, body) = send(server.port, &example.request);
        assert_eq!(status, 200, "example {number}: {body}");
        if let Some(expected) = &example.events {
            let got = events(&body);
            let want: Vec<(&str, Value)> = expected
                .lines()
                .map(|line| {
                    let (name, data) = line.split_once(' ').unwrap_or((line, "{}"));
                    // `-`: an event with no name (a bare `data:` line).
                    let name = if name == "-" { "" } else { name };
                    (
                        name,
                        serde_json::from_str(data).expect("event expectation is JSON"),
                    )
                })
                .collect();
            let names: Vec<&str> = got.iter().map(|(name, _)| name.as_str()).collect();
            let want_names: Vec<&str> = want.iter().map(|(name, _)| *name).collect();
            assert_eq!(names, want_names, "example {number}: event names");
            for ((name, data), (_, wanted)) in got.iter().zip(&want) {
                assert!(
                    contains(data, wanted),
                    "example {number}: {name} is {data}, wanted {wanted}"
                );
            }
        }
        if let Some(wanted) = &example.reply {
            let reply: Value = serde_json::from_str(&body).expect("a JSON reply");
            assert!(
                contains(&reply, wanted),
                "example {number}: reply {reply}, wanted {wanted}"
            );
        }
        let count = seen.entry(example.api.clone()).or_default();
        *count += 1;
        let requests = server.requests();
        assert_eq!(
            requests.len(),
            *count,
            "example {number}: one log line per request"
        );
        let line = requests.last().expect("a log line");
        assert!(
            contains(line, &example.log),
            "example {number}: log line\n{line}\nwanted\n{}",
            example.log
        );
        assert!(line["body"].is_object(), "the whole body is logged");
    }
    assert_eq!(servers.len(), 4, "examples for every API");
}

#[test]
fn every_shell_example_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join(DOC)).expect("the doc");
    let scripts: Vec<Block> = blocks(&doc)
        .into_iter()
        .filter(|b| b.info == "sh")
        .collect();
    assert!(scripts.len() >= 2, "the shell examples were found");
    let bin = Path::new(DING).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for script in scripts {
        let output = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script.text])
            .current_dir(root)
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .expect("run bash");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "this example failed:\n{}\n{stdout}{}",
            script.text,
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("\"argv\""),
            "the launch was printed: {stdout}"
        );
    }
}
