//! The "low" declaration: what the user wrote, checked for shape only.
//!
//! This layer walks the KDL document and keeps, for every setting, its
//! literal value and its byte span. It rejects what no reading could accept
//! (unknown or duplicate nodes, properties, type annotations, wrong value
//! types, wrong counts) and applies no defaults, resolves no path and judges
//! no policy: that is `lower`'s job, which reports against these spans.

use std::collections::HashMap;

use kdl::{KdlDocument, KdlEntry, KdlNode, KdlValue};

use super::diagnostic::{Diagnostic, Span};
use super::source::Source;
use super::suggest::did_you_mean;
use super::tunable::{TunableKey, TunableKind};

/// A value and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// Every `agent` node of one file, in file order.
#[derive(Clone, Debug, Default)]
pub struct RawDeclaration {
    pub agents: Vec<RawAgent>,
}

#[derive(Clone, Debug)]
pub struct RawAgent {
    /// The `agent` node name itself, for diagnostics about the whole agent.
    pub node: Span,
    pub name: Spanned<String>,
    pub command: Option<RawArgv>,
    pub cwd: Option<Spanned<String>>,
    pub inbox: Option<Spanned<String>>,
    /// The terminal size, as written (`"120x40"`).
    pub size: Option<Spanned<String>>,
    /// `(NAME, value)` in file order, names unique.
    pub env: Vec<(Spanned<String>, Spanned<String>)>,
    pub ding: Option<RawDing>,
}

/// A `command "prog" "arg"...` node; `args` may be empty (lowering says so).
#[derive(Clone, Debug)]
pub struct RawArgv {
    pub node: Span,
    pub args: Vec<Spanned<String>>,
}

#[derive(Clone, Debug)]
pub struct RawDing {
    pub node: Span,
    pub delivery: Option<Spanned<String>>,
    pub adapter: Option<RawAdapter>,
    /// Each tunable at most once, in file order.
    pub tunables: Vec<(TunableKey, Spanned<RawScalar>)>,
}

#[derive(Clone, Debug)]
pub struct RawAdapter {
    pub node: Span,
    pub command: Option<RawArgv>,
}

/// A tunable's literal value: durations are strings, counts are integers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawScalar {
    Text(String),
    Integer(i128),
    Flag(bool),
}

const TOP_LEVEL: [&str; 1] = ["agent"];
const AGENT_CHILDREN: [&str; 6] = ["command", "cwd", "inbox", "size", "env", "ding"];
const ADAPTER_CHILDREN: [&str; 1] = ["command"];

/// The child nodes `ding` accepts.
pub fn ding_children() -> Vec<&'static str> {
    let mut names = vec!["delivery", "adapter"];
    names.extend(TunableKey::ALL.iter().map(|key| key.name()));
    names
}

/// An example of a node, for "write it like this" hints.
fn example(node: &str) -> String {
    match node {
        "agent" => "agent \"worker\" { command \"prog\" }".into(),
        "command" => "command \"prog\" \"--flag\"".into(),
        "cwd" => "cwd \"path/to/dir\"".into(),
        "size" => "size \"120x40\"".into(),
        "inbox" => "inbox \"path/to/inbox\"".into(),
        "env" => "env { NAME \"value\" }".into(),
        "ding" => "ding { delivery \"turn-boundary+fresh-idle\" }".into(),
        "delivery" => "delivery \"turn-boundary+fresh-idle\"".into(),
        "adapter" => "adapter { command \"$ST_HOOKS/my-adapter\" }".into(),
        other => match TunableKey::from_name(other) {
            Some(key) => format!("{other} {}", key.default_literal()),
            None => format!("{other} \"value\""),
        },
    }
}

/// A kdl span (miette's `SourceSpan`, whose crate we do not name) as a
/// byte range.
macro_rules! span_of {
    ($span:expr) => {{
        let span = $span;
        span.offset()..span.offset() + span.len()
    }};
}

fn kind_of(value: &KdlValue) -> &'static str {
    match value {
        KdlValue::String(_) => "a string",
        KdlValue::Integer(_) => "an integer",
        KdlValue::Float(_) => "a number",
        KdlValue::Bool(_) => "a boolean",
        KdlValue::Null => "#null",
    }
}

/// Lowers a parsed document into the raw declaration, reporting every shape
/// problem it can find (it keeps going after the first).
pub fn read(
    source: &Source,
    document: &KdlDocument,
    diagnostics: &mut Vec<Diagnostic>,
) -> RawDeclaration {
    let mut reader = Reader {
        source,
        diagnostics,
    };
    let mut declaration = RawDeclaration::default();
    let mut seen_agents: HashMap<String, Span> = HashMap::new();
    for node in reader.known_children(document, "at the top level", &TOP_LEVEL, false) {
        let Some(agent) = reader.agent(node) else {
            continue;
        };
        if let Some(first) = seen_agents.get(&agent.name.value) {
            let first = reader.source.position(first.start);
            reader.diagnostics.push(
                Diagnostic::error(
                    agent.name.span.clone(),
                    format!("duplicate agent `{}`", agent.name.value),
                )
                .hint(format!(
                    "first declared at {first}; agent names must be unique in a file"
                )),
            );
            continue;
        }
        seen_agents.insert(agent.name.value.clone(), agent.name.span.clone());
        declaration.agents.push(agent);
    }
    declaration
}

struct Reader<'a> {
    source: &'a Source,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl Reader<'_> {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// The children of `document` whose names are in `allowed` (each at
    /// most once when `unique`). Unknown names and repeats are reported and
    /// skipped.
    fn known_children<'d>(
        &mut self,
        document: &'d KdlDocument,
        owner: &str,
        allowed: &[&str],
        unique: bool,
    ) -> Vec<&'d KdlNode> {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut kept = Vec::new();
        for node in document.nodes() {
            let name = node.name().value();
            let span = span_of!(node.name().span());
            if !allowed.contains(&name) {
                let hint = match did_you_mean(name, allowed) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None => format!("allowed here: {}", allowed.join(", ")),
                };
                self.error(
                    Diagnostic::error(span, format!("unknown node `{name}` {owner}")).hint(hint),
                );
                continue;
            }
            if unique {
                if let Some(first) = seen.get(name) {
                    let first = self.source.position(first.start);
                    self.error(
                        Diagnostic::error(span, format!("duplicate `{name}` {owner}"))
                            .hint(format!("first given at {first}; keep one")),
                    );
                    continue;
                }
                seen.insert(name, span);
            }
            kept.push(node);
        }
        kept
    }

    /// Reports type annotations on the node and its entries, and every
    /// property: no node takes properties, settings are child nodes.
    fn check_entries_shape(&mut self, node: &KdlNode, children: &[&str]) {
        let name = node.name().value();
        if let Some(ty) = node.ty() {
            self.error(
                Diagnostic::error(
                    span_of!(ty.span()),
                    format!(
                        "type annotation `({})` is not used in declarations",
                        ty.value()
                    ),
                )
                .hint(format!("remove `({})`", ty.value())),
            );
        }
        for entry in node.entries() {
            if let Some(ty) = entry.ty() {
                self.error(
                    Diagnostic::error(
                        span_of!(entry.span()),
                        format!(
                            "type annotation `({})` is not used in declarations",
                            ty.value()
                        ),
                    )
                    .hint(format!("remove `({})`", ty.value())),
                );
            }
            let Some(key) = entry.name() else { continue };
            let key = key.value();
            let hint = match did_you_mean(key, children) {
                Some(child) => format!(
                    "settings are child nodes: write `{name} {{ {} }}`",
                    example(child)
                ),
                None if children.is_empty() => {
                    format!("`{name}` takes no properties: write `{}`", example(name))
                }
                None => format!(
                    "`{name}` takes no properties; its settings are child nodes: {}",
                    children.join(", ")
                ),
            };
            self.error(
                Diagnostic::error(
                    span_of!(entry.span()),
                    format!("unexpected property `{key}` on `{name}`"),
                )
                .hint(hint),
            );
        }
    }

    fn arguments(node: &KdlNode) -> Vec<&KdlEntry> {
        node.entries()
            .iter()
            .filter(|entry| entry.name().is_none())
            .collect()
    }

    /// Reports a `{ ... }` block on a node that takes none.
    fn reject_block(&mut self, node: &KdlNode) {
        if let Some(children) = node.children() {
            let name = node.name().value();
            let span = span_of!(children.span());
            let span = if span.is_empty() {
                span_of!(node.name().span())
            } else {
                span
            };
            self.error(
                Diagnostic::error(span, format!("`{name}` takes no block"))
                    .hint(format!("write `{}`", example(name))),
            );
        }
    }

    /// For block nodes (`env`, `ding`, `adapter`): no values, children only.
    fn block<'n>(&mut self, node: &'n KdlNode, children: &[&str]) -> Option<&'n KdlDocument> {
        self.check_entries_shape(node, children);
        let name = node.name().value();
        if let Some(first) = Self::arguments(node).first() {
            self.error(
                Diagnostic::error(
                    span_of!(first.span()),
                    format!("`{name}` takes no values; its settings go inside its block"),
                )
                .hint(format!("write `{}`", example(name))),
            );
        }
        node.children()
    }

    /// For `name "value"` nodes: exactly one string.
    fn one_string(&mut self, node: &KdlNode) -> Option<Spanned<String>> {
        match self.one_value(node)? {
            (KdlValue::String(text), span) => Some(Spanned {
                value: text.clone(),
                span,
            }),
            (other, span) => {
                self.wrong_type(node, other, span, "a string");
                None
            }
        }
    }

    /// For `name VALUE` nodes: exactly one value, no block, no properties.
    fn one_value<'n>(&mut self, node: &'n KdlNode) -> Option<(&'n KdlValue, Span)> {
        self.check_entries_shape(node, &[]);
        self.reject_block(node);
        let name = node.name().value();
        let arguments = Self::arguments(node);
        match arguments.as_slice() {
            [] => {
                self.error(
                    Diagnostic::error(
                        span_of!(node.name().span()),
                        format!("`{name}` needs a value"),
                    )
                    .hint(format!("write `{}`", example(name))),
                );
                None
            }
            [only] => Some((only.value(), span_of!(only.span()))),
            [_, extra, ..] => {
                self.error(
                    Diagnostic::error(
                        span_of!(extra.span()),
                        format!("`{name}` takes one value, found {}", arguments.len()),
                    )
                    .hint(format!("write `{}`", example(name))),
                );
                None
            }
        }
    }

    fn wrong_type(&mut self, node: &KdlNode, found: &KdlValue, span: Span, expected: &str) {
        let name = node.name().value();
        let quoted = match found {
            KdlValue::Integer(_) | KdlValue::Float(_) if expected == "a string" => {
                Some(format!("quote it: `\"{found}\"`"))
            }
            KdlValue::String(text)
                if expected == "an integer" && text.trim().parse::<i128>().is_ok() =>
            {
                Some(format!("drop the quotes: `{name} {}`", text.trim()))
            }
            _ => None,
        };
        self.error(
            Diagnostic::error(
                span,
                format!("`{name}` expects {expected}, found {}", kind_of(found)),
            )
            .hint(quoted.unwrap_or_else(|| format!("write `{}`", example(name)))),
        );
    }

    /// `command "prog" "arg"...`: strings only, no block, no properties.
    fn argv(&mut self, node: &KdlNode) -> RawArgv {
        self.check_entries_shape(node, &[]);
        self.reject_block(node);
        let mut args = Vec::new();
        for entry in Self::arguments(node) {
            match entry.value() {
                KdlValue::String(text) => args.push(Spanned {
                    value: text.clone(),
                    span: span_of!(entry.span()),
                }),
                other => self.wrong_type(node, other, span_of!(entry.span()), "a string"),
            }
        }
        RawArgv {
            node: span_of!(node.name().span()),
            args,
        }
    }

    fn agent(&mut self, node: &KdlNode) -> Option<RawAgent> {
        self.check_entries_shape(node, &AGENT_CHILDREN);
        let node_span = span_of!(node.name().span());
        let arguments = Self::arguments(node);
        let name = match arguments.as_slice() {
            [] => {
                self.error(
                    Diagnostic::error(node_span.clone(), "`agent` needs a name")
                        .hint(format!("write `{}`", example("agent"))),
                );
                None
            }
            [first, rest @ ..] => {
                if let Some(extra) = rest.first() {
                    self.error(
                        Diagnostic::error(
                            span_of!(extra.span()),
                            format!("`agent` takes one name, found {}", arguments.len()),
                        )
                        .hint("declare each agent in its own `agent \"NAME\" { ... }` node"),
                    );
                }
                match first.value() {
                    KdlValue::String(text) => Some(Spanned {
                        value: text.clone(),
                        span: span_of!(first.span()),
                    }),
                    other => {
                        self.wrong_type(node, other, span_of!(first.span()), "a string");
                        None
                    }
                }
            }
        };
        let mut agent = RawAgent {
            node: node_span.clone(),
            name: name.clone().unwrap_or(Spanned {
                value: String::new(),
                span: node_span,
            }),
            command: None,
            cwd: None,
            inbox: None,
            size: None,
            env: Vec::new(),
            ding: None,
        };
        if let Some(children) = node.children() {
            let owner = format!("in `agent \"{}\"`", agent.name.value);
            for child in self.known_children(children, &owner, &AGENT_CHILDREN, true) {
                match child.name().value() {
                    "command" => agent.command = Some(self.argv(child)),
                    "cwd" => agent.cwd = self.one_string(child),
                    "inbox" => agent.inbox = self.one_string(child),
                    "size" => agent.size = self.one_string(child),
                    "env" => agent.env = self.env(child),
                    _ => agent.ding = Some(self.ding(child)),
                }
            }
        }
        name.map(|_| agent)
    }

    fn env(&mut self, node: &KdlNode) -> Vec<(Spanned<String>, Spanned<String>)> {
        let mut env = Vec::new();
        let Some(children) = self.block(node, &[]) else {
            return env;
        };
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for variable in children.nodes() {
            let name = variable.name().value();
            let span = span_of!(variable.name().span());
            if let Some(first) = seen.get(name) {
                let first = self.source.position(first.start);
                self.error(
                    Diagnostic::error(span, format!("duplicate environment variable `{name}`"))
                        .hint(format!("first given at {first}; keep one")),
                );
                continue;
            }
            seen.insert(name, span.clone());
            if let Some(value) = self.one_string(variable) {
                env.push((
                    Spanned {
                        value: name.to_string(),
                        span,
                    },
                    value,
                ));
            }
        }
        env
    }

    fn ding(&mut self, node: &KdlNode) -> RawDing {
        let children_names = ding_children();
        let mut ding = RawDing {
            node: span_of!(node.name().span()),
            delivery: None,
            adapter: None,
            tunables: Vec::new(),
        };
        let Some(children) = self.block(node, &children_names) else {
            return ding;
        };
        for child in self.known_children(children, "in `ding`", &children_names, true) {
            match child.name().value() {
                "delivery" => ding.delivery = self.one_string(child),
                "adapter" => ding.adapter = Some(self.adapter(child)),
                name => {
                    let Some(key) = TunableKey::from_name(name) else {
                        continue;
                    };
                    if let Some(value) = self.tunable(child, key) {
                        ding.tunables.push((key, value));
                    }
                }
            }
        }
        ding
    }

    fn adapter(&mut self, node: &KdlNode) -> RawAdapter {
        let mut adapter = RawAdapter {
            node: span_of!(node.name().span()),
            command: None,
        };
        if let Some(children) = self.block(node, &ADAPTER_CHILDREN) {
            for child in self.known_children(children, "in `adapter`", &ADAPTER_CHILDREN, true) {
                adapter.command = Some(self.argv(child));
            }
        }
        adapter
    }

    fn tunable(&mut self, node: &KdlNode, key: TunableKey) -> Option<Spanned<RawScalar>> {
        let (value, span) = self.one_value(node)?;
        match (value, key.kind()) {
            (KdlValue::String(text), TunableKind::Duration) => Some(Spanned {
                value: RawScalar::Text(text.clone()),
                span,
            }),
            (KdlValue::Integer(count), TunableKind::Count) => Some(Spanned {
                value: RawScalar::Integer(*count),
                span,
            }),
            (KdlValue::Bool(flag), TunableKind::Flag) => Some(Spanned {
                value: RawScalar::Flag(*flag),
                span,
            }),
            (other, TunableKind::Duration) => {
                let hint = match other {
                    KdlValue::Integer(number) => format!(
                        "durations are strings with a unit: write `{} \"{number}ms\"` or `\"{number}s\"`",
                        key.name()
                    ),
                    _ => format!("write `{}`", example(key.name())),
                };
                self.error(
                    Diagnostic::error(
                        span,
                        format!(
                            "`{}` expects a duration string, found {}",
                            key.name(),
                            kind_of(other)
                        ),
                    )
                    .hint(hint),
                );
                None
            }
            (other, TunableKind::Count) => {
                self.wrong_type(node, other, span, "an integer");
                None
            }
            (other, TunableKind::Flag) => {
                self.wrong_type(node, other, span, "#true or #false");
                None
            }
        }
    }
}
