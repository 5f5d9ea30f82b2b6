//! Layers run one way (issue 37). The product's rooms stand on floors and
//! a room imports only rooms on its own floor or below, never around a
//! circle; no two files import each other, directly or around a circle; and
//! nothing in the product names the evaluation, which stands above it all
//! as a binary of its own (`src/eval/`, `ding-eval`).
//!
//! The graph is read from each file's non-test code (a `#[cfg(test)]` item
//! may use anything): its `use crate::`, `use super::`, `use self::` (and,
//! in the evaluation, `use ding::`) lines, braces expanded, and the same
//! paths written inline (`super::down::stop(..)`), each resolved to the
//! deepest module file it names. Where provider names may appear is
//! `tests/core_neutrality.rs`'s part of the same rule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every module file of the crate whose root file is in `root`, by its
/// module path, named by its path under `src` (`bin/` and `skip` left out).
fn module_files(src: &Path, root: &Path, skip: &[&str]) -> BTreeMap<Module, String> {
    fn walk(
        dir: &Path,
        src: &Path,
        root: &Path,
        skip: &[&str],
        out: &mut BTreeMap<Module, String>,
    ) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("read src")
            .map(|entry| entry.expect("an entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let rel_text = path
                .strip_prefix(src)
                .expect("under src")
                .to_string_lossy()
                .into_owned();
            if skip.contains(&rel_text.as_str()) {
                continue;
            }
            if path.is_dir() {
                walk(&path, src, root, skip, out);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let in_crate = path.strip_prefix(root).expect("under the crate's root");
            let mut parts: Module = in_crate
                .to_string_lossy()
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
    walk(root, src, root, skip, &mut out);
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

/// Whether `text` at byte `at` starts a path (no word character and no
/// `::` before it).
fn starts_word(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !is_word(c) && c != ':')
}

/// The modules `text` declares as files of its own (`mod name;`).
fn declared_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub(super) "))
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            name.chars().all(is_word).then(|| name.to_string())
        })
        .collect()
}

/// The paths a file's code names from `roots` (`crate::`, `super::`,
/// `self::`, and the library's name in the evaluation): whole `use`
/// statements, then the inline paths of the rest.
fn named_paths(text: &str, roots: &[&str]) -> Vec<String> {
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
            && roots.iter().any(|root| trimmed.starts_with(root));
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
    for root in roots {
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

/// The roots a library file's paths start from.
const LIBRARY_ROOTS: [&str; 3] = ["crate::", "super::", "self::"];

/// The roots an evaluation file's paths start from: its own, and the
/// library's by its name.
const EVALUATION_ROOTS: [&str; 4] = ["crate::", "super::", "self::", "ding::"];

/// One crate of the package: its module files, and the roots its paths
/// start from.
struct Crate {
    files: BTreeMap<Module, String>,
    roots: &'static [&'static str],
}

/// The library (`src/lib.rs` and its modules; the `ding` binary's
/// `main.rs` is a shell around its `cli`) and the evaluation (`src/eval/`,
/// the `ding-eval` binary).
fn crates(src: &Path) -> (Crate, Crate) {
    let library = Crate {
        files: module_files(src, src, &["eval", "main.rs"]),
        roots: &LIBRARY_ROOTS,
    };
    let evaluation = Crate {
        files: module_files(src, &src.join("eval"), &[]),
        roots: &EVALUATION_ROOTS,
    };
    (library, evaluation)
}

/// Every file's imports, file to file (by path under `src`): `of`'s files,
/// resolving `ding::` paths in `library`.
fn import_graph(
    src: &Path,
    of: &Crate,
    library: &Crate,
    edges: &mut BTreeMap<String, BTreeSet<String>>,
) {
    for (module, rel) in &of.files {
        let text = without_tests(&std::fs::read_to_string(src.join(rel)).expect("a source file"));
        // A parent names its own modules by bare paths (`screen::read`).
        let children: Vec<String> = declared_modules(&text)
            .into_iter()
            .map(|child| format!("{child}::"))
            .collect();
        let roots: Vec<&str> = of
            .roots
            .iter()
            .copied()
            .chain(children.iter().map(String::as_str))
            .collect();
        for named in named_paths(&text, &roots) {
            for path in expand(&named) {
                let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
                let (files, mut current) = match segments.first().copied() {
                    Some("crate") => {
                        segments.remove(0);
                        (&of.files, Vec::new())
                    }
                    Some("ding") => {
                        segments.remove(0);
                        (&library.files, Vec::new())
                    }
                    Some("self") => {
                        segments.remove(0);
                        (&of.files, module.clone())
                    }
                    _ => {
                        let mut current = module.clone();
                        while segments.first() == Some(&"super") {
                            current.pop();
                            segments.remove(0);
                        }
                        (&of.files, current)
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
}

/// Both crates' imports, file to file.
fn whole_graph(src: &Path) -> (Vec<String>, BTreeMap<String, BTreeSet<String>>) {
    let (library, evaluation) = crates(src);
    let mut edges = BTreeMap::new();
    import_graph(src, &library, &library, &mut edges);
    import_graph(src, &evaluation, &library, &mut edges);
    let nodes = library
        .files
        .into_values()
        .chain(evaluation.files.into_values())
        .collect();
    (nodes, edges)
}

/// The product's floors, from the bottom (`docs/architecture.md`): a room
/// imports only rooms on its own floor or below. The base, floor 0, is the
/// top-level files of `src/`; the evaluation stands above them all.
const FLOORS: [(&str, u32); 8] = [
    ("core", 1),
    ("decl", 2),
    ("pty", 2),
    ("sidecar", 2),
    ("adapter", 3),
    ("providers", 4),
    ("demo", 4),
    ("cli", 5),
];

/// The floor of the evaluation, above every product room.
const EVALUATION_FLOOR: u32 = 6;

/// The room of a file (by its path under `src`): its first folder, or
/// `base` for a top-level file.
fn room(file: &str) -> &str {
    file.split_once('/').map_or("base", |(room, _)| room)
}

/// The floor of a room; `None` for a room the table does not place.
fn floor(room: &str) -> Option<u32> {
    match room {
        "base" => Some(0),
        "eval" => Some(EVALUATION_FLOOR),
        _ => FLOORS
            .iter()
            .find(|(name, _)| *name == room)
            .map(|(_, floor)| *floor),
    }
}

/// The rooms' imports, room to room, each with one file arrow as its
/// example.
fn room_graph(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<(String, String), String> {
    let mut rooms = BTreeMap::new();
    for (from, targets) in edges {
        for to in targets {
            let (a, b) = (room(from), room(to));
            if a != b {
                rooms
                    .entry((a.to_string(), b.to_string()))
                    .or_insert_with(|| format!("{from} -> {to}"));
            }
        }
    }
    rooms
}

/// Every arrow against the floors: into a room above, from or into a room
/// no floor holds.
fn against_the_floors(rooms: &BTreeMap<(String, String), String>) -> Vec<String> {
    let mut found = Vec::new();
    for ((from, to), example) in rooms {
        match (floor(from), floor(to)) {
            (Some(a), Some(b)) if b <= a => {}
            (Some(a), Some(b)) => found.push(format!(
                "{from} (floor {a}) imports {to} (floor {b}): {example}"
            )),
            _ => found.push(format!("a room no floor holds: {example}")),
        }
    }
    found
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
    let (nodes, edges) = whole_graph(&src);
    let arrows = edges.values().map(BTreeSet::len).sum::<usize>();
    assert!(arrows > 500, "the graph was not read: {arrows} arrows");
    assert!(
        edges.keys().any(|file| file.starts_with("eval/")),
        "the evaluation's files were read"
    );
    assert_eq!(circles(&nodes, &edges), Vec::<Vec<String>>::new());
}

/// Each room imports only rooms on its own floor or below, and the rooms
/// make no circle (two rooms on one floor import one way).
#[test]
fn each_room_imports_only_its_floor_or_below_and_rooms_make_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (_, edges) = whole_graph(&src);
    let rooms = room_graph(&edges);
    assert!(
        rooms.contains_key(&("eval".to_string(), "cli".to_string())),
        "the evaluation's arrows into the product were read"
    );
    assert_eq!(against_the_floors(&rooms), Vec::<String>::new());
    let names: BTreeSet<String> = rooms
        .keys()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let room_edges = rooms.keys().fold(
        BTreeMap::<String, BTreeSet<String>>::new(),
        |mut edges, (from, to)| {
            edges.entry(from.clone()).or_default().insert(to.clone());
            edges
        },
    );
    let names: Vec<String> = names.into_iter().collect();
    assert_eq!(circles(&names, &room_edges), Vec::<Vec<String>>::new());
}

/// Nothing in the product names the evaluation: no library file declares
/// it as a module or pulls one of its files in by path, and the
/// evaluation is the `ding-eval` binary's root, not a module of `ding`.
#[test]
fn nothing_in_the_product_names_the_evaluation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let (library, _) = crates(&src);
    let mut named = Vec::new();
    for rel in library.files.values().chain([&"main.rs".to_string()]) {
        let code = without_tests(&std::fs::read_to_string(src.join(rel)).expect("source"));
        for (number, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            if line.contains("mod eval") || (line.contains("#[path") && line.contains("eval")) {
                named.push(format!("{rel}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert_eq!(named, Vec::<String>::new());
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.contains("name = \"ding-eval\"\npath = \"src/eval/main.rs\""),
        "ding-eval's root is src/eval/main.rs"
    );
}

/// The reader sees what it must: a `use` group, an inline path, a circle.
#[test]
fn the_reader_finds_groups_inline_paths_and_circles() {
    assert_eq!(
        expand("super::{a,b::{c,d}}"),
        ["super::a", "super::b::c", "super::b::d"]
    );
    let text = "use super::{down, up::load};\nfn f() { super::launch::go(); } // crate::x::y\n#[cfg(test)]\nmod tests {\n    use crate::z;\n}\n";
    let paths = named_paths(&without_tests(text), &LIBRARY_ROOTS);
    assert_eq!(paths, ["super::{down,up::load}", "super::launch::go"]);
    let evaluation =
        "use ding::cli::help;\nuse crate::row::Row;\nfn f() { ding::wait::wait_until(); }\n";
    assert_eq!(
        named_paths(evaluation, &EVALUATION_ROOTS),
        [
            "ding::cli::help",
            "crate::row::Row",
            "ding::wait::wait_until"
        ]
    );
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

/// The floor check sees what it must: an arrow down or across a floor
/// passes, one up a floor or out of the table fails, with its example.
#[test]
fn an_arrow_up_a_floor_or_into_an_unplaced_room_is_found() {
    let arrows = |pairs: &[(&str, &str)]| -> BTreeMap<(String, String), String> {
        pairs
            .iter()
            .map(|(a, b)| {
                (
                    (a.to_string(), b.to_string()),
                    format!("{a}/x.rs -> {b}/y.rs"),
                )
            })
            .collect()
    };
    let fine = arrows(&[
        ("cli", "providers"),
        ("sidecar", "pty"),
        ("core", "base"),
        ("eval", "cli"),
    ]);
    assert_eq!(against_the_floors(&fine), Vec::<String>::new());
    assert_eq!(
        against_the_floors(&arrows(&[("providers", "cli")])),
        ["providers (floor 4) imports cli (floor 5): providers/x.rs -> cli/y.rs"]
    );
    assert_eq!(
        against_the_floors(&arrows(&[("providers", "eval")])),
        ["providers (floor 4) imports eval (floor 6): providers/x.rs -> eval/y.rs"]
    );
    assert_eq!(
        against_the_floors(&arrows(&[("core", "attic")])),
        ["a room no floor holds: core/x.rs -> attic/y.rs"]
    );
    assert_eq!(room("sidecar/runtime.rs"), "sidecar");
    assert_eq!(room("wait.rs"), "base");
}
