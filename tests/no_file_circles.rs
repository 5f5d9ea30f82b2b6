//! Layers run one way down to the file: no two files of `src/` import each
//! other, directly or around a circle (issue 37). The graph is read from
//! each file's non-test code (a `#[cfg(test)]` item may use anything): its
//! `use crate::`, `use super::` and `use self::` lines, braces expanded, and
//! the same paths written inline (`super::down::stop(..)`), each resolved
//! to the deepest module file it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every module file under `src`, by its module path (`bin/` left out: a
/// binary is no layer of the library).
fn module_files(src: &Path) -> BTreeMap<Module, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("read src")
            .map(|entry| entry.expect("an entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, src, out);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let rel_text = rel.to_string_lossy().into_owned();
            let mut parts: Module = rel_text
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_owned)
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            if parts.first().map(String::as_str) == Some("bin") {
                continue;
            }
            out.insert(parts, rel_text);
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The text without its `#[cfg(test)]` items.
fn without_tests(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("#[cfg(test)]") {
            kept.push(lines[i]);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        if j < lines.len() && lines[j].contains('{') {
            let mut depth = braces(lines[j]);
            let mut k = j + 1;
            while k < lines.len() && depth > 0 {
                depth += braces(lines[k]);
                k += 1;
            }
            i = k;
        } else {
            i = j + 1;
        }
    }
    kept.join("\n")
}

fn braces(line: &str) -> i64 {
    line.matches('{').count() as i64 - line.matches('}').count() as i64
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `text` at byte `at` starts a word (no word character before).
fn starts_word(text: &str, at: usize) -> bool {
    text[..at].chars().next_back().is_none_or(|c| !is_word(c))
}

/// The paths a file's code names: whole `use` statements, then the inline
/// `crate::`/`super::`/`self::` paths of the rest.
fn named_paths(text: &str) -> Vec<String> {
    let code: String = text
        .split('\n')
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("use") {
        let start = at + found;
        let after = &code[start + 3..];
        let trimmed = after.trim_start();
        let is_use = starts_word(&code, start)
            && after.starts_with(char::is_whitespace)
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|root| trimmed.starts_with(root));
        match (is_use, trimmed.find(';')) {
            (true, Some(end)) => {
                rest.push_str(&code[at..start]);
                paths.push(
                    trimmed[..end]
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .collect(),
                );
                at = code.len() - trimmed.len() + end + 1;
            }
            _ => {
                rest.push_str(&code[at..start + 3]);
                at = start + 3;
            }
        }
    }
    rest.push_str(&code[at..]);
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = rest[from..].find(root) {
            let start = from + found;
            from = start + root.len();
            if !starts_word(&rest, start) {
                continue;
            }
            let mut end = start + root.len() - 2;
            while rest[end..].starts_with("::") {
                let word: usize = rest[end + 2..]
                    .chars()
                    .take_while(|&c| is_word(c))
                    .map(char::len_utf8)
                    .sum();
                if word == 0 {
                    break;
                }
                end += 2 + word;
            }
            paths.push(rest[start..end].to_string());
        }
    }
    paths
}

/// `crate::a::{b, c::{d}}` as `crate::a::b` and `crate::a::c::d`.
fn expand(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else {
        return vec![path.to_string()];
    };
    if !path.ends_with('}') {
        return vec![path.to_string()];
    }
    let (head, body) = (&path[..open], &path[open + 1..path.len() - 1]);
    let mut items = Vec::new();
    let (mut depth, mut current) = (0, String::new());
    for c in body.chars() {
        match c {
            ',' if depth == 0 => items.push(std::mem::take(&mut current)),
            '{' => {
                depth += 1;
                current.push(c);
            }
            '}' => {
                depth -= 1;
                current.push(c);
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
        .iter()
        .flat_map(|item| expand(item))
        .map(|tail| format!("{head}{tail}"))
        .collect()
}

fn import_graph(src: &Path) -> (Vec<String>, BTreeMap<String, BTreeSet<String>>) {
    let files = module_files(src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, rel) in &files {
        let text = std::fs::read_to_string(src.join(rel)).expect("a source file");
        for named in named_paths(&without_tests(&text)) {
            for path in expand(&named) {
                let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
                let mut current: Module = match segments.first().copied() {
                    Some("crate") => {
                        segments.remove(0);
                        Vec::new()
                    }
                    Some("self") => {
                        segments.remove(0);
                        module.clone()
                    }
                    _ => {
                        let mut current = module.clone();
                        while segments.first() == Some(&"super") {
                            current.pop();
                            segments.remove(0);
                        }
                        current
                    }
                };
                let base = current.len();
                let target = (0..=segments.len()).rev().find_map(|k| {
                    current.truncate(base);
                    current.extend(segments[..k].iter().map(|s| s.to_string()));
                    files.get(&current)
                });
                if let Some(target) = target
                    && target != rel
                {
                    edges.entry(rel.clone()).or_default().insert(target.clone());
                }
            }
        }
    }
    (files.into_values().collect(), edges)
}

/// The strongly connected sets of more than one file (Tarjan).
fn circles(nodes: &[String], edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            if let Some(targets) = self.edges.get(v) {
                for w in targets {
                    if !self.index.contains_key(w.as_str()) {
                        self.visit(w);
                        let low = self.low[v].min(self.low[w.as_str()]);
                        self.low.insert(v, low);
                    } else if self.on_stack.contains(w.as_str()) {
                        let low = self.low[v].min(self.index[w.as_str()]);
                        self.low.insert(v, low);
                    }
                }
            }
            if self.low[v] == self.index[v] {
                let mut circle = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    circle.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if circle.len() > 1 {
                    circle.sort();
                    self.found.push(circle);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in nodes {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_files_of_src_import_each_other_around_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (nodes, edges) = import_graph(&src);
    assert!(
        edges.values().map(BTreeSet::len).sum::<usize>() > 500,
        "the graph was not read: {} arrows",
        edges.values().map(BTreeSet::len).sum::<usize>()
    );
    assert_eq!(circles(&nodes, &edges), Vec::<Vec<String>>::new());
}

/// The reader sees what it must: a `use` group, an inline path, a circle.
#[test]
fn the_reader_finds_groups_inline_paths_and_circles() {
    assert_eq!(
        expand("super::{a,b::{c,d}}"),
        ["super::a", "super::b::c", "super::b::d"]
    );
    let text = "use super::{down, up::load};\nfn f() { super::launch::go(); } // crate::x::y\n#[cfg(test)]\nmod tests {\n    use crate::z;\n}\n";
    let paths = named_paths(&without_tests(text));
    assert_eq!(paths, ["super::{down,up::load}", "super::launch::go"]);
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a.rs", "b.rs"),
        ("b.rs", "c.rs"),
        ("c.rs", "a.rs"),
        ("c.rs", "d.rs"),
    ]
    .into_iter()
    .fold(BTreeMap::new(), |mut edges, (from, to)| {
        edges
            .entry(from.to_string())
            .or_default()
            .insert(to.to_string());
        edges
    });
    let nodes: Vec<String> = ["a.rs", "b.rs", "c.rs", "d.rs"].map(String::from).to_vec();
    assert_eq!(circles(&nodes, &edges), [["a.rs", "b.rs", "c.rs"]]);
}
