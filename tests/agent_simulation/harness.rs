//! What the simulation needs of a harness model: it reads input (after its
//! lag, which the world applies), draws, runs hooks, acts on their
//! answers, and shows a person what it is doing.

use std::collections::BTreeMap;

use ding::adapter::HookAnswer;
use ding::pty::wire::Snapshot;
use serde_json::Value;

/// The captured screens `names`, read from `dir` (under the crate's root)
/// as `NAME.json`: a harness model draws each of its states with one.
pub fn captured(dir: &str, names: &[&'static str]) -> BTreeMap<&'static str, Snapshot> {
    names
        .iter()
        .map(|name| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(dir)
                .join(format!("{name}.json"));
            let text = std::fs::read_to_string(&path).expect("a capture");
            (*name, serde_json::from_str(&text).expect("a snapshot"))
        })
        .collect()
}

/// What the harness did that the world must act on.
#[derive(Debug)]
pub enum Happened {
    /// The screen changed: the PTY host's revision moves.
    Drew,
    /// A prompt reached the model as a turn's input.
    Submitted(String),
    /// The harness runs `ding hook PROVIDER EVENT` with this payload;
    /// `call` is the model's own number for it, given back with its answer.
    Hook {
        event: &'static str,
        payload: Value,
        call: u64,
    },
    /// A turn started on a prompt queued through a native path (not
    /// typed): its text reaches the model as the turn's input.
    QueuedTurn(String),
    /// What a hook added to the context reaches the model, with the first
    /// request after it (a compacted context's `SessionStart` text, at the
    /// next turn).
    ContextReaches(String),
    /// A turn ended: the model archives what it read during it.
    TurnEnded,
    /// The context began again empty (Codex's `/clear`: a new thread):
    /// nothing the model read before is in it.
    ContextCleared,
    /// The harness sent the model a request: a call the model server
    /// sees (the cost oracle counts them).
    Request(Call),
    /// DING's paste reached the composer changed on its way: this is the
    /// text the composer holds as DING's.
    PasteChanged(String),
    /// The context was compacted: the prompts stay in it (Codex keeps a
    /// thread's user messages through a compaction: the person's, a typed
    /// notice, a queued delivery), what hooks injected beside them does
    /// not.
    ContextCompacted,
}

/// Which request of a turn a model call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// A turn's first request, on the prompt just submitted or queued (the
    /// `Submitted` or `QueuedTurn` before it says whose).
    Starts,
    /// A later request of the running turn (a tool's result goes back): a
    /// hook before it may add to it at no call of its own.
    Follows,
    /// A hook's answer at the turn's end went on as the model's next input:
    /// the turn continues, a call of DING's.
    Continues,
    /// A turn's first request on prompts that waited behind the turn
    /// before it (OpenCode takes them as its next request): nothing of
    /// DING's rides a person's, since an Esc or a rejected permission
    /// before it strands it unanswered with anything added to it, and
    /// DING adds nothing to it (`queued` on its `chat.message`).
    StartsQueued,
}

/// What a person sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    Idle { composer: String },
    Busy { composer: String },
    Dialog,
}

impl View {
    pub fn composer(&self) -> &str {
        match self {
            View::Idle { composer } | View::Busy { composer } => composer,
            View::Dialog => "",
        }
    }
}

pub trait HarnessModel {
    /// The provider its hooks name (`ding hook NAME EVENT`).
    fn provider(&self) -> &'static str;
    /// Whether a native idle path serves every delivery, so that DING
    /// never needs to type (Codex's queue through its app-server).
    fn has_native_idle_path(&self) -> bool {
        false
    }
    /// The adapter is up: the session starts (its first hooks).
    fn started(&mut self, now_ms: u64) -> Vec<Happened>;
    /// How long `ding hook` waits for `event`'s answer (its `--timeout`).
    fn hook_timeout_ms(&self, _event: &str) -> u64 {
        10_000
    }
    /// Bytes the harness reads now.
    fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened>;
    fn next_deadline_ms(&self) -> Option<u64>;
    fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened>;
    /// A hook it ran was answered (`None`: `ding hook` gave up).
    fn hook_answered(
        &mut self,
        event: &'static str,
        call: u64,
        answer: Option<&HookAnswer>,
        now_ms: u64,
    ) -> Vec<Happened>;
    /// How many times what `event`'s answer prints reaches the model then:
    /// none for a native path's delivery (it reaches it only when its turn
    /// starts), more than once where the harness repeats it.
    fn copies_reaching_model(&self, _event: &str, _answer: &HookAnswer) -> usize {
        1
    }
    /// Whether `event` is the hook a turn's end asks (its `Stop`): what
    /// its answer adds to the context continues the turn, a model call of
    /// its own, and a message that arrived during the turn after its last
    /// request can ride no later request of it.
    fn asks_at_a_turns_end(&self, event: &str) -> bool;
    /// Whether the harness's next request may wait for `event`'s answer:
    /// every hook the harness runs itself, not a call its launcher makes
    /// beside it.
    fn a_request_may_wait_for(&self, _event: &str) -> bool {
        true
    }
    /// The texts of DING's deliveries waiting in the harness's own queue
    /// for a context a clear began, whose first prompt has not run yet:
    /// an adapter killed then cannot tell that clear was reported, and may
    /// report it again with that prompt (spec §7, the journal's
    /// consequences: at least once).
    fn queued_before_a_clears_first_prompt(&self) -> Vec<String> {
        Vec::new()
    }
    /// Commands a person may type whole at an empty composer (`/clear`).
    fn commands(&self) -> &'static [&'static str] {
        &[]
    }
    fn snapshot(&mut self, revision: u64) -> Snapshot;
    fn view(&self) -> View;
    /// Idle, nothing typed, nothing queued: waiting for the person.
    fn is_quiet(&self) -> bool;
    /// Whether a delivery could start a turn now without touching the
    /// person's input: what the cost oracle calls ready.
    fn takes_a_delivery_now(&self) -> bool {
        self.is_quiet()
    }
    /// The dialog open now that no hook announced (a trust dialog, a
    /// picker a person opened), by its capture's name
    /// (`agent_simulation/screens.rs`): no wake or queued turn may start
    /// under it.
    fn unannounced_dialog(&self) -> Option<&'static str> {
        None
    }
    /// How a person answers or dismisses the unannounced dialog open now
    /// (Esc, a digit, Return), and how long they then look away; `None`:
    /// the person answers as they answer the harness's own dialogs.
    fn answer_keys(&mut self) -> Option<(Vec<u8>, u64)> {
        None
    }
    /// What a person at the idle harness does now that the world's person
    /// would not (open a picker or menu no hook announces, `/resume`, Esc
    /// Esc; send on a notice of DING's that arrived changed), and how long
    /// they then look away.
    fn person_acts(&mut self) -> Option<(Vec<u8>, u64)> {
        None
    }
}

/// `base`, a capture of an idle composer at its cursor's row, with `text`
/// typed into it as the harness draws text: after the row's two-column
/// prompt, `cols - 2` characters a row, continuation rows indented two
/// columns, the rows above moved up to make room, the cursor after the
/// last character. `cursor_cell`: the harness draws its cursor as an
/// inverse cell (Claude Code); otherwise the hardware cursor shows it.
pub fn with_composer_text(base: &Snapshot, text: &str, cursor_cell: bool) -> Snapshot {
    let cols = usize::from(base.size.cols);
    let width = cols.saturating_sub(2).max(1);
    let prompt_row = usize::from(base.cursor.row);
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<String> = if chars.is_empty() {
        vec![String::new()]
    } else {
        chars
            .chunks(width)
            .map(|chunk| chunk.iter().collect())
            .collect()
    };
    let extra = (chunks.len() - 1).min(prompt_row);
    let chunks = &chunks[chunks.len() - 1 - extra..];
    let first = prompt_row - extra;
    let mut snapshot = base.clone();
    let prompt: String = base.rows[prompt_row].chars().take(2).collect();
    let mut rows: Vec<String> = base.rows[extra..prompt_row].to_vec();
    for (index, chunk) in chunks.iter().enumerate() {
        let lead = if index == 0 {
            prompt.clone()
        } else {
            "  ".into()
        };
        rows.push(format!("{lead}{chunk}"));
    }
    rows.extend_from_slice(&base.rows[prompt_row + 1..]);
    snapshot.rows = rows;
    snapshot.runs = base
        .runs
        .iter()
        .filter_map(|run| {
            let row = usize::from(run.row);
            let mut run = run.clone();
            if row > prompt_row {
                return Some(run);
            }
            if row < extra || (row == prompt_row && run.col >= 2) {
                return None;
            }
            let moved = if row == prompt_row {
                first
            } else {
                row - extra
            };
            run.row = u16::try_from(moved).ok()?;
            Some(run)
        })
        .collect();
    let last = chunks.last().map_or(0, |chunk| chunk.chars().count());
    let col = u16::try_from((2 + last).min(cols.saturating_sub(1))).unwrap_or(0);
    snapshot.cursor.row = base.cursor.row;
    snapshot.cursor.col = col;
    if cursor_cell && 2 + last < cols {
        snapshot.runs.push(ding::pty::wire::Run {
            row: base.cursor.row,
            col,
            text: " ".into(),
            inverse: true,
            ..Default::default()
        });
    }
    snapshot
}
