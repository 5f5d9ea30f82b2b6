//! The scripted model's directive grammar: what the latest user prompt asks
//! the mock model to do, and the plan that answers each kind of request.
//!
//! A prompt may carry one directive, a word starting with `mock:` followed
//! by its argument, anywhere in the text:
//!
//! * `mock:run N`: call the harness's command tool with a command that runs
//!   for N seconds (1 to 600), a "child command running" state;
//! * `mock:permission PATH`: call the command tool with a command that needs
//!   the human's permission and whose only side effect is creating the
//!   marker file PATH (absolute);
//! * `mock:slow N`: a text reply streamed slowly over N seconds (1 to 600);
//! * `mock:edit PATH`: call the harness's file-editing tool to create the
//!   file PATH (absolute) with a line of text: a file-change approval in a
//!   manual mode, whose only side effect is that file;
//! * `mock:choice`: call the harness's tool that asks the human a question
//!   with options (a choice menu);
//! * `mock:plan`: call the harness's tool that asks the human to approve a
//!   plan;
//! * no directive: a short text reply.
//!
//! A harness that does not offer the tool a directive calls for gets a text
//! reply saying so (the wire format checks the request's tools).
//!
//! The first `mock:` word decides. One that cannot be read (`mock:run x`,
//! `mock:jump`) is answered with a text reply that says why, never with a
//! tool call: a typo must not run anything. After a tool result the model
//! answers with text, which ends the turn; unless the result says that the
//! command is still running (a harness that waits at most so long for a
//! command), then it asks to wait for it again.

use std::fmt;

/// The longest a `run` or `slow` directive may take.
pub const MAX_SECONDS: u32 = 600;

/// What the latest prompt asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    Text,
    Run {
        seconds: u32,
    },
    Permission {
        marker: String,
    },
    Slow {
        seconds: u32,
    },
    Edit {
        path: String,
    },
    Choice,
    PlanApproval,
    /// A `mock:` word that is not a valid directive, with the reason.
    Invalid(String),
}

impl fmt::Display for Directive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Directive::Text => write!(f, "text"),
            Directive::Run { seconds } => write!(f, "run {seconds}"),
            Directive::Permission { marker } => write!(f, "permission {marker}"),
            Directive::Slow { seconds } => write!(f, "slow {seconds}"),
            Directive::Edit { path } => write!(f, "edit {path}"),
            Directive::Choice => write!(f, "choice"),
            Directive::PlanApproval => write!(f, "plan"),
            Directive::Invalid(reason) => write!(f, "invalid: {reason}"),
        }
    }
}

/// Reads the directive in `prompt`.
pub fn directive(prompt: &str) -> Directive {
    let mut words = prompt.split_whitespace();
    while let Some(word) = words.next() {
        let Some(name) = word.strip_prefix("mock:") else {
            continue;
        };
        let argument = words.next();
        return match name {
            "run" => seconds(name, argument)
                .map_or_else(Directive::Invalid, |seconds| Directive::Run { seconds }),
            "slow" => seconds(name, argument)
                .map_or_else(Directive::Invalid, |seconds| Directive::Slow { seconds }),
            "permission" => match argument {
                Some(marker) if marker.starts_with('/') => Directive::Permission {
                    marker: marker.to_string(),
                },
                _ => Directive::Invalid("mock:permission wants an absolute path".into()),
            },
            "edit" => match argument {
                Some(path) if path.starts_with('/') => Directive::Edit {
                    path: path.to_string(),
                },
                _ => Directive::Invalid("mock:edit wants an absolute path".into()),
            },
            "choice" => Directive::Choice,
            "plan" => Directive::PlanApproval,
            other => Directive::Invalid(format!("unknown directive mock:{other}")),
        };
    }
    Directive::Text
}

fn seconds(name: &str, argument: Option<&str>) -> Result<u32, String> {
    match argument.and_then(|text| text.parse::<u32>().ok()) {
        Some(seconds) if (1..=MAX_SECONDS).contains(&seconds) => Ok(seconds),
        _ => Err(format!(
            "mock:{name} wants a whole number of seconds from 1 to {MAX_SECONDS}"
        )),
    }
}

/// How a request was classified by its wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A model call answering a prompt: its latest input is a message from
    /// the human (or queued for them), not a tool result.
    Prompt,
    /// A model call answering a tool result (a prompt queued beside the
    /// result rides with it).
    ToolResult,
    /// The harness asks for a title for the conversation: not a turn.
    Title,
    /// The harness asks for a summary of the conversation to compact its
    /// context with: not a turn.
    Compaction,
    /// A token count: no model output at all.
    CountTokens,
    /// Another request the harness makes beside the conversation.
    Side,
    /// Nothing this server answers (404).
    Unknown,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Prompt => "prompt",
            Class::ToolResult => "tool-result",
            Class::Title => "title",
            Class::Compaction => "compaction",
            Class::CountTokens => "count-tokens",
            Class::Side => "side",
            Class::Unknown => "unknown",
        }
    }

    /// Whether this request is a model call of the conversation, the unit
    /// the evaluation counts per turn.
    pub fn is_turn_call(self) -> bool {
        matches!(self, Class::Prompt | Class::ToolResult)
    }
}

/// The summary every compaction request is answered with: a turn call that
/// carries it runs on the compacted conversation (the evaluation's proof
/// that a `/compact` took effect).
pub const COMPACTION_SUMMARY: &str = "The mock conversation so far, in brief.";

/// What the server answers; the wire format renders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// One text message that ends the turn.
    Text(String),
    /// Text streamed in pieces over `seconds`, then the end of the turn.
    Slow { text: String, seconds: u32 },
    /// One call of the harness's command tool.
    Command(Command),
    /// One call of another of the harness's tools, by what it is for; a
    /// harness that does not offer one answers `Text` with the reason.
    Tool(ToolCall),
    /// Keep waiting for the still-running command with this handle.
    Wait(String),
    /// A conversation title.
    Title(String),
    /// A summary of the conversation, for compaction.
    Summary(String),
    /// A token count.
    Tokens(u64),
    /// No such endpoint.
    NotFound,
}

/// A tool call by what it does, for each wire format to name and shape as
/// its harness's tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolCall {
    /// Create the file `path` holding `content` (a file-change approval).
    Edit { path: String, content: String },
    /// Ask the human `question` with these options (the first is the
    /// default), as a choice menu.
    Choice {
        question: String,
        options: Vec<String>,
    },
    /// Ask the human to approve `plan`.
    PlanApproval { plan: String },
}

impl ToolCall {
    /// What the call is, for a text reply when the harness lacks its tool.
    pub fn what(&self) -> &'static str {
        match self {
            ToolCall::Edit { .. } => "file-editing",
            ToolCall::Choice { .. } => "question",
            ToolCall::PlanApproval { .. } => "plan-approval",
        }
    }
}

/// The text of the file `mock:edit` creates.
pub const EDIT_CONTENT: &str = "mock edit\n";

/// A command the mock model asks the harness to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The shell command line.
    pub line: String,
    /// A one-line description for the human.
    pub description: String,
    /// Whether it is meant to need the human's permission.
    pub needs_permission: bool,
    /// How long it runs, for harnesses that must be told how long to wait.
    pub seconds: u32,
}

/// The plan for a request of class `class` whose latest prompt asked for
/// `directive`, in the `turn`th turn of the conversation. `still_running`
/// is the harness's handle for a command that its tool result says is
/// still running (a harness that stops waiting after a while).
pub fn plan(class: Class, directive: &Directive, turn: u64, still_running: Option<&str>) -> Plan {
    if class == Class::ToolResult
        && let Some(handle) = still_running
    {
        return Plan::Wait(handle.to_string());
    }
    match class {
        Class::Prompt => match directive {
            Directive::Text => Plan::Text(format!("mock reply to turn {turn}.")),
            Directive::Run { seconds } => Plan::Command(run_command(*seconds)),
            Directive::Permission { marker } => Plan::Command(permission_command(marker)),
            Directive::Slow { seconds } => Plan::Slow {
                text: format!("mock slow reply to turn {turn}, over {seconds} s."),
                seconds: *seconds,
            },
            Directive::Edit { path } => Plan::Tool(ToolCall::Edit {
                path: path.clone(),
                content: EDIT_CONTENT.into(),
            }),
            Directive::Choice => Plan::Tool(ToolCall::Choice {
                question: "Which mock option should the turn take?".into(),
                options: vec!["Mock option one".into(), "Mock option two".into()],
            }),
            Directive::PlanApproval => Plan::Tool(ToolCall::PlanApproval {
                plan: "Mock plan: write nothing, then reply.".into(),
            }),
            Directive::Invalid(reason) => Plan::Text(format!("mock: {reason}.")),
        },
        Class::ToolResult => Plan::Text(format!("mock: the tool finished; turn {turn} ends.")),
        Class::Title => Plan::Title("Mock session".into()),
        Class::Compaction => Plan::Summary(COMPACTION_SUMMARY.into()),
        Class::CountTokens => Plan::Tokens(1000),
        Class::Side => Plan::Text("mock side reply.".into()),
        Class::Unknown => Plan::NotFound,
    }
}

/// A command that runs for `seconds`. It starts with `echo` because a
/// harness may refuse a command line that starts with a long `sleep`.
pub fn run_command(seconds: u32) -> Command {
    Command {
        line: format!("echo mock-run-start && sleep {seconds} && echo mock-run-done"),
        description: format!("Run for {seconds} seconds"),
        needs_permission: false,
        seconds,
    }
}

/// A command whose only effect is creating `marker`.
pub fn permission_command(marker: &str) -> Command {
    Command {
        line: format!("touch {}", shell_quote(marker)),
        description: "Create the marker file".into(),
        needs_permission: true,
        seconds: 1,
    }
}

/// `text` as one POSIX shell word: bare when it is plainly safe, else in
/// single quotes.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%=,".contains(&b));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_without_a_directive_is_a_text_reply() {
        assert_eq!(directive("hello there"), Directive::Text);
        assert_eq!(directive(""), Directive::Text);
        assert_eq!(directive("mocking: no"), Directive::Text);
    }

    #[test]
    fn each_directive_reads_its_argument_anywhere_in_the_prompt() {
        assert_eq!(
            directive("please mock:run 5 now"),
            Directive::Run { seconds: 5 }
        );
        assert_eq!(directive("mock:slow 3"), Directive::Slow { seconds: 3 });
        assert_eq!(
            directive("x\nmock:permission /tmp/m a"),
            Directive::Permission {
                marker: "/tmp/m".into()
            }
        );
    }

    #[test]
    fn the_dialog_directives_plan_a_tool_call_by_what_it_does() {
        assert_eq!(
            plan(Class::Prompt, &directive("mock:edit /tmp/e.txt"), 1, None),
            Plan::Tool(ToolCall::Edit {
                path: "/tmp/e.txt".into(),
                content: EDIT_CONTENT.into()
            })
        );
        assert!(matches!(
            plan(Class::Prompt, &directive("ask mock:choice"), 1, None),
            Plan::Tool(ToolCall::Choice { options, .. }) if options.len() == 2
        ));
        assert!(matches!(
            plan(Class::Prompt, &directive("mock:plan now"), 1, None),
            Plan::Tool(ToolCall::PlanApproval { .. })
        ));
    }

    #[test]
    fn the_first_directive_decides() {
        assert_eq!(
            directive("mock:run 2 mock:slow 9"),
            Directive::Run { seconds: 2 }
        );
    }

    #[test]
    fn unreadable_directives_are_invalid_never_a_tool_call() {
        for prompt in [
            "mock:run",
            "mock:run x",
            "mock:run 0",
            "mock:run 601",
            "mock:slow -1",
            "mock:permission",
            "mock:permission relative/path",
            "mock:edit",
            "mock:edit relative/path",
            "mock:jump 3",
        ] {
            let read = directive(prompt);
            assert!(matches!(read, Directive::Invalid(_)), "{prompt}: {read:?}");
            assert!(
                matches!(plan(Class::Prompt, &read, 1, None), Plan::Text(_)),
                "{prompt}"
            );
        }
    }

    #[test]
    fn after_a_tool_result_the_model_ends_the_turn_with_text() {
        let run = Directive::Run { seconds: 5 };
        assert!(matches!(
            plan(Class::Prompt, &run, 1, None),
            Plan::Command(_)
        ));
        assert!(matches!(
            plan(Class::ToolResult, &run, 1, None),
            Plan::Text(_)
        ));
    }

    #[test]
    fn a_command_still_running_is_waited_for() {
        assert_eq!(
            plan(Class::ToolResult, &Directive::Text, 1, Some("42")),
            Plan::Wait("42".into())
        );
        assert!(matches!(
            plan(Class::Prompt, &Directive::Text, 1, Some("42")),
            Plan::Text(_)
        ));
    }

    #[test]
    fn the_permission_command_only_touches_the_quoted_marker() {
        let command = permission_command("/tmp/a b/it's");
        assert_eq!(command.line, r"touch '/tmp/a b/it'\''s'");
        assert!(command.needs_permission);
        assert_eq!(permission_command("/tmp/m.x").line, "touch /tmp/m.x");
    }

    #[test]
    fn the_run_command_does_not_start_with_sleep() {
        let command = run_command(7);
        assert!(!command.line.starts_with("sleep"), "{}", command.line);
        assert!(command.line.contains("sleep 7"));
        assert!(!command.needs_permission);
    }
}
