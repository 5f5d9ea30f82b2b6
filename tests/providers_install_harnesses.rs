//! `scripts/install-harnesses.sh` without the network: a complete install
//! is reused without calling npm, an incomplete one never counts, and
//! `--check` fails with a message that names the script. The install
//! itself (npm, the registry) runs in `make harnesses`, not here.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const SCRIPT: &str = "scripts/install-harnesses.sh";

/// The harnesses a complete install holds, relative to its directory.
const BINARIES: [&str; 4] = [
    "node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    "node_modules/@google/gemini-cli/bundle/gemini.js",
    "node_modules/opencode-linux-x64/bin/opencode",
];

/// Runs the script with `DING_HARNESS_DIR=dir` and a PATH without npm, so
/// any attempt to install fails loudly instead of reaching the network.
fn run(dir: &Path, args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bare_path = dir.join("bin");
    fs::create_dir_all(&bare_path).expect("bin");
    for tool in [
        "bash", "dirname", "uname", "mkdir", "mktemp", "rm", "touch", "mv", "awk",
    ] {
        let link = bare_path.join(tool);
        if !link.exists()
            && let Some(found) = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.exists())
        {
            std::os::unix::fs::symlink(found, link).expect("symlink");
        }
    }
    Command::new("/bin/bash")
        .arg(root.join(SCRIPT))
        .args(args)
        .env("DING_HARNESS_DIR", dir.join("install"))
        .env("PATH", &bare_path)
        .stdin(Stdio::null())
        .output()
        .expect("run the script")
}

fn fake_install(dir: &Path, marker: bool) {
    let install = dir.join("install");
    for binary in BINARIES {
        let path = install.join(binary);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, "#!/bin/sh\n").expect("binary");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    if marker {
        fs::write(install.join(".complete"), "").expect("marker");
    }
}

#[test]
fn check_fails_naming_the_script_when_nothing_is_installed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run(dir.path(), &["--check"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(SCRIPT), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn a_complete_install_is_reused_without_npm_and_its_paths_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    fake_install(dir.path(), true);
    let install = dir.path().join("install");
    let expected = format!(
        "DING_HARNESS_CLAUDE={}\nDING_HARNESS_CODEX={}\nDING_HARNESS_GEMINI={}\nDING_HARNESS_OPENCODE={}\n",
        install.join(BINARIES[0]).display(),
        install.join(BINARIES[1]).display(),
        install.join(BINARIES[2]).display(),
        install.join(BINARIES[3]).display()
    );
    for args in [&[][..], &["--check"][..]] {
        let output = run(dir.path(), args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "{args:?}"
        );
    }
}

#[test]
fn an_install_without_its_completion_marker_does_not_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    fake_install(dir.path(), false);
    assert!(!run(dir.path(), &["--check"]).status.success());
    // Installing would need npm, which this PATH lacks: it says so and
    // fails, and touches nothing that is already there.
    let output = run(dir.path(), &[]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("npm"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(dir.path().join("install").join(BINARIES[0]).exists());
}

#[test]
fn a_marked_install_missing_any_harness_does_not_count() {
    for missing in BINARIES {
        let dir = tempfile::tempdir().expect("tempdir");
        fake_install(dir.path(), true);
        fs::remove_file(dir.path().join("install").join(missing)).expect("remove");
        let output = run(dir.path(), &["--check"]);
        assert!(!output.status.success(), "{missing}");
        assert!(output.stdout.is_empty(), "{missing}");
    }
}
