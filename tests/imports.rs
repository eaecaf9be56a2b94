//! The import graph of `src/`: every `crate::`, `super::` and `self::` path of every file (unit
//! tests included) is resolved to the module it names, and
//!
//! - between the top-level modules, every edge must point down [`LAYERS`] (a module imports only
//!   modules of lower layers, never one of its own layer), and every top-level module must have
//!   a place in it;
//! - inside every folder module (`select/`, `validate/`, ...), the files and subfolders must not
//!   form a circle (strongly connected components of more than one module).
//!
//! `lib.rs` (the facade) and `main.rs` (the clap front over it) are the crate roots and are not
//! checked. The same walk of `src/` also holds every file (crate roots included) under
//! [`MAX_LINES`]: a file that grows past it holds more than one concept and is split. Each check
//! also runs on a small made-up tree, so it is known to fail when it should.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules of `src/` by layer, lowest first: the data's journey from the IR to the
/// command line. Leaves everyone may use come first; `toolchain` (C compilers and emulators per
/// ISA) sits beside the database above the spec vocabulary it names; `project` (layout, opening,
/// the build steps in order) above the steps it calls; `bench`, the `testing` facade and the
/// `fuzz` tests above the engines they measure, expose or feed hostile input.
const LAYERS: &[&[&str]] = &[
    &["error", "words", "clock"],
    &["ir"],
    &["semantics"],
    &["spec"],
    &["database", "toolchain"],
    &["idioms", "rules", "classes"],
    &["project"],
    &["query", "select", "synth", "validate", "kernel"],
    &["port"],
    &["bench"],
    &["cli", "testing", "fuzz"],
];

/// Every `.rs` file under `src/` has fewer lines than this.
const MAX_LINES: usize = 600;

/// A module path below the crate root (`["select", "term"]`).
type ModPath = Vec<String>;

/// The module a file defines: `select/term/mod.rs` and `select/term.rs` are `select::term`.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().expect("a file name");
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

/// The text without comments (doc comments mention paths they do not import).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('/') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("//") {
            rest = tail.find('\n').map_or("", |n| &tail[n..]);
        } else if tail.starts_with("/*") {
            rest = tail.find("*/").map_or("", |n| &tail[n + 2..]);
        } else {
            out.push('/');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Reads a path tree starting at `s`: `a::b::{c, d::e, self}` gives `[a,b,c]`, `[a,b,d,e]`,
/// `[a,b]`.
fn path_tree(s: &[u8]) -> Vec<Vec<String>> {
    fn tree(s: &[u8], at: &mut usize) -> Vec<Vec<String>> {
        let mut prefix = Vec::new();
        loop {
            while *at < s.len() && s[*at].is_ascii_whitespace() {
                *at += 1;
            }
            if *at < s.len() && s[*at] == b'{' {
                *at += 1;
                let mut out = Vec::new();
                loop {
                    for mut p in tree(s, at) {
                        let mut full = prefix.clone();
                        if p.first().map(String::as_str) == Some("self") {
                            p.remove(0);
                        }
                        full.append(&mut p);
                        out.push(full);
                    }
                    while *at < s.len() && s[*at].is_ascii_whitespace() {
                        *at += 1;
                    }
                    match s.get(*at) {
                        Some(b',') => *at += 1,
                        Some(b'}') => {
                            *at += 1;
                            return out;
                        }
                        _ => return out,
                    }
                    while *at < s.len() && s[*at].is_ascii_whitespace() {
                        *at += 1;
                    }
                    if s.get(*at) == Some(&b'}') {
                        *at += 1;
                        return out;
                    }
                }
            }
            let start = *at;
            while *at < s.len() && (s[*at].is_ascii_alphanumeric() || s[*at] == b'_') {
                *at += 1;
            }
            if *at == start {
                return vec![prefix];
            }
            prefix.push(String::from_utf8_lossy(&s[start..*at]).into_owned());
            if s[*at..].starts_with(b"::") {
                *at += 2;
            } else {
                return vec![prefix];
            }
        }
    }
    tree(s, &mut 0)
}

/// Every module path `text` (the file of module `module`) refers to through `crate::`,
/// `super::` or `self::`, resolved from the crate root.
fn references(module: &[String], text: &str) -> Vec<ModPath> {
    let text = strip_comments(text);
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        // Not inside a path already read (`super::super::`) nor part of a longer word.
        let word_start =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || b"_:$".contains(&bytes[i - 1]));
        let anchor = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|a| word_start && bytes[i..].starts_with(a.as_bytes()));
        let Some(anchor) = anchor else {
            i += 1;
            continue;
        };
        for path in path_tree(&bytes[i..]) {
            let mut base: ModPath = match anchor {
                "crate::" => Vec::new(),
                _ => module.to_vec(),
            };
            let mut segments = path.into_iter().skip(1).peekable();
            if anchor == "super::" {
                base.pop();
                while segments.peek().map(String::as_str) == Some("super") {
                    segments.next();
                    base.pop();
                }
            }
            base.extend(segments);
            out.push(base);
        }
        i += anchor.len();
    }
    out
}

/// The files of a source tree: path relative to `src/` and text.
fn source_files(root: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
            }
        }
    }
    out.sort();
    out
}

/// A module graph: for each module, the modules it imports and one file that does.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().expect("v is on the stack");
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// Every violation of the layer order and every circle in the tree, one line each.
fn check(files: &[(std::path::PathBuf, String)]) -> Vec<String> {
    let modules: Vec<(ModPath, &std::path::PathBuf, &str)> = files
        .iter()
        .filter(|(rel, _)| rel != Path::new("lib.rs") && rel != Path::new("main.rs"))
        .map(|(rel, text)| (module_of(rel), rel, text.as_str()))
        .collect();
    let known: BTreeSet<ModPath> = modules
        .iter()
        .flat_map(|(m, _, _)| (1..=m.len()).map(|n| m[..n].to_vec()))
        .collect();
    // Edges between the children of every module: key = parent, then child -> child -> file.
    let mut graphs: BTreeMap<ModPath, Graph> = BTreeMap::new();
    for (module, rel, text) in &modules {
        for target in references(module, text) {
            // The longest module the path names (the rest are items).
            let Some(len) = (1..=target.len())
                .rev()
                .find(|&n| known.contains(&target[..n]))
            else {
                continue;
            };
            let target = &target[..len];
            let common = module
                .iter()
                .zip(target)
                .take_while(|(a, b)| a == b)
                .count();
            if common == module.len() || common == target.len() {
                continue; // a module and its own descendants or ancestors
            }
            graphs
                .entry(module[..common].to_vec())
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .entry(target[common].clone())
                .or_insert_with(|| rel.display().to_string());
        }
    }
    let mut problems = Vec::new();
    let layer_of = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    for top in known.iter().filter(|m| m.len() == 1) {
        if layer_of(&top[0]).is_none() {
            problems.push(format!("{}: a top-level module without a layer", top[0]));
        }
    }
    if let Some(top) = graphs.get(&Vec::new()) {
        for (from, edges) in top {
            for (to, file) in edges {
                if let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) {
                    if b >= a {
                        problems.push(format!(
                            "{file}: {from} (layer {a}) imports {to} (layer {b}), not below it"
                        ));
                    }
                }
            }
        }
    }
    for (parent, graph) in &graphs {
        for circle in circles(graph) {
            let place = if parent.is_empty() {
                "src".to_string()
            } else {
                format!("src/{}", parent.join("/"))
            };
            let files: Vec<String> = circle
                .iter()
                .flat_map(|m| {
                    graph[m]
                        .iter()
                        .filter(|(to, _)| circle.contains(to))
                        .map(move |(to, file)| format!("{m} -> {to} ({file})"))
                })
                .collect();
            problems.push(format!("{place}: circle {}", files.join(", ")));
        }
    }
    problems
}

/// Every file of [`MAX_LINES`] lines or more, one line each: path and line count.
fn oversized(files: &[(std::path::PathBuf, String)]) -> Vec<String> {
    files
        .iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|&(_, lines)| lines >= MAX_LINES)
        .map(|(rel, lines)| format!("src/{}: {lines} lines", rel.display()))
        .collect()
}

#[test]
fn every_source_file_has_fewer_than_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let offenders = oversized(&source_files(&root));
    assert!(
        offenders.is_empty(),
        "files of {MAX_LINES} lines or more (split them by concept):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_size_check_names_every_file_at_the_limit_or_over() {
    let file = |path: &str, lines: usize| (std::path::PathBuf::from(path), "x\n".repeat(lines));
    let files = [
        file("lib.rs", 700),
        file("ir/mod.rs", MAX_LINES - 1),
        file("select/term.rs", MAX_LINES),
        file("small.rs", 3),
    ];
    assert_eq!(
        oversized(&files),
        vec!["src/lib.rs: 700 lines", "src/select/term.rs: 600 lines"]
    );
}

#[test]
fn imports_point_down_and_form_no_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = check(&source_files(&root));
    assert!(
        problems.is_empty(),
        "import problems:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_finds_upward_imports_circles_and_unplaced_modules() {
    let tree = |files: &[(&str, &str)]| -> Vec<String> {
        let files: Vec<_> = files
            .iter()
            .map(|(p, t)| (std::path::PathBuf::from(p), t.to_string()))
            .collect();
        check(&files)
    };
    // Downward imports in every form are fine; comments do not count.
    assert_eq!(
        tree(&[
            ("ir/mod.rs", "mod expr;\nuse crate::error::Result;"),
            (
                "ir/expr.rs",
                "// crate::cli::x\nuse super::super::error::Error;"
            ),
            (
                "spec/mod.rs",
                "use crate::{ir::{self, Expr}, semantics::eval};"
            ),
            (
                "semantics/mod.rs",
                "fn f() { crate::ir::expr::Expr::new() }"
            ),
            ("error.rs", ""),
            ("select/a.rs", "use super::b::X;"),
            ("select/b.rs", "use crate::spec::Isa;"),
        ]),
        Vec::<String>::new()
    );
    let problems = tree(&[
        ("ir/mod.rs", "use crate::spec::Isa;"),
        ("spec/mod.rs", "use crate::{ir::Expr};"),
        ("select/a.rs", "use super::{b::X, c};"),
        ("select/b.rs", "fn f() { super::c::g() }"),
        ("select/c/mod.rs", "mod d;"),
        ("select/c/d.rs", "use crate::select::a::Y;"),
        ("orphan.rs", ""),
    ]);
    assert_eq!(
        problems,
        vec![
            "orphan: a top-level module without a layer",
            "ir/mod.rs: ir (layer 1) imports spec (layer 3), not below it",
            "src: circle ir -> spec (ir/mod.rs), spec -> ir (spec/mod.rs)",
            "src/select: circle a -> b (select/a.rs), a -> c (select/a.rs), b -> c (select/b.rs), c -> a (select/c/d.rs)",
        ]
    );
}
