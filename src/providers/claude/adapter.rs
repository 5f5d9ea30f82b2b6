//! `ding adapter claude`: Claude Code's grammar and hooks on the neutral
//! adapter kit.
//!
//! The provider is the screen reader (`screen.rs`), the hook plans
//! (`hooks.rs`) and a little memory: what the hooks last said the harness
//! does, when DING last woke it, and whether the hook configuration the
//! adapter relies on is in place (`--settings PATH`, the file `ding
//! compile-agent claude` wrote). That last fact is the kit's remark: `ding
//! status` shows it with every activity reason, and the adapter says it on
//! its own line while nothing is pending.

use std::cell::Cell;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::adapter::compile::IdlePath;
use crate::adapter::hook_config::{missing, read_file};
use crate::adapter::kit::{self, KitOptions};
use crate::adapter::{AgentContext, HookAnswer, HookCall, HookPlan, Provider, Reading};
use crate::core::downlink::Claimed;
use crate::core::protocol::ActivityState;
use crate::pty::wire::Snapshot;

use super::activity::{Heard, HookActivity, combine};
use super::settings::{PROVIDER, WAKE, wanted};
use super::{hooks, screen};

/// Whether the settings file holds what the adapter relies on.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Installed {
    /// No settings file was named (`--settings`).
    Unchecked,
    Complete,
    /// These handlers (event names) are missing.
    Missing(Vec<String>),
    Unreadable(String),
}

pub struct Claude {
    settings: Option<PathBuf>,
    /// How hooks spell `ding` in the settings file.
    program: String,
    /// Whether the wake hook is configured (the native idle path).
    wake: bool,
    installed: Installed,
    heard: HookActivity,
    /// Since when the screen has looked ready after the last hook (set by
    /// the first ready reading, cleared by any other reading or hook).
    ready_since: Cell<Option<Instant>>,
    woken_at: Option<Instant>,
    /// Whether any hook has called since the adapter started.
    fired: bool,
}

impl Claude {
    pub fn new(settings: Option<PathBuf>, program: String, wake: bool) -> Claude {
        let mut claude = Claude {
            settings,
            program,
            wake,
            installed: Installed::Unchecked,
            heard: HookActivity::Unheard,
            ready_since: Cell::new(None),
            woken_at: None,
            fired: false,
        };
        claude.check_settings();
        claude
    }

    fn heard_now(&self, ready_for: Duration) -> Heard {
        Heard {
            activity: self.heard,
            ready_for,
            since_wake: self.woken_at.map(|at| at.elapsed()),
        }
    }

    fn check_settings(&mut self) {
        let Some(path) = &self.settings else {
            self.installed = Installed::Unchecked;
            return;
        };
        self.installed = match read_file(path) {
            Err(err) => Installed::Unreadable(format!("{err:#}")),
            Ok(settings) => {
                let wanted = wanted(&self.program, self.wake);
                let lacking: Vec<String> = missing(&settings, &wanted)
                    .into_iter()
                    .map(|entry| {
                        if entry.handler["asyncRewake"] == true {
                            format!("{}(wake)", entry.event)
                        } else {
                            entry.event.clone()
                        }
                    })
                    .collect();
                if lacking.is_empty() {
                    Installed::Complete
                } else {
                    Installed::Missing(lacking)
                }
            }
        };
    }
}

impl Provider for Claude {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn read_screen(&self, snapshot: &Snapshot) -> Reading {
        screen::read(snapshot).reading()
    }

    fn evidence(&self, screen: Reading) -> Reading {
        let ready_since = match (screen.state, self.ready_since.get()) {
            (ActivityState::Idle, Some(since)) => since,
            (ActivityState::Idle, None) => Instant::now(),
            _ => {
                self.ready_since.set(None);
                return combine(screen, self.heard_now(Duration::ZERO));
            }
        };
        self.ready_since.set(Some(ready_since));
        combine(screen, self.heard_now(ready_since.elapsed()))
    }

    fn on_hook(&mut self, call: &HookCall, agent: &AgentContext) -> HookPlan {
        self.fired = true;
        if call.event == "SessionStart" {
            // A new session: the configuration may have been edited since.
            self.check_settings();
        }
        let planned = hooks::plan(&call.event, &call.payload, agent);
        if let Some(activity) = planned.activity {
            self.heard = activity;
            self.ready_since.set(None);
        }
        planned.plan
    }

    fn on_claimed(
        &mut self,
        call: &HookCall,
        claimed: &Claimed,
        agent: &AgentContext,
    ) -> HookAnswer {
        let answer = hooks::render(&call.event, claimed, agent);
        if call.event == WAKE && answer.exit == 2 {
            self.woken_at = Some(Instant::now());
        }
        answer
    }

    fn check_setup(&self, _harness: Option<&[String]>) -> Result<String, String> {
        let remark = self.remark().unwrap_or_default();
        match self.installed {
            Installed::Complete | Installed::Unchecked => Ok(remark),
            Installed::Missing(_) | Installed::Unreadable(_) => Err(remark),
        }
    }

    fn remark(&self) -> Option<String> {
        let file = || {
            self.settings
                .as_ref()
                .map(|path| path.display().to_string())
                .unwrap_or_default()
        };
        Some(match &self.installed {
            Installed::Unchecked => "claude hooks: not checked (no --settings)".into(),
            Installed::Unreadable(err) => format!("claude hooks: cannot read them: {err}"),
            Installed::Missing(events) => format!(
                "claude hooks MISSING from {}: {} (run `ding compile-agent claude` again)",
                file(),
                events.join(", ")
            ),
            Installed::Complete if !self.fired => format!(
                "claude hooks configured in {}; none has fired since the adapter started",
                file()
            ),
            Installed::Complete => "claude hooks configured and firing".into(),
        })
    }
}

const HELP: &str = "\
Usage: ding adapter claude [--settings PATH] [--ding PROGRAM] [--idle-path native|terminal]

Claude Code's DING adapter, run by the sidecar (docs/providers/claude.md).

  --settings PATH    the hook settings file to check (compile-agent writes it)
  --ding PROGRAM     how its hooks spell ding (default: ding)
  --idle-path PATH   `native` (the wake hook is configured; the default) or
                     `terminal` (it is not)
";

/// `ding adapter claude [OPTIONS]`.
pub fn run(args: Vec<OsString>) -> Result<()> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut settings = None;
    let mut program = "ding".to_string();
    let mut wake = true;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("settings") => settings = Some(PathBuf::from(parser.value()?)),
            Long("ding") => program = parser.value()?.string()?,
            Long("idle-path") => {
                let word = parser.value()?.string()?;
                wake = match IdlePath::parse(&word) {
                    Some(path) => path == IdlePath::Native,
                    None => bail!("--idle-path wants `native` or `terminal`, got `{word}`"),
                };
            }
            Short('h') | Long("help") => {
                print!("{HELP}");
                return Ok(());
            }
            other => bail!("{}", other.unexpected()),
        }
    }
    kit::main(Claude::new(settings, program, wake), KitOptions::from_env)
}
