//! What every provider's agent compiler shares: the request `ding
//! compile-agent PROVIDER` parses, the declaration it prints, the adapter
//! launcher names `ding hooks install` writes, and the rule that keeps
//! secrets out of declarations.
//!
//! A provider's compiler (in its room) turns a [`CompileRequest`] into a
//! [`Compiled`]: the agent declaration (a [`Draft`], with the literal
//! `$ST_HOOKS/PROVIDER-ding-adapter` adapter command) and the harness
//! configuration files it merged (with [`super::hook_config`]).

use std::path::PathBuf;

use crate::decl::Draft;

/// The adapter launcher's file name for `provider`, as `ding hooks
/// install` writes it and a declaration names it.
pub fn launcher_name(provider: &str) -> String {
    format!("{provider}-ding-adapter")
}

/// The adapter command a declaration names: the launcher in `$ST_HOOKS`,
/// then `args`. `$ST_HOOKS` stays literal; the runtime expands it at spawn.
pub fn adapter_command(provider: &str, args: &[String]) -> Vec<String> {
    let mut argv = vec![format!("$ST_HOOKS/{}", launcher_name(provider))];
    argv.extend_from_slice(args);
    argv
}

/// `program` as one word of a `sh -c` command line: written as is when it
/// is plainly safe, else single-quoted. Hook commands that run `ding` are
/// written with it.
pub fn shell_word(program: &str) -> String {
    let safe = !program.is_empty()
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c));
    if safe {
        program.to_string()
    } else {
        format!("'{}'", program.replace('\'', "'\\''"))
    }
}

/// A shell hook command that runs `program hook ARGS` and never fails the
/// harness: where `program` cannot be found in the environment the harness
/// runs its hooks in, it exits 0 having printed nothing, so the harness
/// carries on as if the inbox were empty (a harness may block the person's
/// prompt on a hook that exits non-zero with text on stderr, as `sh` does
/// for a command it cannot find). Otherwise `ding hook` runs in the shell's
/// place and its exit is the hook's (a provider may mean an exit 2).
pub fn guarded_hook_command(program: &str, args: &str) -> String {
    let program = shell_word(program);
    format!("command -v {program} >/dev/null 2>&1 && exec {program} hook {args}; exit 0")
}

/// What `ding compile-agent PROVIDER` was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileRequest {
    /// The agent's name in the declaration.
    pub agent: String,
    /// The harness's working directory (absolute).
    pub cwd: PathBuf,
    /// The inbox root; `None`: the declaration's default (`inbox/NAME`).
    pub inbox: Option<PathBuf>,
    /// The harness argv; empty: the provider's installed program.
    pub command: Vec<String>,
    /// Variables for the harness (never secrets: see [`is_secret_name`]).
    pub env: Vec<(String, String)>,
    /// Where the provider's hook configuration goes; `None`: its default,
    /// under `cwd`. Relative paths are under `cwd`.
    pub settings: Option<PathBuf>,
    /// How the hooks spell `ding` (a path by default: the `ding` that
    /// compiles, so that it resolves wherever the harness runs its hooks;
    /// a name is looked up on the harness's `PATH`).
    pub ding: String,
    /// How idle work reaches the harness.
    pub idle: IdlePath,
}

/// How work reaches a harness that sits idle (hooks only fire at turn
/// edges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdlePath {
    /// The provider's own way to start a turn with no terminal input, if it
    /// has one (else the terminal).
    Native,
    /// Terminal input under a fresh idle lease only.
    Terminal,
}

impl IdlePath {
    /// The value of an `--idle-path` option, or why it is none.
    pub fn parse(text: &str) -> anyhow::Result<IdlePath> {
        match text {
            "native" => Ok(IdlePath::Native),
            "terminal" => Ok(IdlePath::Terminal),
            _ => anyhow::bail!("--idle-path wants `native` or `terminal`, got `{text}`"),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            IdlePath::Native => "native",
            IdlePath::Terminal => "terminal",
        }
    }
}

impl CompileRequest {
    /// The request `ding compile-agent PROVIDER --name worker --cwd CWD`
    /// makes, for tests.
    #[cfg(test)]
    pub(crate) fn example(cwd: &std::path::Path) -> CompileRequest {
        CompileRequest {
            agent: "worker".into(),
            cwd: cwd.to_path_buf(),
            inbox: None,
            command: Vec::new(),
            env: Vec::new(),
            settings: None,
            ding: crate::ding_binary::ding_program(),
            idle: IdlePath::Native,
        }
    }

    /// The settings file: `settings`, or `default` under the cwd.
    pub fn settings_path(&self, default: &str) -> PathBuf {
        match &self.settings {
            Some(path) => self.cwd.join(path),
            None => self.cwd.join(default),
        }
    }

    /// The `--ding PATH` options of the adapter's (or launcher's) command:
    /// none when `ding` is the one running now, since that path is the
    /// adapter's own default.
    pub fn ding_options(&self) -> Vec<String> {
        if self.ding == crate::ding_binary::ding_program() {
            return Vec::new();
        }
        vec!["--ding".to_string(), self.ding.clone()]
    }
}

/// A file a compiler wrote (or found already right).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub path: PathBuf,
    /// What it holds, for people ("hook configuration").
    pub what: String,
    /// Whether it changed (`false`: it was already as wanted).
    pub changed: bool,
}

/// A compiler's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub declaration: Draft,
    pub written: Vec<Written>,
}

/// Whether an environment variable's name says it holds a secret (a key,
/// token, password, passphrase, personal access token or credential): such
/// values never go into a declaration, which is plain text and whose
/// values once reached `ps`. The harness inherits them from the
/// environment of `ding up` instead ([`secret_refusal`] says how).
///
/// The name is split into words at every character that is not a letter
/// or digit (`GH_PAT` is `GH`, `PAT`); a word that is a secret word, or
/// that ends with one of the words people glue onto a prefix
/// (`PGPASSWORD`, `DBPASS`, `MYAPIKEY`), makes the name a secret. Short
/// words that are everyday words too (`PAT`, `PASS`, `PWD`, `PW`) count
/// only as whole words or at the end of a word: `PATH`, `PASSTHROUGH`,
/// `COMPASS_DIR` stay plain, `OLDPWD` and `PWD` (directories) too.
pub fn is_secret_name(name: &str) -> bool {
    /// Words that are secrets wherever they appear as a whole word, or at
    /// the end of one.
    const SECRET_WORDS: [&str; 14] = [
        "KEY",
        "KEYS",
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "APIKEY",
        "COOKIE",
    ];
    /// Short words that are secrets only as whole words (`DB_PASS`,
    /// `GH_PAT`), or glued at the end of a longer word for `PASS`
    /// (`DBPASS`), never inside one (`PATH`, `PASSTHROUGH`).
    const SHORT_WORDS: [&str; 3] = ["PAT", "PASS", "PW"];
    /// Plain words that end with a secret word.
    const PLAIN_WORDS: [&str; 6] = ["MONKEY", "TURKEY", "HOCKEY", "JOCKEY", "COMPASS", "BYPASS"];
    name.to_ascii_uppercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty() && !PLAIN_WORDS.contains(word))
        .any(|word| {
            SECRET_WORDS.iter().any(|secret| {
                word == *secret || (word.ends_with(secret) && word.len() > secret.len() + 1)
            }) || SHORT_WORDS.contains(&word)
                || (word.ends_with("PASS") && word.len() > 5)
        })
}

/// Why a secret-looking variable `name` is refused, and how to pass its
/// value from the environment instead.
pub fn secret_refusal(name: &str) -> String {
    format!(
        "--env {name}: that looks like a secret, and a declaration is plain text, no place for one\nhint: export {name} where you run `ding up` (for a systemd unit, in its Environment= or EnvironmentFile=); the harness inherits every variable of that environment, so the declaration never needs the value"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_told_apart_by_their_words() {
        for secret in [
            "HARNESS_API_KEY",
            "MODEL_API_KEY",
            "GITHUB_TOKEN",
            "harness_auth_token",
            "DB_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "MY_APIKEY",
            "PGPASSWORD",
            "DB_PASS",
            "DBPASS",
            "GH_PAT",
            "GITLAB_PAT",
            "SMTP_PW",
            "MYSQL_PASSPHRASE",
            "NPM_TOKENS",
            "SSH_KEYS",
            "SESSION_COOKIE",
            "MYSERVICEKEY",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        for plain in [
            "HOME",
            "PATH",
            "PWD",
            "OLDPWD",
            "MODEL_BASE_URL",
            "AUTHOR",
            "KEYBOARD_LAYOUT",
            "MONKEY",
            "PASSTHROUGH",
            "COMPASS_DIR",
            "BYPASS_PROXY",
            "PATTERN",
            "PATCH_LEVEL",
        ] {
            assert!(!is_secret_name(plain), "{plain}");
        }
    }

    #[test]
    fn a_program_is_quoted_for_the_shell_only_when_it_must_be() {
        assert_eq!(shell_word("ding"), "ding");
        assert_eq!(shell_word("/opt/bin/ding"), "/opt/bin/ding");
        assert_eq!(shell_word("/opt/my tools/ding"), "'/opt/my tools/ding'");
        assert_eq!(shell_word("/opt/it's/ding"), "'/opt/it'\\''s/ding'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn the_adapter_command_names_the_launcher_in_st_hooks_literally() {
        assert_eq!(
            adapter_command("demo", &["--x".into()]),
            ["$ST_HOOKS/demo-ding-adapter", "--x"]
        );
    }
}
