//! The control protocol's wire types: JSON lines between the PTY host and its
//! clients (the sidecar, `ding attach`, tests, supervisors).
//!
//! This module owns the shapes only: requests, replies, pushes and the attach
//! frame header. It does no I/O and makes no decisions; the host (`host.rs`)
//! interprets requests and the blocking client (`client.rs`) sends them.
//! `docs/pty-protocol.md` is the normative description of every shape here.
//!
//! Field names are camelCase, like adapter protocol v1; operation and result
//! names are kebab-case.

use serde::{Deserialize, Serialize};

use crate::pty::transport::WireStep;

/// The longest request line the host accepts, newline included. A longer
/// line gets an `oversized-request` error and the connection is closed,
/// because the host cannot know where the next request starts.
pub const MAX_REQUEST_LINE: usize = 256 * 1024;

/// One request line from a client.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Request {
    /// Identity, revision, child state, size and input modes.
    Status {},
    /// The screen as text, cursor and styled runs.
    Snapshot {},
    /// The compare-and-send: write `steps` if and only if the identity matches
    /// and the revision is still `expectedRevision`, and, when asked, no
    /// person's input reached the terminal for `quietInputMs` and no output
    /// came from it for `settledOutputMs`.
    #[serde(rename_all = "camelCase")]
    SendIf {
        session: String,
        incarnation: String,
        generation: String,
        expected_revision: u64,
        steps: Vec<WireStep>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quiet_input_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settled_output_ms: Option<u64>,
        /// Once the steps are written in full, hold a person's typed text
        /// (no control character) for at most this long, until this
        /// client's next transaction has run: it goes first (a typed
        /// notice's Return; docs/pty-protocol.md §3, item 6).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold_input_ms: Option<u64>,
        /// The steps (keys, and a wait before them) that take the written
        /// text back out of the program's input line. Only with
        /// `holdInputMs`: if that hold ends with a person's input to go on
        /// before this client's next transaction began, the host runs them
        /// first and pushes `withdrawn` (docs/pty-protocol.md §3, item 7).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        withdraw: Option<Vec<WireStep>>,
    },
    /// Unconditional send. `origin` says who types, for the host's log: a
    /// supervisor's intervention (the default) or DING's own delivery (the
    /// aggressive policy's ring).
    Send {
        steps: Vec<WireStep>,
        #[serde(default, skip_serializing_if = "Origin::is_intervention")]
        origin: Origin,
    },
    /// Turn this connection into a push stream of revision changes and child
    /// lifecycle events (requests are still answered on it).
    Watch {},
    /// Set the terminal size.
    Resize { cols: u16, rows: u16 },
    /// Start the child again; ends a running child first (SIGHUP to its
    /// process group).
    Restart {},
    /// Switch this connection to framed raw attach mode (see `AttachFrame`).
    Attach {},
}

/// What the front of a control connection's buffer holds.
#[derive(Debug, PartialEq, Eq)]
pub enum NextRequest {
    /// One request line, its newline removed (and drained from the buffer).
    Line(Vec<u8>),
    /// The line at the front is longer than [`MAX_REQUEST_LINE`] (with or
    /// without its newline yet): answer `oversized-request` and close,
    /// because where the next request starts cannot be known.
    Oversized,
    /// More bytes are needed.
    Incomplete,
}

/// Takes the next request line from the front of `buf`. An oversized line
/// is reported as soon as the buffer proves it (a full buffer without a
/// newline), so a peer can never make the host hold more than the bound.
pub fn next_request(buf: &mut Vec<u8>) -> NextRequest {
    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() >= MAX_REQUEST_LINE {
            buf.clear();
            return NextRequest::Oversized;
        }
        return NextRequest::Incomplete;
    };
    if end + 1 > MAX_REQUEST_LINE {
        buf.drain(..=end);
        return NextRequest::Oversized;
    }
    let mut line: Vec<u8> = buf.drain(..=end).collect();
    line.pop();
    NextRequest::Line(line)
}

/// Decodes one request line: `Ok(None)` for a blank line (ignored, no
/// reply), the request, or the `malformed-request` error to answer with
/// (not JSON, not UTF-8, not an object, an unknown op, a missing, mistyped
/// or extra field).
pub fn decode_request(line: &[u8]) -> Result<Option<Request>, ErrorReply> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let malformed = |message: String| ErrorReply {
        error: ErrorKind::MalformedRequest,
        message,
    };
    // serde also reads a tagged enum from an array (`["status"]`); the
    // protocol is objects.
    if !is_object_text(line) {
        return Err(malformed("a request is a JSON object".into()));
    }
    serde_json::from_slice(line)
        .map(Some)
        .map_err(|err| malformed(err.to_string()))
}

/// Whether `line` can only be a JSON object: its first non-whitespace byte
/// is `{` (what follows is serde's to check).
pub fn is_object_text(line: &[u8]) -> bool {
    line.trim_ascii_start().first() == Some(&b'{')
}

/// Who an unconditional send is typed for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// A supervisor's explicit input (`ding intervene`, a test, a script).
    #[default]
    Intervention,
    /// DING's automatic delivery.
    Delivery,
}

impl Origin {
    pub fn is_intervention(&self) -> bool {
        *self == Origin::Intervention
    }
}

/// A successful reply line, tagged by the operation it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Reply {
    Status(HostStatus),
    Snapshot(Snapshot),
    SendIf(SendIfReply),
    #[serde(rename_all = "camelCase")]
    Send {
        revision: u64,
        written: usize,
    },
    Watch {
        revision: u64,
    },
    Resize {
        revision: u64,
    },
    Restart {
        incarnation: String,
        revision: u64,
    },
    Attach {
        revision: u64,
    },
}

/// `status`: everything a client needs to build a send-if tuple.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostStatus {
    pub session: String,
    pub incarnation: String,
    pub generation: String,
    pub revision: u64,
    pub child: ChildState,
    pub size: Size,
    /// Whether the application has enabled bracketed paste (DECSET 2004).
    pub bracketed_paste: bool,
    /// Number of connections in attach mode.
    pub attached: usize,
    /// A `restart` is ending the child (it was sent SIGHUP); a new
    /// incarnation follows once it has been reaped.
    #[serde(default, skip_serializing_if = "is_false")]
    pub restarting: bool,
    /// How long the child has been in its state (running since it started,
    /// or ended since it exited), in milliseconds.
    #[serde(default)]
    pub child_for_ms: u64,
    /// What the host was started from, as its starter described it
    /// (`--launch`): opaque to the host, given back for drift checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<serde_json::Value>,
    /// Since when the host's log writes fail (a full runtime filesystem),
    /// while they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_failure: Option<crate::log_file::LogFailure>,
    /// Now, on the host's own clock (milliseconds since it started).
    #[serde(default)]
    pub clock_ms: u64,
    /// The terminal's last input and output, on that clock.
    #[serde(default)]
    pub terminal: TerminalTimes,
}

/// The child process as the host last saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ChildState {
    Running { pid: i32 },
    Exited { code: i32 },
    Killed { signal: i32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

/// The outcome of a send-if. Every result other than `sent` means zero
/// bytes of the transaction reached the terminal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum SendIfReply {
    /// The whole transaction was written; `revision` is the revision when its
    /// last step finished.
    Sent { revision: u64, written: usize },
    /// Something happened on the terminal since `expectedRevision`.
    Conflict { revision: u64 },
    /// The identity tuple does not name this terminal's current child.
    Mismatch { part: IdentityPart, revision: u64 },
    /// The child has exited; nothing can be delivered to it.
    Exited { revision: u64 },
    /// The revision matched, but the terminal had not been quiet long
    /// enough: `part` is what moved too recently (input first), `quietForMs`
    /// how long it had been quiet, `retryInMs` how long until the same
    /// send-if would pass the time fence if nothing else happens.
    #[serde(rename_all = "camelCase")]
    Unsettled {
        part: TerminalPart,
        quiet_for_ms: u64,
        retry_in_ms: u64,
        revision: u64,
    },
    /// A person's input (an attached client's keys, an intervention)
    /// reached the host while the transaction ran: its remaining steps were
    /// dropped after `written` bytes, and the input went on after them.
    Interrupted { revision: u64, written: usize },
}

/// Which of the terminal's times a time fence found too recent: the same
/// type the engine holds with, so the two can never disagree on a name.
pub use crate::core::fence::QuietPart as TerminalPart;

/// A send-if's time fence: how long, in milliseconds on the host's clock,
/// a person's input and the program's output must have been quiet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quiet {
    pub input_ms: Option<u64>,
    pub output_ms: Option<u64>,
}

/// The longest quiet a send-if may ask for, of either kind.
pub const MAX_QUIET_MS: u64 = 10_000;

/// The longest a send-if may ask a person's typed text to be held.
pub const MAX_HOLD_INPUT_MS: u64 = 3_000;

/// The most bytes a send-if's `withdraw` steps may write: a few keys,
/// never a text of their own.
pub const MAX_WITHDRAW_BYTES: usize = 64;

/// The longest a send-if's `withdraw` steps may wait in all: a person's
/// input waits behind them.
pub const MAX_WITHDRAW_WAIT_MS: u64 = 500;

/// Whether a person's `bytes` are typed text as a send-if's `holdInputMs`
/// means it: valid UTF-8 with no control character (C0, DEL, C1), so no
/// Return, Esc, arrow, Backspace or Ctrl key a harness acts on.
pub fn is_typed_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes)
        .is_ok_and(|text| !text.is_empty() && !text.chars().any(char::is_control))
}

/// Which part of a send-if tuple differs first, in fence order: the same
/// type the engine fences with, so the two can never disagree on a name.
pub use crate::core::identity::IdentityPart;

/// When, on the host's own clock (milliseconds since the host started),
/// input other than DING's own deliveries last reached the terminal (a
/// person's keys through `attach`, a supervisor's intervention) and output
/// last came from it; `None`: not yet. Each of them moves the revision, so
/// a revision names one of these. A fence that needs the person to have
/// been quiet, or the screen to have settled, compares them with the
/// host's clock (`clockMs` in `status`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalTimes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_at_ms: Option<u64>,
}

/// `snapshot`: what the screen shows, at which revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub revision: u64,
    /// The terminal's last input and output at this revision.
    #[serde(default)]
    pub terminal: TerminalTimes,
    /// The host's clock when this revision's reply was built: at or after
    /// the revision's last change, so `clockMs - inputAtMs` is how long the
    /// person had been quiet at least (`None`: not said; nothing can then
    /// be known of how long).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ms: Option<u64>,
    pub size: Size,
    pub cursor: Cursor,
    /// Each visible row as text; only the spaces of empty cells at its end
    /// are trimmed (a drawn trailing U+00A0 stays).
    pub rows: Vec<String>,
    /// Maximal runs of cells that share a non-default style.
    pub runs: Vec<Run>,
    pub alternate_screen: bool,
    pub bracketed_paste: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}

/// A run of cells in one row with the same style. Absent attributes are off;
/// absent colours are the terminal default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub row: u16,
    pub col: u16,
    pub text: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub bold: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub dim: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub italic: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub underline: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub inverse: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fg: Option<Colour>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg: Option<Colour>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// A cell colour: a palette index (0-255) or `#rrggbb`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Colour {
    Index(u8),
    Rgb(String),
}

/// An unsolicited line on a watching connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "push", rename_all = "kebab-case")]
pub enum Push {
    /// The revision moved. Pushes are coalesced: a client that reads slowly
    /// sees the latest revision, not every step.
    Revision {
        revision: u64,
        /// The terminal's last input and output at that revision.
        #[serde(default)]
        terminal: TerminalTimes,
    },
    /// The child ended.
    Exit { child: ChildState, revision: u64 },
    /// A new child started (a new incarnation).
    Start { incarnation: String, revision: u64 },
    /// A hold ended with a person's input to go on before its owner's next
    /// transaction: the host ran the send-if's `withdraw` steps, taking the
    /// text it had written back out, before that input. `revision` is the
    /// revision after them.
    Withdrawn { revision: u64 },
}

/// An error reply. The connection stays open unless `error` is
/// `oversized-request` or `forbidden`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub error: ErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Not JSON, not UTF-8, an unknown op, or a missing or extra field.
    MalformedRequest,
    /// The request line exceeded `MAX_REQUEST_LINE`.
    OversizedRequest,
    /// A transport broke a cap (bytes, wait, steps) or had a bad step.
    InvalidTransport,
    /// An argument was out of range (e.g. a zero size).
    InvalidArgument,
    /// The host's queued input is full; try again later.
    Busy,
    /// The connecting uid is not the host's uid.
    Forbidden,
    /// The operation needs a running child.
    ChildExited,
}

/// Any line the host can send: a reply, a push, or an error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerLine {
    Reply(Reply),
    Push(Push),
    Error(ErrorReply),
}

/// Attach mode frames: one type byte, a 4-byte big-endian payload length,
/// then the payload. Frames larger than `MAX_FRAME_PAYLOAD` are a protocol
/// error and close the connection.
pub const FRAME_HEADER: usize = 5;
pub const MAX_FRAME_PAYLOAD: usize = 64 * 1024;

/// The frame types of attach mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// Client to host: keystrokes. Host to client: terminal output.
    Data = 0,
    /// Client to host: 4 bytes, cols then rows, each u16 big-endian.
    Resize = 1,
    /// Client to host: leave attach mode; the host closes the connection.
    Detach = 2,
    /// Host to client: the child ended; payload is the `ChildState` JSON.
    Exit = 3,
}

impl FrameKind {
    pub fn from_byte(byte: u8) -> Option<FrameKind> {
        match byte {
            0 => Some(FrameKind::Data),
            1 => Some(FrameKind::Resize),
            2 => Some(FrameKind::Detach),
            3 => Some(FrameKind::Exit),
            _ => None,
        }
    }
}

/// Appends one frame to `out`. Payloads longer than `MAX_FRAME_PAYLOAD` are
/// split into several frames of the same kind by the caller's loop here.
pub fn push_frame(out: &mut Vec<u8>, kind: FrameKind, payload: &[u8]) {
    let chunks: Vec<&[u8]> = if payload.is_empty() {
        vec![payload]
    } else {
        payload.chunks(MAX_FRAME_PAYLOAD).collect()
    };
    for chunk in chunks {
        out.push(kind as u8);
        // A chunk is at most MAX_FRAME_PAYLOAD bytes, so it fits in u32.
        out.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
        out.extend_from_slice(chunk);
    }
}

/// A frame parsed from the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Frame {
        kind: FrameKind,
        payload: Vec<u8>,
        consumed: usize,
    },
    /// More bytes are needed.
    Incomplete,
    /// An unknown type or an over-long payload.
    Invalid(String),
}

/// Parses the first frame of `buf`.
pub fn parse_frame(buf: &[u8]) -> Parsed {
    if buf.len() < FRAME_HEADER {
        return Parsed::Incomplete;
    }
    let Some(kind) = FrameKind::from_byte(buf[0]) else {
        return Parsed::Invalid(format!("unknown frame type {}", buf[0]));
    };
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if len > MAX_FRAME_PAYLOAD {
        return Parsed::Invalid(format!("frame payload of {len} bytes is over the limit"));
    }
    if buf.len() < FRAME_HEADER + len {
        return Parsed::Incomplete;
    }
    Parsed::Frame {
        kind,
        payload: buf[FRAME_HEADER..FRAME_HEADER + len].to_vec(),
        consumed: FRAME_HEADER + len,
    }
}

/// Encodes a resize frame payload.
pub fn resize_payload(size: Size) -> [u8; 4] {
    let [c0, c1] = size.cols.to_be_bytes();
    let [r0, r1] = size.rows.to_be_bytes();
    [c0, c1, r0, r1]
}

/// Decodes a resize frame payload.
pub fn parse_resize(payload: &[u8]) -> Option<Size> {
    match payload {
        [c0, c1, r0, r1] => Some(Size {
            cols: u16::from_be_bytes([*c0, *c1]),
            rows: u16::from_be_bytes([*r0, *r1]),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_if_request_uses_camel_case_fields() {
        let line = r#"{"op":"send-if","session":"s","incarnation":"i","generation":"g","expectedRevision":7,"steps":[{"write":"aGk="},{"waitMs":5}]}"#;
        let request: Request = serde_json::from_str(line).expect("parses");
        let Request::SendIf {
            expected_revision,
            steps,
            ..
        } = request
        else {
            panic!("not a send-if: {request:?}");
        };
        assert_eq!(expected_revision, 7);
        assert_eq!(steps.len(), 2);
    }

    #[test]
    fn a_time_fence_is_two_optional_fields_and_its_refusal_says_which_part() {
        let line = r#"{"op":"send-if","session":"s","incarnation":"i","generation":"g","expectedRevision":7,"steps":[{"write":"aGk="}],"quietInputMs":300,"settledOutputMs":150}"#;
        let Ok(Request::SendIf {
            quiet_input_ms,
            settled_output_ms,
            ..
        }) = serde_json::from_str::<Request>(line)
        else {
            panic!("not a send-if: {line}");
        };
        assert_eq!((quiet_input_ms, settled_output_ms), (Some(300), Some(150)));
        let reply = SendIfReply::Unsettled {
            part: TerminalPart::Input,
            quiet_for_ms: 40,
            retry_in_ms: 260,
            revision: 7,
        };
        let text = serde_json::to_string(&reply).expect("serializes");
        assert_eq!(
            text,
            r#"{"result":"unsettled","part":"input","quietForMs":40,"retryInMs":260,"revision":7}"#
        );
        let interrupted = SendIfReply::Interrupted {
            revision: 9,
            written: 12,
        };
        assert_eq!(
            serde_json::to_string(&interrupted).expect("serializes"),
            r#"{"result":"interrupted","revision":9,"written":12}"#
        );
    }

    #[test]
    fn unknown_fields_are_malformed() {
        for line in [
            r#"{"op":"status","extra":1}"#,
            r#"{"op":"send","steps":[],"extra":1}"#,
            r#"{"op":"send-if","session":"s","incarnation":"i","generation":"g","expectedRevision":1,"steps":[],"force":true}"#,
            r#"{"op":"send","steps":[{"write":"aGk=","waitMs":1}]}"#,
        ] {
            assert!(serde_json::from_str::<Request>(line).is_err(), "{line}");
        }
    }

    /// serde reads an internally tagged enum from an array too
    /// (`["status"]`); the protocol is one object per line (found by AFL++
    /// on the status socket, which shares the shape).
    #[test]
    fn a_request_is_an_object_or_malformed() {
        for line in [
            &br#"["status"]"#[..],
            br#" ["send", []]"#,
            br#""status""#,
            br#"{"op":0}"#,
            br#"{"op":4}"#,
        ] {
            let refusal = decode_request(line).expect_err("refused");
            assert_eq!(refusal.error, ErrorKind::MalformedRequest, "{line:?}");
        }
        assert_eq!(
            decode_request(br#" {"op":"status"}"#),
            Ok(Some(Request::Status {}))
        );
    }

    #[test]
    fn server_lines_round_trip() {
        let lines = [
            ServerLine::Reply(Reply::SendIf(SendIfReply::Conflict { revision: 9 })),
            ServerLine::Reply(Reply::Send {
                revision: 3,
                written: 2,
            }),
            ServerLine::Push(Push::Revision {
                revision: 4,
                terminal: TerminalTimes {
                    input_at_ms: Some(1_200),
                    output_at_ms: None,
                },
            }),
            ServerLine::Error(ErrorReply {
                error: ErrorKind::MalformedRequest,
                message: "x".into(),
            }),
        ];
        for line in lines {
            let text = serde_json::to_string(&line).expect("serializes");
            let back: ServerLine = serde_json::from_str(&text).expect("parses");
            assert_eq!(back, line, "{text}");
        }
    }

    #[test]
    fn frames_round_trip_and_split_long_payloads() {
        let mut out = Vec::new();
        let long = vec![b'x'; MAX_FRAME_PAYLOAD + 3];
        push_frame(&mut out, FrameKind::Data, &long);
        push_frame(&mut out, FrameKind::Detach, &[]);
        let mut rest = &out[..];
        let mut seen = Vec::new();
        while let Parsed::Frame {
            kind,
            payload,
            consumed,
        } = parse_frame(rest)
        {
            seen.push((kind, payload.len()));
            rest = &rest[consumed..];
        }
        assert_eq!(
            seen,
            vec![
                (FrameKind::Data, MAX_FRAME_PAYLOAD),
                (FrameKind::Data, 3),
                (FrameKind::Detach, 0)
            ]
        );
        assert!(rest.is_empty());
    }

    #[test]
    fn oversized_and_unknown_frames_are_invalid() {
        assert!(matches!(parse_frame(&[9, 0, 0, 0, 0]), Parsed::Invalid(_)));
        assert!(matches!(
            parse_frame(&[0, 0xff, 0, 0, 0]),
            Parsed::Invalid(_)
        ));
        assert_eq!(parse_frame(&[0, 0, 0]), Parsed::Incomplete);
    }
}
