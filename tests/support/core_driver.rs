//! A driver for the sans-IO engine used by the fixture and simulation tests:
//! feeds inputs, drains outputs after each, and keeps what they said.

use ding::core::decision::Record;
use ding::core::downlink::Downlink;
use ding::core::engine::{Engine, Input, Output, Send, SendIf};
use ding::core::journal::Journal;
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

    /// Returns and clears what was emitted since the last call.
    pub fn take(&mut self) -> (Emitted, Vec<Output>) {
        (
            std::mem::take(&mut self.emitted),
            std::mem::take(&mut self.order),
        )
    }
}
