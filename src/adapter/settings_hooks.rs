//! What the adapter of a harness whose hooks live in one settings file
//! keeps (the kit's part, written once for every such provider): the
//! check of that file, and the memory of what its hooks last said (the
//! kit's `HeardHooks`).
//!
//! A provider holds one and hands it to the kit through
//! [`super::Provider::settings_hooks`]; the kit then answers the setup
//! questions (which file to read, what it lacks, whether the hooks' program
//! is found, the remark) from it. What each hook event means stays the
//! provider's.

use std::ops::{Deref, DerefMut};
use std::path::PathBuf;

use super::heard_hooks::HeardHooks;
use super::hook_config::HookEntry;
use super::settings_check::SettingsCheck;
use super::settings_check::SettingsRead;

pub struct SettingsHooks {
    settings: SettingsCheck,
    /// The handlers the adapter relies on, and how the remark names each.
    wanted: Vec<HookEntry>,
    label: fn(&HookEntry) -> String,
    /// What the hooks last said (the kit's `HeardHooks`, whose methods a
    /// `SettingsHooks` answers too).
    heard: HeardHooks,
}

impl Deref for SettingsHooks {
    type Target = HeardHooks;

    fn deref(&self) -> &HeardHooks {
        &self.heard
    }
}

impl DerefMut for SettingsHooks {
    fn deref_mut(&mut self) -> &mut HeardHooks {
        &mut self.heard
    }
}

impl SettingsHooks {
    /// `provider`'s hooks in `file` (if one was named), whose commands run
    /// `program`; `wanted` are the handlers the adapter relies on, each
    /// named in the remark by `label`.
    pub fn new(
        provider: &'static str,
        file: Option<PathBuf>,
        program: String,
        wanted: Vec<HookEntry>,
        label: fn(&HookEntry) -> String,
    ) -> SettingsHooks {
        SettingsHooks {
            settings: SettingsCheck::new(provider, file, program),
            wanted,
            label,
            heard: HeardHooks::default(),
        }
    }

    /// The settings file to read, if one was named.
    pub fn files(&self) -> Vec<PathBuf> {
        self.settings.files()
    }

    /// Takes in the settings file as the shell read it.
    pub fn on_read(&mut self, read: &[SettingsRead]) {
        self.settings.read(read, &self.wanted, self.label);
    }

    /// The program the hooks run.
    pub fn program(&self) -> &str {
        self.settings.program()
    }

    /// Whether the shell found [`SettingsHooks::program`].
    pub fn on_program(&mut self, found: bool) {
        self.settings.on_program(found);
    }

    /// `ding check --adapters`'s verdict on the hooks.
    pub fn check_setup(&self) -> Result<String, String> {
        self.settings.check_setup()
    }

    /// What `ding status` says of the hooks.
    pub fn remark(&self) -> String {
        self.settings.remark(self.heard.fired())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_settings_file_the_remark_says_so() {
        let hooks = SettingsHooks::new("h", None, "ding".into(), Vec::new(), |entry| {
            entry.event.clone()
        });
        assert!(
            hooks.remark().ends_with("(no --settings)"),
            "{}",
            hooks.remark()
        );
    }
}
