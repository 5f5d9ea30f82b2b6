//! Whether a harness's hook settings file still holds the handlers a
//! provider's adapter relies on: the remark `ding status` shows with every
//! activity reason, and the verdict of `ding check --adapters`.
//!
//! Shared by every provider whose hooks live in one settings file of the
//! common shape (`hook_config`); the provider says which file and which
//! handlers, the shell reads the file (a provider reads no file itself).

use std::path::PathBuf;

use super::hook_config::{HookEntry, missing};

/// A hook settings file a provider's setup check reads, as the process
/// shell read it ([`hook_config::read_file`](super::hook_config::read_file): a missing file is an empty
/// object; `Err` says why it could not be read).
#[derive(Clone, Debug, PartialEq)]
pub struct SettingsRead {
    pub path: std::path::PathBuf,
    pub settings: Result<serde_json::Value, String>,
}

/// What the settings file holds of what the adapter relies on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installed {
    /// No settings file was named (`--settings`).
    Unchecked,
    /// Named, and not read yet (the shell reads it at start).
    NotRead,
    Complete,
    /// These handlers (as the provider labels them) are missing.
    Missing(Vec<String>),
    Unreadable(String),
}

/// One provider's check of its settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsCheck {
    provider: &'static str,
    file: Option<PathBuf>,
    installed: Installed,
    /// The program the hooks run, and whether it was found where they run
    /// (`None`: not looked up yet).
    program: String,
    program_found: Option<bool>,
}

impl SettingsCheck {
    /// The check of `provider`'s hooks in `file`, whose commands run
    /// `program`.
    pub fn new(provider: &'static str, file: Option<PathBuf>, program: String) -> SettingsCheck {
        let installed = if file.is_some() {
            Installed::NotRead
        } else {
            Installed::Unchecked
        };
        SettingsCheck {
            provider,
            file,
            installed,
            program,
            program_found: None,
        }
    }

    /// The program the hooks run.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// Whether the shell found [`SettingsCheck::program`].
    pub fn on_program(&mut self, found: bool) {
        self.program_found = Some(found);
    }

    /// Hooks in place that cannot run: what to say of them.
    fn cannot_run(&self) -> Option<String> {
        (self.program_found == Some(false)).then(|| {
            format!(
                "{} hooks cannot run: `{}` is not found where the harness runs them, so they do nothing (run `ding compile-agent {}` again with the ding you use, or name it with --ding PATH)",
                self.provider, self.program, self.provider
            )
        })
    }

    /// The file to read, if one was named.
    pub fn files(&self) -> Vec<PathBuf> {
        self.file.iter().cloned().collect()
    }

    /// Takes in the file as the shell read it: which of `wanted` it lacks,
    /// each labelled by `label` for the remark.
    pub fn read(
        &mut self,
        read: &[SettingsRead],
        wanted: &[HookEntry],
        label: impl Fn(&HookEntry) -> String,
    ) {
        let Some(read) = read
            .iter()
            .find(|read| Some(&read.path) == self.file.as_ref())
        else {
            return;
        };
        self.installed = match &read.settings {
            Err(err) => Installed::Unreadable(err.clone()),
            Ok(settings) => {
                let lacking: Vec<String> =
                    missing(settings, wanted).into_iter().map(&label).collect();
                if lacking.is_empty() {
                    Installed::Complete
                } else {
                    Installed::Missing(lacking)
                }
            }
        };
    }

    #[cfg(test)]
    pub fn installed(&self) -> &Installed {
        &self.installed
    }

    /// `ding check --adapters`: the remark, as a pass or a failure. The
    /// check runs an adapter of its own, which no hook calls: whether the
    /// running agent's hooks fire is for `ding status` to say.
    pub fn check_setup(&self) -> Result<String, String> {
        if let Some(why) = self.cannot_run() {
            return Err(why);
        }
        let remark = match self.installed {
            Installed::Complete => format!(
                "{} hooks configured in {} (whether they fire: `ding status`)",
                self.provider,
                self.file
                    .as_ref()
                    .map(|path| path.display().to_string())
                    .unwrap_or_default()
            ),
            _ => self.remark(false),
        };
        match self.installed {
            Installed::Complete | Installed::Unchecked => Ok(remark),
            Installed::Missing(_) | Installed::Unreadable(_) | Installed::NotRead => Err(remark),
        }
    }

    /// What `ding status` says of the hooks; `fired`: whether any hook has
    /// called since the adapter started.
    pub fn remark(&self, fired: bool) -> String {
        // A hook that fired found its program, whatever the look-up said.
        if let Some(why) = self.cannot_run().filter(|_| !fired) {
            return why;
        }
        let provider = self.provider;
        let file = || {
            self.file
                .as_ref()
                .map(|path| path.display().to_string())
                .unwrap_or_default()
        };
        match &self.installed {
            Installed::Unchecked => format!("{provider} hooks: not checked (no --settings)"),
            Installed::NotRead => format!("{provider} hooks: {} not read yet", file()),
            Installed::Unreadable(err) => format!("{provider} hooks: cannot read them: {err}"),
            Installed::Missing(events) => format!(
                "{provider} hooks MISSING from {}: {} (run `ding compile-agent {provider}` again)",
                file(),
                events.join(", ")
            ),
            Installed::Complete if !fired => format!(
                "{provider} hooks configured in {}; none has fired since the adapter started",
                file()
            ),
            Installed::Complete => format!("{provider} hooks configured and firing"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(event: &str) -> HookEntry {
        HookEntry {
            event: event.into(),
            matcher: None,
            handler: json!({"type": "command", "command": format!("ding hook h {event}")}),
        }
    }

    #[test]
    fn the_check_follows_the_file_as_read() {
        let path = PathBuf::from("/p/settings.json");
        let mut check = SettingsCheck::new("h", Some(path.clone()), "ding".into());
        assert_eq!(
            check.check_setup(),
            Err("h hooks: /p/settings.json not read yet".into())
        );
        let wanted = [entry("A"), entry("B")];
        let label = |entry: &HookEntry| entry.event.clone();
        let only_a = json!({"hooks": {"A": [{"hooks": [wanted[0].handler.clone()]}]}});
        check.read(
            &[SettingsRead {
                path: path.clone(),
                settings: Ok(only_a),
            }],
            &wanted,
            label,
        );
        assert_eq!(
            check.remark(true),
            "h hooks MISSING from /p/settings.json: B (run `ding compile-agent h` again)"
        );
        assert!(check.check_setup().is_err());
        check.read(
            &[SettingsRead {
                path: path.clone(),
                settings: Err("not JSON".into()),
            }],
            &wanted,
            label,
        );
        assert_eq!(check.remark(true), "h hooks: cannot read them: not JSON");
        // Another file's reading says nothing about this one.
        check.read(
            &[SettingsRead {
                path: PathBuf::from("/other"),
                settings: Ok(json!({})),
            }],
            &wanted,
            label,
        );
        assert_eq!(check.installed(), &Installed::Unreadable("not JSON".into()));
        // Complete: the check says where, and leaves firing to the status.
        check.read(
            &[SettingsRead {
                path: path.clone(),
                settings: Ok(json!({"hooks": {
                    "A": [{"hooks": [wanted[0].handler.clone()]}],
                    "B": [{"hooks": [wanted[1].handler.clone()]}],
                }})),
            }],
            &wanted,
            label,
        );
        assert_eq!(
            check.check_setup(),
            Ok("h hooks configured in /p/settings.json (whether they fire: `ding status`)".into())
        );
        assert_eq!(check.remark(true), "h hooks configured and firing");
        let unchecked = SettingsCheck::new("h", None, "ding".into());
        assert_eq!(
            unchecked.check_setup(),
            Ok("h hooks: not checked (no --settings)".into())
        );
    }

    #[test]
    fn a_hook_program_that_is_not_found_is_said_until_a_hook_fires() {
        let mut check = SettingsCheck::new("h", None, "/gone/ding".into());
        assert!(!check.remark(false).contains("cannot run"));
        check.on_program(false);
        let said = check.remark(false);
        assert!(
            said.contains("h hooks cannot run: `/gone/ding` is not found"),
            "{said}"
        );
        assert!(check.check_setup().is_err());
        assert!(!check.remark(true).contains("cannot run"), "a hook fired");
        check.on_program(true);
        assert!(check.check_setup().is_ok());
    }
}
