//! The inbox's files as the model knows them: seen, told, archived, and
//! the liveness check over them.

use super::*;

impl World {
    pub(super) fn names_in(&self, text: &str) -> Vec<String> {
        self.files
            .keys()
            .filter(|name| text.contains(name.as_str()))
            .cloned()
            .collect()
    }

    pub(super) fn seen(&mut self, name: &str, how: Path) {
        let Some(file) = self.files.get_mut(name) else {
            return;
        };
        file.seen += 1;
        file.in_prompt |= matches!(how, Path::Typed | Path::Queued);
        file.told = true;
        let seen = file.seen;
        self.to_archive.push(name.to_string());
        // HARD-22: a sidecar killed between the PTY write and the journal
        // write rings that write's files again, once
        // (docs/vrs/01-ding/requirements.md); no other repeat is allowed.
        let may_repeat = self.ding.may_repeat.get(name).copied().unwrap_or(0);
        if seen > 1 && seen <= 1 + may_repeat {
            self.cost_delivered_again(name);
        }
        if seen > 1 + may_repeat {
            self.violate(
                Class::Twice,
                format!("{name} reached the model {seen} times, last {how}"),
            );
        }
    }

    /// The context begins again: what the model read and has not
    /// archived is gone from it, and it may be told of it again. (A file
    /// it no longer knows of is not archived at the next turn's end.)
    pub(super) fn forget_context(&mut self) {
        let mut kept = Vec::new();
        let mut forgotten = Vec::new();
        for name in std::mem::take(&mut self.to_archive) {
            let Some(file) = self.files.get_mut(&name) else {
                continue;
            };
            if file.archived {
                kept.push(name);
            } else {
                file.seen = 0;
                file.in_prompt = false;
                file.told = false;
                forgotten.push(name);
            }
        }
        self.to_archive = kept;
        for name in forgotten {
            self.cost_window_opens(&name, false);
        }
    }

    /// A compaction: the text of a file the model read only in what a
    /// hook injected is gone, so saying it again is no repeat; the model
    /// was still told of it.
    pub(super) fn compact_context(&mut self) {
        for name in &self.to_archive {
            if let Some(file) = self.files.get_mut(name)
                && !file.archived
                && !file.in_prompt
            {
                file.seen = 0;
            }
        }
    }

    /// The model read what it saw during the turn and archives it.
    pub(super) fn archive_seen(&mut self) {
        let now = Time::from_millis(self.now);
        for name in std::mem::take(&mut self.to_archive) {
            let Some(file) = self.files.get_mut(&name) else {
                continue;
            };
            if file.archived {
                continue;
            }
            file.archived = true;
            let message = MessageName::new(&name).expect("name");
            self.engine
                .handle_input(ToEngine::InboxRemoved(message), now);
        }
        self.carry_out_engine();
    }

    pub(super) fn check_settled(&mut self) {
        if self.settled_at.is_none()
            && self.now >= self.scenario.quiet_at_ms
            && self.harness.is_quiet()
            && self.order.is_idle()
        {
            self.settled_at = Some(self.now);
            self.note("the person is quiet and the harness idle".into());
        }
    }

    pub(super) fn check_liveness(&mut self) {
        let Some(settled) = self.settled_at else {
            let view = self.harness.view();
            return self.violate(
                Class::Liveness,
                format!("the harness never sat quiet after the person did: {view:?}"),
            );
        };
        let late: Vec<String> = self
            .files
            .iter()
            .filter(|(_, file)| {
                !file.told && settled.max(file.arrived_ms) + LIVENESS_BOUND_MS <= self.now
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in late {
            let raced = self.raced.contains(&name);
            let detail =
                format!("{name} never reached the model, the harness idle since {settled} ms");
            self.record(Class::Liveness, detail, raced);
        }
    }
}
