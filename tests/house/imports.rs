//! The imports between the files of one crate, read from its source as text: which module
//! each file is, which modules of the same crate it names by path (`crate::`, `super::`,
//! `self::`, in `use` statements and inline), and the circles those names make.
//!
//! A name that resolves to a file's own ancestor or descendant (a child using its parent's
//! error type, a parent re-exporting its child's) is not counted: a module and its children are
//! one piece by construction. Comments and literals are skipped; names reached only through a
//! re-export of a parent are seen at the parent, so a circle through one is not caught.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's files by module path (`adapter::reading`), with what each names.
pub struct Crate {
    files: BTreeMap<Vec<String>, PathBuf>,
    /// For each file's module, the modules it names, with the words it named them by.
    names: BTreeMap<Vec<String>, BTreeMap<Vec<String>, BTreeSet<String>>>,
}

/// Files that import each other in a loop, each with the file it imports next and the
/// names it takes from it.
pub type Circle = Vec<(PathBuf, PathBuf, Vec<String>)>;

impl Crate {
    /// The crate whose root (`lib.rs` or `main.rs`) is in `src`.
    pub fn read(src: &Path) -> std::io::Result<Self> {
        let mut files = BTreeMap::new();
        collect(src, src, &mut files)?;
        let mut names = BTreeMap::new();
        for (module, path) in &files {
            let text = std::fs::read_to_string(path)?;
            let mut named: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
            for reference in references(&uncommented(&text)) {
                if let Some((target, word)) = resolve(module, &reference, &files) {
                    if !is_ancestor(&target, module) && !is_ancestor(module, &target) {
                        named.entry(target).or_default().insert(word);
                    }
                }
            }
            names.insert(module.clone(), named);
        }
        Ok(Self { files, names })
    }

    /// Every circle of files (each strongly connected set of two or more), files named as the
    /// paths they were read from.
    pub fn circles(&self) -> Vec<Circle> {
        let modules: Vec<&Vec<String>> = self.files.keys().collect();
        let index: BTreeMap<&Vec<String>, usize> = modules.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let edges: Vec<Vec<usize>> =
            modules.iter().map(|m| self.names[*m].keys().filter_map(|t| index.get(t).copied()).collect()).collect();
        strongly_connected(&edges)
            .into_iter()
            .filter(|set| set.len() > 1)
            .map(|set| {
                let mut ties = Vec::new();
                for &from in &set {
                    for &to in &edges[from] {
                        if set.contains(&to) {
                            let words = self.names[modules[from]][modules[to]].iter().cloned().collect();
                            ties.push((self.files[modules[from]].clone(), self.files[modules[to]].clone(), words));
                        }
                    }
                }
                ties
            })
            .collect()
    }
}

/// Each `.rs` file under `dir` by its module path from `src`.
fn collect(src: &Path, dir: &Path, files: &mut BTreeMap<Vec<String>, PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(src, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).expect("under src").with_extension("");
            let mut module: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                module.pop();
            }
            files.insert(module, path);
        }
    }
    Ok(())
}

/// The code of `text` alone, in ASCII: comments (line, block and doc) and the contents of
/// string, raw string and char literals dropped, any other non-ASCII character a space. A path
/// in prose or in a message is then not read as an import, and the text can be walked byte by
/// byte.
fn uncommented(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let ident_at = |j: usize| chars[j].is_alphanumeric() || chars[j] == '_';
        // `r` opens a raw string after a non-identifier, or after the `b` of `br"..."`.
        let raw_can_open = i == 0 || !ident_at(i - 1) || (chars[i - 1] == 'b' && (i == 1 || !ident_at(i - 2)));
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && raw_can_open && (at(i + 1) == '"' || at(i + 1) == '#') {
            // A raw string: `r"..."`, `r#"..."#` (quotes inside), `br"..."`.
            let mut hashes = 0;
            let mut j = i + 1;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() && !(chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#')) {
                j += 1;
            }
            out.push_str("\"\"");
            i = j + 1 + hashes;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal (`'a'`, `'"'`, `'\''`); a lifetime (`'a`) is kept.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            out.push_str("' '");
            i += 1;
        } else {
            out.push(if c.is_ascii() { c } else { ' ' });
            i += 1;
        }
    }
    out
}

/// Every path starting at `crate`, `super` or `self`, a `use` tree's braces expanded:
/// `use super::{a, b::{C, D}}` gives `super::a`, `super::b::C`, `super::b::D`.
fn references(text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_ident(bytes[i - 1] as char) && bytes[i - 1] != b':';
        let head = ["crate::", "super::", "self::"].iter().find(|h| text[i..].starts_with(**h));
        match head {
            Some(_) if starts_word => {
                let (paths, end) = tree(text, i);
                found.extend(paths);
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    found
}

/// The paths of the `use` tree (or plain path) starting at `at`, and where it ends.
fn tree(text: &str, at: usize) -> (Vec<Vec<String>>, usize) {
    let bytes = text.as_bytes();
    let mut prefix = Vec::new();
    let mut i = at;
    loop {
        let start = i;
        while i < bytes.len() && is_ident(bytes[i] as char) {
            i += 1;
        }
        if i > start {
            prefix.push(text[start..i].to_string());
        }
        if text[i..].starts_with("::") {
            i += 2;
            if text[i..].starts_with('{') {
                let mut paths = Vec::new();
                i += 1;
                loop {
                    while i < bytes.len() && (bytes[i] as char).is_whitespace() {
                        i += 1;
                    }
                    if i >= bytes.len() || bytes[i] == b'}' {
                        return (paths, i + 1);
                    }
                    let (inner, end) = tree(text, i);
                    paths.extend(inner.into_iter().map(|tail| prefix.iter().cloned().chain(tail).collect()));
                    // A glob (`*`) or anything else that is not a path: stepped over.
                    i = end.max(i + 1);
                    while i < bytes.len() && (bytes[i] as char).is_whitespace() {
                        i += 1;
                    }
                    if i < bytes.len() && bytes[i] == b',' {
                        i += 1;
                    }
                }
            }
            continue;
        }
        // `name as alias` in a use tree: the alias is not a path.
        let rest = text[i..].trim_start();
        if let Some(after) = rest.strip_prefix("as ") {
            let skipped = text.len() - after.trim_start().len();
            let mut j = skipped;
            while j < bytes.len() && (is_ident(bytes[j] as char)) {
                j += 1;
            }
            return (vec![prefix], j);
        }
        return (if prefix.is_empty() { Vec::new() } else { vec![prefix] }, i);
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The file `path` names from the file of `module`, and the word it names it by (the first
/// segment past the module, or the module's own name when the path stops at it).
fn resolve(
    module: &[String],
    path: &[String],
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<(Vec<String>, String)> {
    let mut base: Vec<String> = match path.first()?.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => module.to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        base.pop()?;
    }
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    for segment in rest {
        let mut deeper = base.clone();
        deeper.push(segment.clone());
        if files.contains_key(&deeper) {
            base = deeper;
        } else if segment == "self" {
            break;
        } else {
            return Some((base, segment.clone()));
        }
    }
    let word = base.last().cloned().unwrap_or_default();
    files.contains_key(&base).then_some((base, word))
}

fn is_ancestor(ancestor: &[String], of: &[String]) -> bool {
    ancestor.len() <= of.len() && of[..ancestor.len()] == *ancestor
}

/// Tarjan's strongly connected components of the graph `edges` (node: its successors).
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        sets: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.edges[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    set.push(w);
                    if w == v {
                        break;
                    }
                }
                self.sets.push(set);
            }
        }
    }
    let n = edges.len();
    let mut walk = Walk {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        sets: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    walk.sets
}
