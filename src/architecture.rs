//! The architecture test: reads src/ and fails on an import that runs upward between layers, or
//! on a circle between files. Test modules (`#[cfg(test)] mod ... { }`) are left out: a test may
//! reach anywhere.
//!
//! The layers, top to bottom (see docs/architecture.md):
//!
//! | rank | files | role |
//! |---|---|---|
//! | 0 | `main.rs` | the clap command tree |
//! | 1 | `commands/` | parse and dispatch: request, chain, apply, print |
//! | 2 | `lifecycle/` | `alpha generate`, `alpha update`, `alpha check` |
//! | 3 | `plugins/mod.rs`, `plugins/chain.rs`, `plugins/registry.rs`, `plugins/delete.rs` | the plugin chain |
//! | 4 | `plugins/<plugin>` | each plugin's planning |
//! | 5 | `planning/` | what plugins share: the plugin API, requests, resolving, recording, post-steps |
//! | 6 | everything else | the engine: `plan/`, `project/`, `markers/`, journal, lock, templates, ... |
//!
//! A file may import files of its own rank or lower ones (a higher rank number), never a higher
//! one; and the files, with their imports as edges, must form no cycle.
//!
//! `super::` is read relative to the file's own module, so a module written inline in a file
//! (other than a test module) names what it uses by `crate::` paths.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layer of a file, by its path relative to src/ (with `/` separators).
pub fn rank(file: &str) -> (u8, &'static str) {
    let chain = [
        "plugins/mod.rs",
        "plugins/chain.rs",
        "plugins/registry.rs",
        "plugins/delete.rs",
    ];
    if file == "main.rs" {
        (0, "main")
    } else if file.starts_with("commands/") {
        (1, "commands")
    } else if file.starts_with("lifecycle/") {
        (2, "lifecycle")
    } else if chain.contains(&file) {
        (3, "the plugin chain")
    } else if file.starts_with("plugins/") {
        (4, "a plugin")
    } else if file.starts_with("planning/") {
        (5, "shared planning")
    } else {
        (6, "the engine")
    }
}

/// The source with comments, string and char literals blanked out (same length, so that line
/// numbers stay), and with test modules removed.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let end = b[j + 1..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| j + 1 + p + close.len());
            for &x in &b[i..end] {
                blank(&mut out, x);
            }
            i = end;
        } else if c == b'"' {
            blank(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            if i < b.len() {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}'), or a lifetime ('a), which is kept.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 3 + p)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match end {
                Some(e) => {
                    for &x in &b[i..e] {
                        blank(&mut out, x);
                    }
                    i = e;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    let code = String::from_utf8(out).expect("only ASCII was replaced");
    strip_test_modules(&code)
}

/// `code` without the `#[cfg(test)]` modules written inline (`mod tests { ... }`).
fn strip_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let t = after.trim_start();
        let is_inline_mod = (t.starts_with("mod ") || t.starts_with("pub mod "))
            && t.find('{')
                .is_some_and(|b| t.find(';').is_none_or(|s| b < s));
        if !is_inline_mod {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        let open = after.find('{').expect("checked above");
        let mut depth = 0usize;
        let mut end = after.len();
        for (k, ch) in after[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The module path of a file under src/ (`plugins/golang/mod.rs` is `plugins::golang`).
fn module_of(file: &str) -> Vec<String> {
    let f = file.strip_suffix(".rs").unwrap_or(file);
    let mut parts: Vec<String> = f.split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "main")) {
        parts.pop();
    }
    parts
}

/// The file that defines the longest module prefix of `path` (a module path from the crate
/// root), if any.
fn file_of(files: &BTreeSet<String>, path: &[String]) -> Option<String> {
    (1..=path.len()).rev().find_map(|n| {
        let p = path[..n].join("/");
        [format!("{p}.rs"), format!("{p}/mod.rs")]
            .into_iter()
            .find(|f| files.contains(f))
    })
}

/// Every path the code names that starts at `crate`, `super`, `self` or one of the file's own
/// child modules, resolved to a module path from the crate root. `use` groups are expanded.
fn named_paths(code: &str, module: &[String], children: &BTreeSet<String>) -> Vec<Vec<String>> {
    // Expand `a::{b, c::{d, self}}` groups of use statements into plain paths first.
    fn expand(prefix: &str, body: &str, out: &mut Vec<String>) {
        let mut depth = 0;
        let mut start = 0;
        let bytes = body.as_bytes();
        let mut pieces = vec![];
        for (k, &c) in bytes.iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                b',' if depth == 0 => {
                    pieces.push(&body[start..k]);
                    start = k + 1;
                }
                _ => {}
            }
        }
        pieces.push(&body[start..]);
        for p in pieces {
            let p = p.trim();
            if p.is_empty() {
                continue;
            }
            if let Some(open) = p.find('{') {
                let head = p[..open].trim().trim_end_matches("::");
                let inner = &p[open + 1..p.rfind('}').unwrap_or(p.len())];
                let pre = join(prefix, head);
                expand(&pre, inner, out);
            } else {
                let p = p.split(" as ").next().unwrap_or(p).trim();
                let p = if p == "self" {
                    prefix.to_string()
                } else {
                    join(prefix, p)
                };
                out.push(p);
            }
        }
    }
    fn join(a: &str, b: &str) -> String {
        match (a.is_empty(), b.is_empty()) {
            (true, _) => b.to_string(),
            (_, true) => a.to_string(),
            _ => format!("{a}::{b}"),
        }
    }
    let mut texts = vec![];
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let stmt_end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            expand("", &rest[at + 4..stmt_end], &mut texts);
        }
        rest = &rest[stmt_end.min(rest.len())..];
        if rest.starts_with(';') {
            rest = &rest[1..];
        }
    }
    // Paths written inline in the code: `crate::x::y`, `super::z`, `child::w`.
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if ident(b[i]) && (i == 0 || !(ident(b[i - 1]) || b[i - 1] == b':')) {
            let mut j = i;
            while j < b.len() && (ident(b[j]) || (b[j] == b':' && b.get(j + 1) == Some(&b':'))) {
                j += if b[j] == b':' { 2 } else { 1 };
            }
            let word = code[i..j].trim_end_matches(':');
            if word.contains("::") {
                texts.push(word.to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    let mut out = vec![];
    for t in texts {
        let mut segs: Vec<&str> = t.split("::").map(str::trim).collect();
        segs.retain(|s| !s.is_empty() && *s != "*");
        let Some(&first) = segs.first() else { continue };
        let mut base: Vec<String> = match first {
            "crate" => vec![],
            "self" => module.to_vec(),
            "super" => module.to_vec(),
            c if children.contains(c) => module.to_vec(),
            _ => continue,
        };
        let mut k = 0;
        if first == "crate" || first == "self" {
            k = 1;
        }
        while segs.get(k) == Some(&"super") {
            base.pop();
            k += 1;
        }
        base.extend(segs[k..].iter().map(|s| s.to_string()));
        out.push(base);
    }
    out
}

/// The import graph of the sources (file → files it imports), from a map of file path (relative
/// to src/) to its text.
pub fn graph(sources: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let files: BTreeSet<String> = sources.keys().cloned().collect();
    let mut g = BTreeMap::new();
    for (file, text) in sources {
        let code = code_only(text);
        let module = module_of(file);
        let children: BTreeSet<String> = code
            .lines()
            .filter_map(|l| {
                let t = l.trim();
                let t = t.strip_prefix("pub ").unwrap_or(t);
                let name = t.strip_prefix("mod ")?.strip_suffix(';')?;
                Some(name.trim().to_string())
            })
            .collect();
        let mut to = BTreeSet::new();
        for p in named_paths(&code, &module, &children) {
            if let Some(f) = file_of(&files, &p) {
                if f != *file {
                    to.insert(f);
                }
            }
        }
        g.insert(file.clone(), to);
    }
    g
}

/// Everything wrong with the shape: upward imports and cycles, one line each.
pub fn violations(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = vec![];
    for (from, tos) in g {
        let (rf, lf) = rank(from);
        for to in tos {
            let (rt, lt) = rank(to);
            if rt < rf {
                out.push(format!(
                    "upward import: {from} ({lf}) uses {to} ({lt}), a layer above it"
                ));
            }
        }
    }
    for cycle in cycles(g) {
        out.push(format!(
            "circle: these files import each other: {}",
            cycle.join(", ")
        ));
    }
    out
}

/// The strongly connected components with more than one file (Tarjan's algorithm): files that
/// reach each other through imports, sorted.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        n: usize,
        out: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.n);
            self.low.insert(v, self.n);
            self.n += 1;
            self.stack.push(v);
            self.on.insert(v);
            for w in self.g.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = vec![];
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        n: 0,
        out: vec![],
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// Every .rs file under `dir`, keyed by its path relative to `dir`.
fn read_sources(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).expect("src/ is readable") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under root");
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).expect("readable source"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn src_has_no_upward_import_and_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = read_sources(&src);
    // This checker is a test itself.
    sources.remove("architecture.rs");
    let g = graph(&sources);
    assert!(
        g.values().map(BTreeSet::len).sum::<usize>() > 50,
        "the import graph is implausibly small: the checker reads nothing"
    );
    let v = violations(&g);
    assert!(
        v.is_empty(),
        "the architecture is broken:\n  {}",
        v.join("\n  ")
    );
}

#[cfg(test)]
fn sources(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect()
}

#[test]
fn an_upward_import_is_found_in_every_spelling() {
    let base = [
        ("main.rs", "mod commands;\nmod plugins;\nmod plan;\n"),
        ("commands/mod.rs", "pub mod api;\n"),
        ("plugins/mod.rs", "pub mod golang;\n"),
        ("plugins/golang/mod.rs", "pub mod api;\n"),
        ("plan/mod.rs", "pub mod data;\npub use data::Plan;\n"),
        ("plan/data.rs", "pub struct Plan;\n"),
    ];
    for (spelling, text) in [
        ("use", "use crate::commands::api::MAIN_GO;\n"),
        (
            "group",
            "use crate::{plan::Plan, commands::api::{self, X}};\n",
        ),
        ("inline", "fn f() { crate::commands::api::run(); }\n"),
        ("super", "use super::super::super::commands::api;\n"),
    ] {
        let mut s = sources(&base);
        s.insert("plugins/golang/api.rs".into(), text.into());
        s.insert("commands/api.rs".into(), "pub fn run() {}\n".into());
        let v = violations(&graph(&s));
        assert_eq!(v.len(), 1, "{spelling}: {v:?}");
        assert!(
            v[0].contains("plugins/golang/api.rs") && v[0].contains("commands/api.rs"),
            "{spelling}: {v:?}"
        );
    }
}

#[test]
fn the_engine_folders_are_the_engine_and_import_nothing_above_them() {
    // The engine's rooms (plan/, project/, markers/ and its go/) rank as the engine, whatever
    // their depth, so one of them naming shared planning or a plugin is an upward import.
    for f in [
        "plan/transaction.rs",
        "project/emit.rs",
        "markers/go/imports.rs",
        "markers/mod.rs",
    ] {
        assert_eq!(rank(f), (6, "the engine"), "{f}");
    }
    let base = [
        (
            "main.rs",
            "mod markers;\nmod plan;\nmod planning;\nmod plugins;\n",
        ),
        ("markers/mod.rs", "pub mod go;\npub mod text;\n"),
        ("markers/go/mod.rs", "pub mod imports;\n"),
        ("markers/text.rs", "pub fn lines() {}\n"),
        ("plan/mod.rs", "pub mod edit;\npub mod transaction;\n"),
        ("plan/transaction.rs", "pub struct Transaction;\n"),
        ("planning/mod.rs", "pub mod plugin;\n"),
        ("planning/plugin.rs", "pub struct Cx;\n"),
        ("plugins/mod.rs", "pub mod golang;\n"),
        ("plugins/golang/mod.rs", "pub fn plan() {}\n"),
    ];
    // Within the engine, down and sideways: fine.
    let mut s = sources(&base);
    s.insert(
        "markers/go/imports.rs".into(),
        "use crate::markers::text::lines;\n".into(),
    );
    s.insert(
        "plan/edit.rs".into(),
        "use crate::markers::go::imports;\nuse super::transaction::Transaction;\n".into(),
    );
    assert!(
        violations(&graph(&s)).is_empty(),
        "{:?}",
        violations(&graph(&s))
    );
    // Up, from any depth: found, naming both files.
    for (file, text, to) in [
        (
            "markers/go/imports.rs",
            "use crate::planning::plugin::Cx;\n",
            "planning/plugin.rs",
        ),
        (
            "plan/edit.rs",
            "fn f() { crate::plugins::golang::plan() }\n",
            "plugins/golang/mod.rs",
        ),
        (
            "plan/edit.rs",
            "use super::super::planning::plugin;\n",
            "planning/plugin.rs",
        ),
    ] {
        let mut s = sources(&base);
        s.insert(file.into(), text.into());
        let v = violations(&graph(&s));
        assert_eq!(v.len(), 1, "{file}: {v:?}");
        assert!(v[0].contains(file) && v[0].contains(to), "{file}: {v:?}");
    }
}

#[test]
fn comments_strings_and_tests_are_not_imports_and_circles_are_found() {
    let mut s = sources(&[
        ("main.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "// crate::b::x\nconst S: &str = \"crate::b::y\";\nconst R: &str = r#\"crate::b::z\"#;\nfn f<'a>(c: char) -> bool { c == '{' }\n#[cfg(test)]\nmod tests {\n    use crate::b::x;\n}\n",
        ),
        ("b.rs", "pub fn x() { crate::a::f('}'); }\n"),
    ]);
    assert!(violations(&graph(&s)).is_empty());
    s.insert("a.rs".into(), "fn g() { crate::b::x() }\n".into());
    let v = violations(&graph(&s));
    assert_eq!(v, ["circle: these files import each other: a.rs, b.rs"]);
}

#[test]
fn a_parent_module_and_its_child_make_a_circle() {
    let s = sources(&[
        ("main.rs", "mod plugins;\n"),
        (
            "plugins/mod.rs",
            "pub mod golang;\npub trait Plugin {}\nstatic K: &dyn Plugin = &golang::GoV4;\n",
        ),
        (
            "plugins/golang.rs",
            "use super::Plugin;\npub struct GoV4;\n",
        ),
    ]);
    let v = violations(&graph(&s));
    assert!(
        v.iter().any(|l| l.starts_with("circle: ")),
        "a child using its parent's trait while the parent names the child: {v:?}"
    );
}
