//! Checking a declaration: its bytes parsed, lowered and preflighted into
//! diagnostics and agents, and loading a file that must check.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::diagnostic::{self, Diagnostic};
use super::limits::{self, MAX_DECLARATION_BYTES};
use super::source::Source;
use super::spec::AgentSpec;
use super::{lower, raw, syntax};

/// The outcome of checking one declaration.
#[derive(Clone, Debug)]
pub struct Checked {
    pub source: Source,
    /// Errors and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// Every declared agent, in file order; empty whenever there is an
    /// error, so a half-valid file is never half-used.
    pub agents: Vec<AgentSpec>,
}

impl Checked {
    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn warning_count(&self) -> usize {
        self.diagnostics.len() - self.error_count()
    }

    pub fn has_errors(&self) -> bool {
        self.error_count() > 0
    }

    /// Every diagnostic as `file:line:col: severity: message` plus hints,
    /// in source order.
    pub fn render_diagnostics(&self) -> String {
        diagnostic::render_all(&self.source, &self.diagnostics, true)
    }

    /// The same without the file name: `line:col: severity: message`.
    pub fn render_positioned(&self) -> String {
        diagnostic::render_all(&self.source, &self.diagnostics, false)
    }
}

/// Checks declaration bytes. `origin` names the file in diagnostics;
/// `base_dir` is the absolute directory relative paths resolve against.
pub fn check_bytes(origin: &str, bytes: &[u8], base_dir: &Path) -> Checked {
    let mut diagnostics = Vec::new();
    let (source, refused) = limits::decode(origin, bytes);
    if let Some(diagnostic) = refused {
        return Checked {
            source,
            diagnostics: vec![diagnostic],
            agents: Vec::new(),
        };
    }
    let mut agents = Vec::new();
    if let Some(document) = syntax::parse(&source, &mut diagnostics) {
        let raw = raw::read(&source, &document, &mut diagnostics);
        if raw.agents.is_empty() && diagnostics.iter().all(|d| !d.is_error()) {
            diagnostics.push(
                Diagnostic::error(0..0, "declaration declares no agent")
                    .hint("add `agent \"NAME\" { command \"prog\" }`"),
            );
        }
        agents = lower::lower(&raw, base_dir, &mut diagnostics);
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        agents.clear();
    }
    Checked {
        source,
        diagnostics,
        agents,
    }
}

/// Reads and checks a declaration file. Relative paths in it resolve
/// against the file's directory. `Err` only for files that cannot be read;
/// an invalid declaration is an `Ok` with errors in it.
pub fn check_file(path: &Path) -> Result<Checked> {
    let base_dir = declaration_dir(path)?;
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut bytes = Vec::new();
    // One byte past the limit is enough to know the file is too large.
    file.take(MAX_DECLARATION_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(check_bytes(&path.display().to_string(), &bytes, &base_dir))
}

/// A declaration with errors, every diagnostic rendered. Its own type, so
/// that every command exits with the same code for an invalid file.
#[derive(Debug)]
pub struct InvalidDeclaration(pub String);

impl std::fmt::Display for InvalidDeclaration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidDeclaration {}

/// [`check_file`] for callers that only want valid agents: any error in
/// the declaration is an [`InvalidDeclaration`] carrying every rendered
/// diagnostic.
pub fn load_file(path: &Path) -> Result<Vec<AgentSpec>> {
    let checked = check_file(path)?;
    if checked.has_errors() {
        return Err(InvalidDeclaration(format!(
            "invalid declaration {}:\n{}",
            path.display(),
            checked.render_diagnostics().trim_end()
        ))
        .into());
    }
    Ok(checked.agents)
}

/// The canonical directory of a declaration file. Canonical (symlinks and
/// `..` resolved), so that `ding check ../fleet/a.kdl` and `ding check
/// /srv/fleet/a.kdl` lower the same file to the same paths and fingerprints.
fn declaration_dir(path: &Path) -> Result<PathBuf> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let absolute = std::fs::canonicalize(parent)
        .with_context(|| format!("cannot resolve the directory of {}", path.display()))?;
    if absolute.to_str().is_none() {
        bail!(
            "the directory of {} is not valid UTF-8; declarations need UTF-8 paths",
            path.display()
        );
    }
    Ok(absolute)
}
