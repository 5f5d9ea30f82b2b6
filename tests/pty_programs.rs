//! Real programs in the PTY: readline's bracketed paste in bash, the Python
//! REPL, and snapshots that match what a program drew.

mod support;

use ding::pty::transport::WireStep;
use ding::pty::wire::{Colour, SendIfReply};
use support::{Host, write};

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

fn bash() -> Host {
    let host = Host::start(
        &[
            "--env",
            "PS1=$ ",
            "--env",
            "TERM=xterm-256color",
            "--env",
            "INPUTRC=/dev/null",
            "--env",
            "HISTFILE=/dev/null",
        ],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    // Readline turns bracketed paste on when it draws the prompt.
    host.wait_screen(|s| s.rows[0].starts_with('$') && s.bracketed_paste);
    host
}

fn paste(text: &[u8]) -> Vec<u8> {
    [PASTE_START, text, PASTE_END].concat()
}

#[test]
fn bash_bracketed_paste_arrives_as_one_literal_line() {
    let host = bash();
    assert!(host.client().status().expect("status").bracketed_paste);
    let (identity, revision) = host.identity();
    // A CR inside a paste is text, not Enter: nothing runs until the Return
    // that the transport sends after the paste and a delay.
    let notice = b"echo 'mail: 0001.md' \r echo 'second line'";
    let reply = host
        .client()
        .send_if(
            &identity,
            revision,
            &[write(&paste(notice)), WireStep::WaitMs(50)],
        )
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    let pasted = host.wait_screen(|s| s.rows.iter().any(|row| row.contains("echo 'second line'")));
    assert!(
        !pasted.rows.iter().any(|row| row == "mail: 0001.md"),
        "the CR inside the paste executed the line: {:?}",
        pasted.rows
    );
    host.client().send(&[write(b"\r")]).expect("enter");
    let ran = host.wait_screen(|s| s.rows.iter().any(|row| row == "second line"));
    let first = ran
        .rows
        .iter()
        .filter(|row| *row == "mail: 0001.md")
        .count();
    assert_eq!(first, 1, "the pasted command ran once: {:?}", ran.rows);
}

/// Why the sidecar must escape notices: an `ESC[201~` inside the payload
/// ends the paste early, so everything after it is typed as keys. Here the
/// CR after the early end marker executes a command although the transport
/// never sent a Return outside a paste. The notice builder must therefore
/// escape ESC, every other control and every line break (spec §8) before
/// wrapping text in paste markers.
#[test]
fn early_paste_end_marker_turns_the_rest_into_keystrokes() {
    let host = bash();
    let hostile = b"echo pasted-part\x1b[201~\recho smuggled";
    host.client().send(&[write(&paste(hostile))]).expect("send");
    let screen = host.wait_screen(|s| s.rows.iter().any(|row| row == "pasted-part"));
    assert!(
        screen.rows.iter().any(|row| row == "pasted-part"),
        "the smuggled CR ran the first command: {:?}",
        screen.rows
    );
}

#[test]
fn python_repl_evaluates_a_sent_line() {
    let host = Host::start(
        &["--env", "PYTHONSTARTUP=", "--env", "PYTHON_BASIC_REPL=1"],
        &["python3", "-i", "-q"],
    );
    host.wait_screen(|s| s.rows.iter().any(|row| row.starts_with(">>>")));
    let (identity, revision) = host.identity();
    let reply = host
        .client()
        .send_if(&identity, revision, &[write(b"print(6 * 7)\r")])
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    // The answer, then a fresh prompt with the cursor after it.
    // (The prompt may arrive in pieces, so wait for the cursor too.)
    let screen = host.wait_screen(|s| {
        s.rows.windows(2).any(|w| w[0] == "42" && w[1] == ">>>") && s.cursor.col == 4
    });
    let answer = screen.rows.iter().position(|row| row == "42").expect("42");
    assert_eq!(screen.cursor.row as usize, answer + 1);
}

#[test]
fn snapshot_matches_styles_the_program_drew() {
    let script = "printf 'typed \\033[2mdim placeholder\\033[0m\\n\\033[1;32mok\\033[0m \\033[7mSEL\\033[0m \\033[38;2;1;2;3mrgb\\033[0m'; exec cat";
    let host = Host::start(&["--size", "60x10"], &["sh", "-c", script]);
    let snap = host.wait_screen(|s| s.rows[1].contains("rgb"));
    assert_eq!(snap.size.cols, 60);
    assert_eq!(snap.rows.len(), 10);
    assert_eq!(snap.rows[0], "typed dim placeholder");
    assert_eq!(snap.rows[1], "ok SEL rgb");
    let find = |text: &str| {
        snap.runs
            .iter()
            .find(|run| run.text == text)
            .unwrap_or_else(|| panic!("no run {text:?} in {:?}", snap.runs))
            .clone()
    };
    let dim = find("dim placeholder");
    assert!(dim.dim && !dim.bold);
    assert_eq!((dim.row, dim.col), (0, 6));
    let ok = find("ok");
    assert!(ok.bold);
    assert_eq!(ok.fg, Some(Colour::Index(2)));
    assert!(find("SEL").inverse);
    assert_eq!(find("rgb").fg, Some(Colour::Rgb("#010203".into())));
    assert!(
        !snap.runs.iter().any(|run| run.text.contains("typed")),
        "default-styled text is not a run"
    );
}

#[test]
fn snapshot_rows_keep_a_trailing_no_break_space_the_program_drew() {
    // Some composers draw their empty prompt as a glyph plus U+00A0; only
    // the spaces of empty cells are padding.
    let script = "printf '>\\302\\240\\nplain  \\n\\302\\240\\302\\240'; exec cat";
    let host = Host::start(&["--size", "40x5"], &["sh", "-c", script]);
    let snap = host.wait_screen(|s| s.rows[2].contains('\u{a0}'));
    assert_eq!(snap.rows[0], ">\u{a0}");
    assert_eq!(snap.rows[1], "plain", "trailing spaces are padding");
    assert_eq!(snap.rows[2], "\u{a0}\u{a0}");
}

/// The PTY host is the program's terminal, attached or not: a cursor
/// position or device attributes query is answered once, from its own
/// screen, and an attached client's terminal never sees the query (so it
/// cannot answer a second time, as a person's keys).
#[test]
fn terminal_queries_are_answered_once_by_the_host() {
    // Moves the cursor, asks where it is and what the terminal is, and
    // records every byte it reads in `out`.
    let host = Host::start(
        &[],
        &[
            "sh",
            "-c",
            "stty raw -echo; printf 'READY\\033[3;5H\\033[6n\\033[c'; exec cat > out",
        ],
    );
    let out = host.wait_file("out", 13);
    assert_eq!(out, b"\x1b[3;5R\x1b[?1;2c");

    // Asks once a key came, with a client attached.
    let asked = Host::start(
        &[],
        &[
            "sh",
            "-c",
            "stty raw -echo; printf READY; head -c1 >/dev/null; printf 'Q\\033[6n'; exec cat > out",
        ],
    );
    asked.wait_screen(|s| s.rows[0].contains("READY"));
    let (mut attached, _) = asked.client().attach().expect("attach");
    attached
        .set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .expect("timeout");
    let mut typist = support::Typist::new(&asked);
    typist.type_bytes(b"x");
    asked.wait_screen(|s| s.rows[0].contains("READYQ"));
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = std::io::Read::read(&mut attached, &mut chunk) {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&chunk[..n]);
    }
    assert!(seen.windows(1).any(|w| w == b"Q"), "{seen:?}");
    assert!(
        !seen.windows(4).any(|w| w == b"\x1b[6n"),
        "no query reaches an attached client: {seen:?}"
    );
    // One answer, the host's: the cursor after `READYQ`.
    assert_eq!(asked.wait_file("out", 6), b"\x1b[1;7R");
}
