//! Property tests for the launch fingerprint: any re-rendering of the same
//! declaration (node order, whitespace, separators, comments, string
//! spellings, duration units, explicit defaults) has the same fingerprint,
//! and an edit to a setting the sidecar depends on changes it, with drift
//! naming that setting.

use std::collections::BTreeMap;
use std::path::Path;

use ding::core::config::{ADAPTER_SILENCE, DurationBound, LEASE_CAP, RE_RING_AFTER, SUBMIT_DELAY};
use ding::decl::{self, AgentSpec, drift};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Model {
    name: String,
    command: Vec<String>,
    cwd: Option<String>,
    inbox: Option<String>,
    env: BTreeMap<String, String>,
    fresh_idle: bool,
    adapter: Vec<String>,
    lease_cap_ms: Option<u64>,
    adapter_silence_ms: Option<u64>,
    /// `Some(None)` is "never".
    re_ring_after_ms: Option<Option<u64>>,
    submit_delay_ms: Option<u64>,
    notice_max_files: Option<u64>,
}

fn millis(bound: DurationBound) -> std::ops::RangeInclusive<u64> {
    bound.min.as_millis() as u64..=bound.max.as_millis() as u64
}

fn argv() -> impl Strategy<Value = Vec<String>> {
    (
        "[a-z$][a-zA-Z0-9/_-]{0,10}",
        prop::collection::vec("[a-zA-Z0-9 ._/=\"\\\\$é#-]{0,10}", 0..3),
    )
        .prop_map(|(program, args)| std::iter::once(program).chain(args).collect())
}

fn model() -> impl Strategy<Value = Model> {
    (
        (
            "[a-z][a-z0-9._-]{0,12}",
            argv(),
            prop::option::of("[a-z]{1,6}(/[a-z]{1,6}){0,2}"),
            prop::option::of("(/srv/)?[a-z]{1,6}(/[a-z]{1,6}){0,2}"),
            prop::collection::btree_map("[A-Z_][A-Z0-9_]{0,6}", "[ -~]{0,8}", 0..3),
        ),
        (
            any::<bool>(),
            argv(),
            prop::option::of(millis(LEASE_CAP)),
            prop::option::of(millis(ADAPTER_SILENCE)),
            prop::option::of(prop::option::of(millis(RE_RING_AFTER))),
            prop::option::of(millis(SUBMIT_DELAY)),
            prop::option::of(1u64..=256),
        ),
    )
        .prop_map(
            |(
                (name, command, cwd, inbox, env),
                (fresh_idle, adapter, lease, silence, re_ring, submit, notice),
            )| Model {
                name,
                command,
                cwd,
                inbox,
                env,
                fresh_idle,
                adapter,
                // Lease settings are errors without an adapter.
                lease_cap_ms: lease.filter(|_| fresh_idle),
                adapter_silence_ms: silence.filter(|_| fresh_idle),
                re_ring_after_ms: re_ring,
                submit_delay_ms: submit,
                notice_max_files: notice,
            },
        )
}

/// A small deterministic generator for rendering choices.
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        // xorshift64*; the seed is forced odd so it never sticks at zero.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn flip(&mut self) -> bool {
        self.below(2) == 0
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

fn string(text: &str, choices: &mut Choices) -> String {
    let bare = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !["true", "false", "null", "inf", "nan"].contains(&text);
    match choices.below(3) {
        0 if bare => text.to_string(),
        1 if !text.contains("\"#") && !text.ends_with('"') => format!("#\"{text}\"#"),
        _ => format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

fn duration(ms: u64, choices: &mut Choices) -> String {
    let units: Vec<(&str, u64)> = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
        .into_iter()
        .filter(|(_, size)| ms.is_multiple_of(*size))
        .collect();
    let (unit, size) = units[choices.below(units.len())];
    format!("\"{}{unit}\"", ms / size)
}

fn path(text: &str, choices: &mut Choices) -> String {
    let spelled = match choices.below(3) {
        0 if !text.starts_with('/') => format!("./{text}"),
        1 => format!("{text}/"),
        _ => text.to_string(),
    };
    string(&spelled, choices)
}

/// Child nodes joined with random indentation, separators and comments.
fn block(mut children: Vec<String>, choices: &mut Choices) -> String {
    choices.shuffle(&mut children);
    let mut out = String::from("{");
    for child in children {
        match choices.below(4) {
            0 => out.push_str(" /* note */"),
            1 => out.push_str("\n  // note\n"),
            _ => {}
        }
        out.push_str(if choices.flip() { "\n" } else { " " });
        out.push_str(&" ".repeat(choices.below(5)));
        out.push_str(&child);
        out.push_str(if choices.flip() { ";" } else { "\n" });
    }
    out.push_str(if choices.flip() { "\n}" } else { " }" });
    out
}

fn argv_node(argv: &[String], choices: &mut Choices) -> String {
    let args: Vec<String> = argv.iter().map(|arg| string(arg, choices)).collect();
    format!("command {}", args.join(" "))
}

fn render(model: &Model, seed: u64) -> String {
    let choices = &mut Choices(seed | 1);
    let mut agent = vec![argv_node(&model.command, choices)];
    if let Some(cwd) = &model.cwd {
        agent.push(format!("cwd {}", path(cwd, choices)));
    }
    if let Some(inbox) = &model.inbox {
        agent.push(format!("inbox {}", path(inbox, choices)));
    }
    if !model.env.is_empty() {
        let vars = model
            .env
            .iter()
            .map(|(name, value)| format!("{name} {}", string(value, choices)))
            .collect();
        agent.push(format!("env {}", block(vars, choices)));
    }
    let mut ding = Vec::new();
    if model.fresh_idle {
        ding.push("delivery \"turn-boundary+fresh-idle\"".to_string());
        ding.push(format!(
            "adapter {}",
            block(vec![argv_node(&model.adapter, choices)], choices)
        ));
    } else if choices.flip() {
        ding.push("delivery \"aggressive\"".to_string());
    }
    let tunable = |name: &str, value: Option<u64>, default: u64, choices: &mut Choices| {
        match value {
            Some(ms) => Some(format!("{name} {}", duration(ms, choices))),
            // Writing the default out is the same as leaving it out.
            None if choices.below(4) == 0 => Some(format!("{name} {}", duration(default, choices))),
            None => None,
        }
    };
    let ms = |bound: DurationBound| bound.default.as_millis() as u64;
    if model.fresh_idle {
        ding.extend(tunable(
            "lease-cap",
            model.lease_cap_ms,
            ms(LEASE_CAP),
            choices,
        ));
        ding.extend(tunable(
            "adapter-silence",
            model.adapter_silence_ms,
            ms(ADAPTER_SILENCE),
            choices,
        ));
    }
    match model.re_ring_after_ms {
        Some(None) => ding.push("re-ring-after \"never\"".into()),
        Some(Some(value)) => ding.push(format!("re-ring-after {}", duration(value, choices))),
        None => ding.extend(tunable("re-ring-after", None, ms(RE_RING_AFTER), choices)),
    }
    ding.extend(tunable(
        "submit-delay",
        model.submit_delay_ms,
        ms(SUBMIT_DELAY),
        choices,
    ));
    if let Some(count) = model.notice_max_files {
        ding.push(format!("notice-max-files {count}"));
    }
    if !ding.is_empty() || choices.flip() {
        agent.push(format!("ding {}", block(ding, choices)));
    }
    let leading = if choices.flip() { "// fleet\n" } else { "" };
    format!(
        "{leading}agent {} {}\n",
        string(&model.name, choices),
        block(agent, choices)
    )
}

fn lower(text: &str) -> AgentSpec {
    let checked = decl::check_bytes("prop.kdl", text.as_bytes(), Path::new("/srv/agents"));
    assert!(
        !checked.has_errors(),
        "rendered declaration is invalid:\n{text}\n{}",
        checked.render_positioned()
    );
    checked.agents.into_iter().next().expect("one agent")
}

/// An edit to `model` and the drift field it must produce.
fn edit(model: &Model, which: usize) -> (Model, &'static str) {
    let mut edited = model.clone();
    match which % 5 {
        0 => {
            edited.name.push('x');
            (edited, "agent")
        }
        1 if model.fresh_idle => {
            edited.adapter.push("--edited".into());
            (edited, "ding.adapter.command")
        }
        1 | 2 => {
            edited.fresh_idle = !model.fresh_idle;
            edited.lease_cap_ms = None;
            edited.adapter_silence_ms = None;
            (edited, "ding.delivery")
        }
        3 => {
            let current = model
                .submit_delay_ms
                .unwrap_or(SUBMIT_DELAY.default.as_millis() as u64);
            let range = millis(SUBMIT_DELAY);
            edited.submit_delay_ms = Some(if current < *range.end() {
                current + 1
            } else {
                current - 1
            });
            (edited, "ding.submit-delay")
        }
        _ => {
            edited.inbox = Some(format!(
                "{}/moved",
                model.inbox.as_deref().unwrap_or("inbox")
            ));
            (edited, "inbox")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn re_rendering_keeps_the_fingerprint(model in model(), first in any::<u64>(), second in any::<u64>()) {
        let a = lower(&render(&model, first));
        let b = lower(&render(&model, second));
        prop_assert_eq!(a.fingerprint(), b.fingerprint());
        prop_assert_eq!(a.launch_generation(), b.launch_generation());
        prop_assert_eq!(a, b);
    }

    #[test]
    fn an_edit_changes_the_fingerprint_and_drift_names_it(model in model(), which in 0usize..5, seed in any::<u64>()) {
        let (edited, field) = edit(&model, which);
        let before = lower(&render(&model, seed));
        let after = lower(&render(&edited, seed.rotate_left(7)));
        prop_assert_ne!(before.fingerprint(), after.fingerprint());
        let drifted: Vec<String> = drift(&before.fingerprint_input(), &after.fingerprint_input())
            .into_iter()
            .map(|drifted| drifted.field)
            .collect();
        prop_assert!(drifted.iter().any(|name| name == field), "{} not in {:?}", field, drifted);
    }
}
