//! A driver for the sans-IO engine used by the fixture and simulation tests:
//! feeds inputs, drains outputs after each, and keeps what they said.

use ding::core::config::{EngineConfig, Policy};
use ding::core::decision::Record;
use ding::core::downlink::Downlink;
use ding::core::engine::{Engine, Input, Output, Send, SendIf};
use ding::core::identity::Identity;
use ding::core::journal::Journal;
use ding::core::message::MessageName;
use ding::core::time::Time;

/// Everything the engine emitted since the last `take`.
#[derive(Debug, Default)]
pub struct Emitted {
    pub send_ifs: Vec<SendIf>,
    pub sends: Vec<Send>,
    pub spawns: usize,
    pub journals: Vec<Journal>,
    pub records: Vec<Record>,
    pub status_changes: usize,
    /// Lines for the adapter's stdin, in order.
    pub downlinks: Vec<Downlink>,
}

impl Emitted {
    /// The message lists of every transaction, in emission order.
    pub fn rang(&self, order: &[Output]) -> Vec<Vec<String>> {
        order
            .iter()
            .filter_map(|output| match output {
                Output::Send(send) => Some(names(&send.messages)),
                Output::SendIf(send) => Some(names(&send.messages)),
                _ => None,
            })
            .collect()
    }
}

/// The decision tags of `records`, in order.
pub fn decision_tags(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            serde_json::to_value(r).unwrap()["decision"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

pub fn names(list: &[ding::core::message::MessageName]) -> Vec<String> {
    list.iter().map(|name| name.as_str().to_string()).collect()
}

/// [`EngineConfig::new`] with gathering off (`gather-quiet "0s"`): for
/// the tests of what follows once work is deliverable, which feed files
/// and evidence at the same instant; `tests/core_gather.rs` covers the
/// gather itself (spec §4.4).
pub fn ungathered(policy: Policy, agent: &str, unread_dir: &str) -> EngineConfig {
    let mut config = EngineConfig::new(policy, agent, unread_dir);
    config.tunables.gather_quiet = std::time::Duration::ZERO;
    config
}

/// Drives one engine and records its outputs.
pub struct Driver {
    pub engine: Engine,
    pub now: Time,
    pub emitted: Emitted,
    /// Every output in order since the last `take`.
    pub order: Vec<Output>,
}

impl Driver {
    pub fn new(engine: Engine) -> Driver {
        let mut driver = Driver {
            engine,
            now: Time::ZERO,
            emitted: Emitted::default(),
            order: Vec::new(),
        };
        driver.drain();
        driver
    }

    /// A careful engine, its adapter up, the PTY host `host.worker` /
    /// `i1` / `sha256:g` at revision 10, and `001.md` waiting (the
    /// evidence is the test's).
    pub fn careful_with_one_file() -> Driver {
        let config = ungathered(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
        let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
        driver.input(Input::AdapterSpawned { pid: 9 }, Time::ZERO);
        let identity = Identity {
            session: "host.worker".into(),
            incarnation: "i1".into(),
            generation: "sha256:g".into(),
        };
        driver.input(
            Input::PtyStatus {
                identity,
                revision: 10,
            },
            Time::ZERO,
        );
        driver.input(
            Input::InboxScan(vec![MessageName::new("001.md").unwrap()]),
            Time::from_millis(1),
        );
        driver
    }

    pub fn input(&mut self, input: Input, at: Time) {
        self.now = self.now.max(at);
        self.engine.handle_input(input, self.now);
        self.drain();
    }

    pub fn timeout(&mut self, at: Time) {
        self.now = self.now.max(at);
        self.engine.handle_timeout(self.now);
        self.drain();
    }

    /// Advances to `at`, firing every deadline on the way, as a runtime's
    /// timerfd would.
    pub fn run_until(&mut self, at: Time) {
        while let Some(deadline) = self.engine.next_deadline() {
            if deadline > at {
                break;
            }
            self.timeout(deadline);
        }
        self.now = self.now.max(at);
    }

    fn drain(&mut self) {
        while let Some(output) = self.engine.poll_output() {
            match &output {
                Output::SendIf(send) => self.emitted.send_ifs.push(send.clone()),
                Output::Send(send) => self.emitted.sends.push(send.clone()),
                Output::SpawnAdapter => self.emitted.spawns += 1,
                Output::JournalChanged => self.emitted.journals.push(self.engine.journal()),
                Output::StatusChanged => self.emitted.status_changes += 1,
                Output::Decision(record) => self.emitted.records.push(record.clone()),
                Output::ToAdapter(line) => self.emitted.downlinks.push(line.clone()),
            }
            self.order.push(output);
        }
    }

    /// The careful policy's second phase, as a test drives it once the
    /// paste was written: `evidence` (an adapter line naming the pasted
    /// notice in `typed`, at a revision after the paste) arrives at `at`,
    /// which must be past the submit delay, and the host writes the Return
    /// it authorizes at `revision`. Returns the Return's request.
    pub fn submit_typed(&mut self, evidence: Input, at: Time, revision: u64) -> u64 {
        let before = self.emitted.send_ifs.len();
        self.input(evidence, at);
        let submit = self.emitted.send_ifs[before..]
            .last()
            .cloned()
            .unwrap_or_else(|| panic!("no Return after {:?}", self.emitted.records.last()));
        assert_eq!(submit.transport.bytes(), b"\r", "a Return alone");
        self.input(
            Input::PtySent {
                request: submit.request,
                revision,
            },
            at,
        );
        submit.request
    }

    /// Returns and clears what was emitted since the last call.
    pub fn take(&mut self) -> (Emitted, Vec<Output>) {
        (
            std::mem::take(&mut self.emitted),
            std::mem::take(&mut self.order),
        )
    }
}
