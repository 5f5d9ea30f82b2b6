//! `kdl-writer`: the one writer of generated declarations
//! (`ding::decl::Draft::render`, what `ding compile-agent` writes).
//!
//! The input, split at NUL bytes, fills the fields in turn: a comment, the
//! program, its arguments up to an empty piece, the working directory, the
//! inbox, then variable name and value pairs up to an empty piece, then the
//! adapter argv. Invariants:
//!
//! * the rendering reads back through the real parser as exactly the
//!   draft: one agent, every field equal (`Draft::check_text`), so no value
//!   can declare a second agent or change another field; or the checker
//!   refuses it with a diagnostic (a value past one of its bounds, such as
//!   more than 512 `{` in strings), and `compile-agent` writes nothing;
//! * it holds no character that KDL or a terminal treats as a line break
//!   or control but the LF that ends each line: only plain characters, LF
//!   and the backslashes of escapes.

use std::path::PathBuf;

use ding::decl::{Draft, is_valid_env_name};
use ding::escape::is_plain;

use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "kdl-writer",
    check,
    tokens: &[
        "\u{0}",
        "\r",
        "\u{b}",
        "\u{c}",
        "\u{85}",
        "\u{2028}",
        "\u{2029}",
        "\u{1b}]52;c;x\u{7}",
        "\u{202e}",
        "\"",
        "\\",
        "}",
        "{",
        "agent \"evil\" { command \"sh\" }",
        "// ",
        "/*",
        "#",
        "$ST_HOOKS",
        "HOME",
    ],
    bounds: &[],
};

fn check(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(input);
    let mut pieces = text.split('\0').map(str::to_string);
    let mut next = || pieces.next().unwrap_or_default();
    let comment = next();
    let mut command = vec![format!("h{}", next())];
    loop {
        let arg = next();
        if arg.is_empty() {
            break;
        }
        command.push(arg);
    }
    let cwd = PathBuf::from(format!("/s/{}", next()));
    let inbox = PathBuf::from(format!("/s/{}", next()));
    let mut env = Vec::new();
    loop {
        let name = next();
        if name.is_empty() {
            break;
        }
        let value = next();
        // The checker refuses other names with a diagnostic of its own;
        // compile-agent refuses them before it writes anything.
        if is_valid_env_name(&name) && !env.iter().any(|(n, _)| *n == name) {
            env.push((name, value));
        }
    }
    let adapter = vec![format!("a{}", next()), next()];
    let draft = Draft {
        name: "worker".into(),
        comments: vec![comment],
        command,
        cwd: Some(cwd),
        inbox: Some(inbox),
        env,
        adapter: Some(adapter),
    };
    let rendered = draft.render();
    let outcome = match draft.check_text(&rendered, std::path::Path::new("/s")) {
        Ok(_) => "read-back",
        // The checker may refuse a value outright (more than 512 `{` in
        // strings, say): compile-agent then writes nothing. What must
        // never happen is a file that checks but says something else.
        Err(refused) if refused.starts_with("the compiled declaration does not check") => {
            assert!(!refused.contains(" agents"), "{refused}");
            "refused"
        }
        Err(refused) => panic!("the rendering does not read back: {refused}\n{rendered}"),
    };
    for c in rendered.chars() {
        assert!(
            c == '\n' || c == '\\' || is_plain(c),
            "{c:?} in\n{rendered}"
        );
    }
    format!("{outcome}:lines:{}", rendered.lines().count().min(16))
}
