//! Running the examples a document presents as working: its fenced blocks
//! of one info string, and a script run as a user would run it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::sidecar_agent::DING;

/// The doc's fenced blocks with the given info string.
pub fn blocks(doc: &str, info: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for line in doc.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(tag)) if tag.trim() == info => open = Some(String::new()),
            (None, Some(_)) => open = None,
            (Some(block), Some(_)) => {
                out.push(std::mem::take(block));
                open = None;
            }
            (Some(block), None) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// Variables that change how a harness draws its screen, or whether it
/// runs its terminal interface at all (a CI machine sets `CI=true`): an
/// example runs as in a person's terminal, where none is set, and says
/// itself when it sets one.
const DRAWING_VARIABLES: [&str; 5] = ["CI", "GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TERM"];

/// Runs `script` with bash in `dir` (`HOME` there too), with `ding` and
/// then `path` before the inherited `PATH`, no `ST_HOOKS` and none of
/// [`DRAWING_VARIABLES`].
pub fn run_script(script: &str, dir: &Path, path: &[&Path]) -> Output {
    let mut dirs = vec![Path::new(DING).parent().expect("bin dir").to_path_buf()];
    dirs.extend(path.iter().map(|dir| dir.to_path_buf()));
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    dirs.extend(std::env::split_paths(&inherited));
    let mut command = Command::new("bash");
    for name in DRAWING_VARIABLES {
        command.env_remove(name);
    }
    command
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .env("HOME", dir)
        // A scratch `mktemp -d` of the example is the test's to remove.
        .env("TMPDIR", dir)
        .env_remove("ST_HOOKS")
        .stdin(Stdio::null())
        .output()
        .expect("run bash")
}

/// Runs the `sh` block of the repository file `doc` that contains
/// `containing`, as a user would, in a fresh home with `stand_ins`
/// (program name, script) on `PATH`; requires success; returns its stdout.
pub fn run_example(doc: &str, containing: &str, stand_ins: &[(&str, &str)]) -> String {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc)).expect(doc);
    let script = blocks(&text, "sh")
        .into_iter()
        .find(|block| block.contains(containing))
        .unwrap_or_else(|| panic!("{doc} has no example with {containing}"));
    let home = tempfile::tempdir().expect("home");
    let bin = home.path().join("bin");
    fs::create_dir(&bin).expect("bin");
    for (program, body) in stand_ins {
        let path = bin.join(program);
        fs::write(&path, body).expect("stand-in");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let output = run_script(&script, home.path(), &[&bin]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the example failed:\n{script}\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}
