//! Text edits on existing files: insertion above `+kubebuilder:scaffold:<name>` markers, Go import
//! insertion in sorted position, and uncommenting of blocks.
//!
//! Marker syntax is Kubebuilder's: a line whose content, after trimming and removing the comment
//! token (`//` in Go, `#` in YAML, Makefiles and shell), is `+kubebuilder:scaffold:<name>`.
//! Inserted text takes the indentation of the marker line. An insertion is skipped when the
//! fragment's non-blank lines, trimmed, already appear as consecutive non-blank lines of the file.

use std::path::Path;

/// The line-comment token for a file, by extension or name.
pub fn comment_token(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("go") => Some("//"),
        Some("yaml" | "yml" | "sh" | "mk" | "toml") => Some("#"),
        _ if name == "Makefile" || name == "Dockerfile" || name == "PROJECT" => Some("#"),
        _ => None,
    }
}

/// Whether `line` is the marker `name` for the comment token `token`.
pub fn is_marker(line: &str, token: &str, name: &str) -> bool {
    line.trim()
        .strip_prefix(token)
        .map(|rest| rest.trim() == format!("+kubebuilder:scaffold:{name}"))
        .unwrap_or(false)
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Non-blank trimmed lines.
fn significant(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Whether the non-blank lines of `fragment` already appear, consecutively, in `content`.
pub fn contains_fragment(content: &str, fragment: &str) -> bool {
    let needle = significant(fragment);
    if needle.is_empty() {
        return true;
    }
    let hay = significant(content);
    hay.windows(needle.len()).any(|w| w == needle.as_slice())
}

fn split_lines(content: &str) -> (Vec<String>, bool) {
    let trailing_newline = content.ends_with('\n');
    let lines = content.lines().map(str::to_string).collect();
    (lines, trailing_newline)
}

fn join_lines(lines: &[String], trailing_newline: bool) -> String {
    let mut s = lines.join("\n");
    if trailing_newline || lines.is_empty() {
        s.push('\n');
    }
    s
}

fn indent_fragment(fragment: &str, indent: &str) -> Vec<String> {
    fragment
        .trim_end_matches('\n')
        .lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("{indent}{l}")
            }
        })
        .collect()
}

/// Why code cannot be inserted at a marker.
#[derive(Debug, PartialEq)]
pub enum MarkerError {
    /// The marker (as written here) is not in the file.
    Missing(String),
    /// The marker is where inserted code would not be Go code (1-based line).
    Misplaced {
        marker: String,
        line: usize,
        why: &'static str,
    },
    /// The marker appears more than once (1-based lines).
    Duplicate { marker: String, lines: Vec<usize> },
}

impl std::fmt::Display for MarkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MarkerError::Missing(m) => write!(f, "the marker `{m}` is missing"),
            MarkerError::Misplaced { marker, line, why } => write!(
                f,
                "the marker `{marker}` on line {line} is {why}, where inserted code would not compile; move it back to where new code belongs"
            ),
            MarkerError::Duplicate { marker, lines } => write!(
                f,
                "the marker `{marker}` appears more than once (lines {}); keep only the one where new code belongs",
                lines
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
    }
}

/// Where a Go marker line cannot take code: above the package clause, or inside a raw string
/// literal or a block comment. A small lexer over the lines before it; `None` when the line is
/// ordinary Go.
pub fn go_marker_problem(lines: &[String], at: usize) -> Option<&'static str> {
    #[derive(PartialEq)]
    enum St {
        Code,
        Block,
        Raw,
    }
    let mut st = St::Code;
    let mut package = false;
    for line in &lines[..at] {
        let b = line.as_bytes();
        let mut i = 0;
        if st == St::Code {
            let t = line.trim_start();
            if t.starts_with("package") && t[7..].starts_with(|c: char| c.is_whitespace()) {
                package = true;
            }
        }
        while i < b.len() {
            match st {
                St::Block => match line[i..].find("*/") {
                    Some(j) => {
                        i += j + 2;
                        st = St::Code;
                    }
                    None => break,
                },
                St::Raw => match line[i..].find('`') {
                    Some(j) => {
                        i += j + 1;
                        st = St::Code;
                    }
                    None => break,
                },
                St::Code => match b[i] {
                    b'/' if b.get(i + 1) == Some(&b'/') => break,
                    b'/' if b.get(i + 1) == Some(&b'*') => {
                        st = St::Block;
                        i += 2;
                    }
                    b'`' => {
                        st = St::Raw;
                        i += 1;
                    }
                    q @ (b'"' | b'\'') => {
                        i += 1;
                        while i < b.len() && b[i] != q {
                            i += if b[i] == b'\\' { 2 } else { 1 };
                        }
                        i += 1;
                    }
                    _ => i += 1,
                },
            }
        }
    }
    match st {
        St::Raw => Some("inside a raw string literal"),
        St::Block => Some("inside a /* */ comment"),
        St::Code if !package => Some("above the package clause"),
        St::Code => None,
    }
}

/// The one line holding marker `name`, checked: present, not duplicated, and (for Go) where
/// code may go.
fn find_marker(lines: &[String], token: &str, name: &str) -> Result<usize, MarkerError> {
    let marker = format!("{token} +kubebuilder:scaffold:{name}");
    let positions: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| is_marker(l, token, name))
        .map(|(i, _)| i)
        .collect();
    match positions.as_slice() {
        [] => Err(MarkerError::Missing(marker)),
        [at] => {
            if token == "//" {
                if let Some(why) = go_marker_problem(lines, *at) {
                    return Err(MarkerError::Misplaced {
                        marker,
                        line: at + 1,
                        why,
                    });
                }
            }
            Ok(*at)
        }
        many => Err(MarkerError::Duplicate {
            marker,
            lines: many.iter().map(|i| i + 1).collect(),
        }),
    }
}

/// Insert each fragment (unless already present) directly above the line holding the marker.
pub fn insert_above(
    content: &str,
    token: &str,
    name: &str,
    fragments: &[String],
) -> Result<String, MarkerError> {
    let (mut lines, nl) = split_lines(content);
    let mut at = find_marker(&lines, token, name)?;
    let mut current = content.to_string();
    for fragment in fragments {
        // In `#`-comment files a fragment counts as present whether it is commented out or not:
        // YAML fragments are inserted commented and enabled afterwards.
        let present = if token == "#" {
            contains_fragment(&uncomment_all(&current), &uncomment_all(fragment))
        } else {
            contains_fragment(&current, fragment)
        };
        if present {
            continue;
        }
        let indent = indentation(&lines[at]).to_string();
        let new = indent_fragment(fragment, &indent);
        let n = new.len();
        lines.splice(at..at, new);
        at += n;
        current = join_lines(&lines, nl);
    }
    Ok(current)
}

/// One `import` spec: optional name and the path.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportSpec {
    pub name: Option<String>,
    pub path: String,
}

impl ImportSpec {
    pub fn new(name: Option<&str>, path: &str) -> Self {
        ImportSpec {
            name: name.map(str::to_string),
            path: path.to_string(),
        }
    }

    fn line(&self) -> String {
        match &self.name {
            Some(n) => format!("{n} \"{}\"", self.path),
            None => format!("\"{}\"", self.path),
        }
    }

    /// Parse a line of an import block (`"fmt"`, `name "a/b"`, `_ "x"`, with an optional trailing comment).
    fn parse(line: &str) -> Option<ImportSpec> {
        let t = line.trim();
        if t.starts_with("//") || t.is_empty() {
            return None;
        }
        let q = t.find('"')?;
        let end = q + 1 + t[q + 1..].find('"')?;
        let name = t[..q].trim();
        Some(ImportSpec {
            name: (!name.is_empty()).then(|| name.to_string()),
            path: t[q + 1..end].to_string(),
        })
    }
}

/// Import groups in goimports' order: standard library, third party, this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Std,
    Third,
    Local,
}

fn classify(path: &str, module: &str) -> Class {
    if path == module || path.starts_with(&format!("{module}/")) {
        Class::Local
    } else if path
        .split('/')
        .next()
        .is_some_and(|first| first.contains('.'))
    {
        Class::Third
    } else {
        Class::Std
    }
}

/// Add `spec` to the import block that holds the `imports` marker, keeping the file gofmt-clean:
/// into the blank-line-separated group of its class (std / third-party / `module`-local) at its
/// sorted position, or as a new group placed in class order. A spec already imported is left alone.
pub fn insert_go_import(
    content: &str,
    spec: &ImportSpec,
    module: &str,
) -> Result<String, MarkerError> {
    let (mut lines, nl) = split_lines(content);
    // The block ends at the imports marker when there is one, else at the first block's `)`.
    let found = match find_marker(&lines, "//", "imports") {
        Ok(m) => Some(m),
        Err(MarkerError::Missing(_)) => None,
        Err(e) => return Err(e),
    };
    let (open, marker) = match found {
        Some(m) => {
            let open = lines[..m]
                .iter()
                .rposition(|l| l.trim_start().starts_with("import ("))
                .ok_or_else(|| {
                    MarkerError::Missing(
                        "// +kubebuilder:scaffold:imports inside an `import (` block".into(),
                    )
                })?;
            (open, m)
        }
        None => {
            let open = lines
                .iter()
                .position(|l| l.trim_start().starts_with("import ("))
                .ok_or_else(|| {
                    MarkerError::Missing(
                        "// +kubebuilder:scaffold:imports (or an `import (` block)".into(),
                    )
                })?;
            let close = open
                + lines[open..]
                    .iter()
                    .position(|l| l.trim() == ")")
                    .ok_or_else(|| {
                        MarkerError::Missing("the closing `)` of the import block".into())
                    })?;
            (open, close)
        }
    };
    if lines[open + 1..marker]
        .iter()
        .filter_map(|l| ImportSpec::parse(l))
        .any(|s| s.path == spec.path)
    {
        return Ok(content.to_string());
    }
    // Indentation: the marker's, else that of an existing spec, else a tab.
    let indent_src = if lines[marker].trim() == ")" {
        lines[open + 1..marker]
            .iter()
            .find(|l| ImportSpec::parse(l).is_some())
            .cloned()
            .unwrap_or_else(|| "\t".into())
    } else {
        lines[marker].clone()
    };
    let indent = indentation(&indent_src).to_string();
    let new_line = format!("{indent}{}", spec.line());
    let class = classify(&spec.path, module);

    // Groups: runs of non-blank lines between `import (` and the marker.
    let mut groups: Vec<(usize, usize)> = vec![]; // [start, end)
    let mut i = open + 1;
    while i < marker {
        if lines[i].trim().is_empty() {
            i += 1;
            continue;
        }
        let start = i;
        while i < marker && !lines[i].trim().is_empty() {
            i += 1;
        }
        groups.push((start, i));
    }
    let group_class = |&(s, e): &(usize, usize)| {
        lines[s..e]
            .iter()
            .find_map(|l| ImportSpec::parse(l))
            .map(|sp| classify(&sp.path, module))
    };

    // The group directly above the marker (no blank line between) ends at the marker.
    if let Some(g) = groups
        .iter()
        .rev()
        .find(|g| group_class(g) == Some(class))
        .copied()
    {
        let (start, end) = g;
        let mut at = end;
        for j in start..end {
            if let Some(existing) = ImportSpec::parse(&lines[j]) {
                if (existing.path.as_str(), existing.name.as_deref())
                    > (spec.path.as_str(), spec.name.as_deref())
                {
                    // Insert before this spec and any comment lines that lead into it.
                    let mut k = j;
                    while k > start && lines[k - 1].trim_start().starts_with("//") {
                        k -= 1;
                    }
                    at = k;
                    break;
                }
            }
        }
        if at == end {
            // After the last spec of the group (before trailing comments other than the marker).
            at = (start..end)
                .rev()
                .find(|&j| ImportSpec::parse(&lines[j]).is_some())
                .map_or(end, |j| j + 1);
        }
        lines.insert(at, new_line);
        return Ok(join_lines(&lines, nl));
    }

    // New group, before the first group of a later class, else at the end above the marker.
    if let Some(&(start, _)) = groups
        .iter()
        .find(|g| group_class(g).is_some_and(|c| c > class))
    {
        lines.splice(start..start, [new_line, String::new()]);
    } else {
        let previous = lines[marker - 1].trim();
        let mut add = vec![];
        if !previous.is_empty() && !previous.starts_with("import (") {
            add.push(String::new());
        }
        add.push(new_line);
        lines.splice(marker..marker, add);
    }
    Ok(join_lines(&lines, nl))
}

/// Remove the first `#` (and nothing else) from each line of `block`'s commented form.
/// `block` is given uncommented. Returns `None` when neither form is present.
pub fn uncomment(content: &str, block: &str) -> Option<String> {
    let want: Vec<&str> = block.trim_end_matches('\n').lines().collect();
    if want.is_empty() {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let commented = |l: &str, w: &str| -> bool {
        let (ind, rest) = l.split_at(l.len() - l.trim_start().len());
        rest.strip_prefix('#')
            .is_some_and(|r| format!("{ind}{r}") == w)
    };
    for start in 0..lines.len() {
        if start + want.len() > lines.len() {
            break;
        }
        if lines[start..start + want.len()]
            .iter()
            .zip(&want)
            .all(|(l, w)| commented(l, w))
        {
            for (l, w) in lines[start..start + want.len()].iter_mut().zip(&want) {
                *l = w.to_string();
            }
            return Some(join_lines(&lines, nl));
        }
    }
    // Already uncommented?
    if lines
        .windows(want.len())
        .any(|w| w.iter().zip(&want).all(|(a, b)| a == b))
    {
        return Some(content.to_string());
    }
    None
}

/// Insert `text` right after the first line whose trimmed content equals `anchor`, unless the
/// text (by significant lines) is already present. `None` when the anchor is missing.
pub fn insert_after_line(content: &str, anchor: &str, text: &str) -> Option<String> {
    if contains_fragment(content, text) {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let at = lines.iter().position(|l| l.trim() == anchor.trim())?;
    let new: Vec<String> = text
        .trim_end_matches('\n')
        .lines()
        .map(str::to_string)
        .collect();
    lines.splice(at + 1..at + 1, new);
    Some(join_lines(&lines, nl))
}

/// Insert `text` above the last line whose trimmed content equals `anchor`, taking that line's
/// indentation, unless the text (by significant lines) is already present. `None` when the
/// anchor is missing.
pub fn insert_before_line(content: &str, anchor: &str, text: &str) -> Option<String> {
    if contains_fragment(content, text) {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let at = lines.iter().rposition(|l| l.trim() == anchor.trim())?;
    let indent = indentation(&lines[at]).to_string();
    lines.splice(at..at, indent_fragment(text, &indent));
    Some(join_lines(&lines, nl))
}

/// Append `text` unless it is already present.
pub fn append_once(content: &str, text: &str) -> String {
    if contains_fragment(content, text) {
        return content.to_string();
    }
    let mut s = content.to_string();
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(text);
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// `text` with one leading `#` removed from every line.
fn uncomment_all(text: &str) -> String {
    text.lines()
        .map(|l| strip_hash(l).0)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line with one leading `#` (after indentation) removed, and whether there was one.
fn strip_hash(line: &str) -> (String, bool) {
    let ind = indentation(line);
    match line[ind.len()..].strip_prefix('#') {
        Some(rest) => (format!("{ind}{rest}"), true),
        None => (line.to_string(), false),
    }
}

/// The YAML value of a line without its trailing ` # comment`, trimmed.
fn yaml_text(line: &str) -> &str {
    let t = line.trim();
    match t.find(" #") {
        Some(i) => t[..i].trim_end(),
        None => t,
    }
}

/// Uncomment every YAML list entry whose first line reads `start` (e.g. `- source:`) and whose
/// lines include every line of `needs` (compared without indentation and trailing comments),
/// whether the entry is commented out, partly commented (lines inserted later) or not at all.
///
/// An entry is recognised by its structure, not its comments: it runs from its first line over
/// the following lines indented deeper than its `-`, and ends at a blank line, a scaffold marker
/// or a line indented no deeper. This reads both opbuilder's own files and Kubebuilder's.
/// Returns `None` when no such entry exists.
pub fn enable_entries(content: &str, start: &str, needs: &[&str]) -> Option<String> {
    let (mut lines, nl) = split_lines(content);
    let mut found = false;
    let mut i = 0;
    while i < lines.len() {
        let (head, _) = strip_hash(&lines[i]);
        if yaml_text(&head) != start {
            i += 1;
            continue;
        }
        let depth = indentation(&head).len();
        let mut end = i + 1;
        while end < lines.len() {
            let (l, _) = strip_hash(&lines[end]);
            if l.trim().is_empty()
                || l.trim().starts_with("+kubebuilder:scaffold:")
                || indentation(&l).len() <= depth
            {
                break;
            }
            end += 1;
        }
        let texts: Vec<String> = lines[i..end]
            .iter()
            .map(|l| yaml_text(&strip_hash(l).0).to_string())
            .collect();
        if needs.iter().all(|n| texts.iter().any(|t| t == n.trim())) {
            found = true;
            for l in &mut lines[i..end] {
                *l = strip_hash(l).0;
            }
        }
        i = end;
    }
    found.then(|| join_lines(&lines, nl))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "package main\n\nimport (\n\t\"os\"\n\n\tutilruntime \"k8s.io/apimachinery/pkg/util/runtime\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc init() {\n\t// +kubebuilder:scaffold:scheme\n}\n";

    #[test]
    fn marker_matching_ignores_spacing_and_needs_token() {
        assert!(is_marker(
            "\t//   +kubebuilder:scaffold:imports  ",
            "//",
            "imports"
        ));
        assert!(is_marker(
            "# +kubebuilder:scaffold:crdkustomizeresource",
            "#",
            "crdkustomizeresource"
        ));
        assert!(!is_marker(
            "// +kubebuilder:scaffold:importsX",
            "//",
            "imports"
        ));
        assert!(!is_marker("+kubebuilder:scaffold:imports", "//", "imports"));
        assert_eq!(comment_token(Path::new("a/b.go")), Some("//"));
        assert_eq!(comment_token(Path::new("Makefile")), Some("#"));
        assert_eq!(comment_token(Path::new("x.yml")), Some("#"));
        assert_eq!(comment_token(Path::new("x.txt")), None);
    }

    #[test]
    fn go_insert_takes_marker_indentation_and_is_idempotent() {
        let frag = "utilruntime.Must(appv1.AddToScheme(scheme))\n".to_string();
        let once = insert_above(MAIN, "//", "scheme", std::slice::from_ref(&frag)).unwrap();
        assert!(once.contains(
            "\tutilruntime.Must(appv1.AddToScheme(scheme))\n\t// +kubebuilder:scaffold:scheme\n"
        ));
        let twice = insert_above(&once, "//", "scheme", &[frag]).unwrap();
        assert_eq!(once, twice);
    }

    #[test]
    fn multi_line_fragment_keeps_relative_indentation_and_blank_lines() {
        let src = "package main\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n";
        // Blank lines inside a fragment stay (without indentation); trailing ones are dropped.
        let frag = "a()\n\nif err := x(); err != nil {\n\tos.Exit(1)\n}\n\n".to_string();
        let out = insert_above(src, "//", "builder", &[frag]).unwrap();
        assert_eq!(out, "package main\nfunc main() {\n\ta()\n\n\tif err := x(); err != nil {\n\t\tos.Exit(1)\n\t}\n\t// +kubebuilder:scaffold:builder\n}\n");
    }

    #[test]
    fn a_duplicated_marker_is_an_error_naming_both_lines() {
        let src = "resources:\n  # +kubebuilder:scaffold:x\nother:\n# +kubebuilder:scaffold:x\n";
        let e = insert_above(src, "#", "x", &["- a.yaml".to_string()]).unwrap_err();
        assert_eq!(
            e,
            MarkerError::Duplicate {
                marker: "# +kubebuilder:scaffold:x".into(),
                lines: vec![2, 4]
            }
        );
        assert!(e.to_string().contains("lines 2 and 4"), "{e}");
        let go = "package main\n\nimport (\n\t// +kubebuilder:scaffold:imports\n)\n\n// +kubebuilder:scaffold:imports\n";
        assert!(matches!(
            insert_go_import(go, &ImportSpec::new(None, "fmt"), "m"),
            Err(MarkerError::Duplicate { .. })
        ));
    }

    #[test]
    fn markers_above_package_or_in_raw_strings_or_comments_take_no_code() {
        let above = "// +kubebuilder:scaffold:builder\npackage main\n";
        let e = insert_above(above, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(
            e.to_string().contains("line 1 is above the package clause"),
            "{e}"
        );
        let raw = "package main\n\nvar s = `\n// +kubebuilder:scaffold:builder\n`\n";
        let e = insert_above(raw, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(
            e.to_string().contains("line 4 is inside a raw string"),
            "{e}"
        );
        let block = "package main\n/*\n\t// +kubebuilder:scaffold:builder\n*/\n";
        let e = insert_above(block, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(e.to_string().contains("inside a /* */ comment"), "{e}");
        let imports =
            "package main\n\nvar s = `\nimport (\n\t// +kubebuilder:scaffold:imports\n)`\n";
        assert!(matches!(
            insert_go_import(imports, &ImportSpec::new(None, "fmt"), "m"),
            Err(MarkerError::Misplaced { line: 5, .. })
        ));
        // Strings and comments that close on their line, and backquotes inside them, are fine.
        let ok = "/* licence */\npackage main // x\n\nvar a = \"`\" + '`' + `x` /* ` */\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n";
        assert!(insert_above(ok, "//", "builder", &["x()".into()]).is_ok());
    }

    #[test]
    fn fragments_in_order_and_partial_presence() {
        let src = "# +kubebuilder:scaffold:m\n";
        let once = insert_above(src, "#", "m", &["- a".into()]).unwrap();
        let out = insert_above(&once, "#", "m", &["- a".into(), "- b".into()]).unwrap();
        assert_eq!(out, "- a\n- b\n# +kubebuilder:scaffold:m\n");
    }

    #[test]
    fn missing_marker_is_an_error() {
        let e = insert_above("package x\n", "//", "builder", &["x".into()]).unwrap_err();
        assert!(e.to_string().contains("+kubebuilder:scaffold:builder"));
        assert!(insert_go_import("package x\n", &ImportSpec::new(None, "fmt"), "m").is_err());
    }

    #[test]
    fn first_local_import_opens_a_new_group_above_the_marker() {
        let out = insert_go_import(
            MAIN,
            &ImportSpec::new(Some("appv1"), "example.com/g/api/v1"),
            "example.com/g",
        )
        .unwrap();
        assert!(
            out.contains("\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\tappv1 \"example.com/g/api/v1\"\n\t// +kubebuilder:scaffold:imports\n)"),
            "{out}"
        );
        // Sorted insertion into the existing local group, before and after.
        let out = insert_go_import(
            &out,
            &ImportSpec::new(None, "example.com/g/internal/controller"),
            "example.com/g",
        )
        .unwrap();
        let out = insert_go_import(
            &out,
            &ImportSpec::new(Some("aaa"), "example.com/g/api/a"),
            "example.com/g",
        )
        .unwrap();
        assert!(
            out.contains("\n\taaa \"example.com/g/api/a\"\n\tappv1 \"example.com/g/api/v1\"\n\t\"example.com/g/internal/controller\"\n\t// +kubebuilder:scaffold:imports\n"),
            "{out}"
        );
        // Idempotent.
        assert_eq!(
            insert_go_import(
                &out,
                &ImportSpec::new(Some("aaa"), "example.com/g/api/a"),
                "example.com/g"
            )
            .unwrap(),
            out
        );
    }

    #[test]
    fn third_party_and_std_imports_go_to_their_groups() {
        let out = insert_go_import(
            MAIN,
            &ImportSpec::new(None, "example.com/g/internal/controller"),
            "example.com/g",
        )
        .unwrap();
        let out = insert_go_import(
            &out,
            &ImportSpec::new(
                Some("certv1"),
                "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            ),
            "example.com/g",
        )
        .unwrap();
        let out =
            insert_go_import(&out, &ImportSpec::new(None, "context"), "example.com/g").unwrap();
        assert_eq!(
            out,
            "package main\n\nimport (\n\t\"context\"\n\t\"os\"\n\n\tcertv1 \"github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1\"\n\tutilruntime \"k8s.io/apimachinery/pkg/util/runtime\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\t\"example.com/g/internal/controller\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc init() {\n\t// +kubebuilder:scaffold:scheme\n}\n"
        );
    }

    #[test]
    fn sorting_respects_leading_comments_and_byte_order() {
        let src = "package m\nimport (\n\t\"a.com/x\"\n\t// why z\n\t_ \"a.com/z\"\n\t// +kubebuilder:scaffold:imports\n)\n";
        let out = insert_go_import(src, &ImportSpec::new(None, "a.com/y"), "m").unwrap();
        assert_eq!(out, "package m\nimport (\n\t\"a.com/x\"\n\t\"a.com/y\"\n\t// why z\n\t_ \"a.com/z\"\n\t// +kubebuilder:scaffold:imports\n)\n");
        // '.' sorts before '/', as gofmt does.
        let src = "package m\nimport (\n\tfoov1 \"m/api/foo/v1\"\n\t// +kubebuilder:scaffold:imports\n)\n";
        let out = insert_go_import(
            src,
            &ImportSpec::new(Some("foopolicyv1"), "m/api/foo.policy/v1"),
            "m",
        )
        .unwrap();
        assert!(
            out.find("foo.policy").unwrap() < out.find("foo/v1").unwrap(),
            "{out}"
        );
    }

    #[test]
    fn imports_without_a_marker_go_into_the_first_block() {
        let src = "package v1\n\nimport (\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\tappv1 \"m/api/v1\"\n)\n\nfunc x() {}\n";
        let out = insert_go_import(src, &ImportSpec::new(None, "context"), "m").unwrap();
        let out = insert_go_import(
            &out,
            &ImportSpec::new(None, "sigs.k8s.io/controller-runtime/pkg/webhook/admission"),
            "m",
        )
        .unwrap();
        assert_eq!(
            out,
            "package v1\n\nimport (\n\t\"context\"\n\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\t\"sigs.k8s.io/controller-runtime/pkg/webhook/admission\"\n\n\tappv1 \"m/api/v1\"\n)\n\nfunc x() {}\n"
        );
        assert!(insert_go_import("package v1\n", &ImportSpec::new(None, "context"), "m").is_err());
    }

    #[test]
    fn before_line_takes_the_anchor_indentation() {
        let src = "func f() {\n\treturn b.\n\t\tFor(x).\n\t\tComplete()\n}\n";
        let out = insert_before_line(src, "Complete()", "WithValidator(&V{}).").unwrap();
        assert_eq!(
            out,
            "func f() {\n\treturn b.\n\t\tFor(x).\n\t\tWithValidator(&V{}).\n\t\tComplete()\n}\n"
        );
        assert_eq!(
            insert_before_line(&out, "Complete()", "WithValidator(&V{}).").unwrap(),
            out
        );
        assert!(insert_before_line(src, "Nope()", "x").is_none());
    }

    #[test]
    fn uncomment_block_once() {
        let src = "resources:\n#- ../crd\n- ../rbac\n#patches:\n#- path: p.yaml\n#  target:\n#    kind: Deployment\n";
        let out = uncomment(src, "#- ../crd".trim_start_matches('#')).unwrap();
        assert!(out.contains("\n- ../crd\n"));
        let out = uncomment(
            &out,
            "patches:\n- path: p.yaml\n  target:\n    kind: Deployment",
        )
        .unwrap();
        assert!(
            out.ends_with("patches:\n- path: p.yaml\n  target:\n    kind: Deployment\n"),
            "{out}"
        );
        assert_eq!(uncomment(&out, "- ../crd").unwrap(), out);
        assert!(uncomment(&out, "- ../nope").is_none());
    }

    #[test]
    fn after_line_and_append() {
        let src = "resources:\n- a.yaml\n";
        let out = insert_after_line(src, "resources:", "- b.yaml").unwrap();
        assert_eq!(out, "resources:\n- b.yaml\n- a.yaml\n");
        assert_eq!(
            insert_after_line(&out, "resources:", "- b.yaml").unwrap(),
            out
        );
        assert!(insert_after_line(src, "nope:", "x").is_none());
        assert_eq!(append_once("a", "b\n"), "a\nb\n");
        assert_eq!(append_once("a\nb\n", "b\n"), "a\nb\n");
    }

    const KB_STYLE: &str = "#replacements:
# - source: # for any webhook
#     kind: Service
#     version: v1
#     name: webhook-service
#     fieldPath: .metadata.name # Name of the service
#   targets:
#     - select:
#         kind: Certificate
# - source:
#     kind: Certificate
#     name: serving-cert
#     fieldPath: .metadata.namespace # Namespace of the certificate CR
#   targets: # keep the marker below
#     - select:
#         kind: CustomResourceDefinition
#         name: a.example.com
# +kubebuilder:scaffold:crdkustomizecainjectionns
# - source:
#     kind: Certificate
#     name: serving-cert
#     fieldPath: .metadata.name
#   targets:
# +kubebuilder:scaffold:crdkustomizecainjectionname
";

    #[test]
    fn entries_are_found_by_structure_and_uncommented_whole() {
        let out = enable_entries(
            KB_STYLE,
            "- source:",
            &[
                "kind: Certificate",
                "fieldPath: .metadata.namespace",
                "kind: CustomResourceDefinition",
            ],
        )
        .unwrap();
        assert!(out.contains(" - source:\n     kind: Certificate\n     name: serving-cert\n     fieldPath: .metadata.namespace # Namespace of the certificate CR\n   targets: # keep the marker below\n     - select:\n         kind: CustomResourceDefinition\n         name: a.example.com\n# +kubebuilder:scaffold:crdkustomizecainjectionns\n"), "{out}");
        // The entries around it stay commented: the marker and the next `- source:` end it.
        assert!(out.contains("# - source: # for any webhook\n"));
        assert!(out.contains("# - source:\n#     kind: Certificate\n#     name: serving-cert\n#     fieldPath: .metadata.name\n"));
        // Idempotent, and a second pass finds the (now uncommented) entry again.
        let again = enable_entries(
            &out,
            "- source:",
            &[
                "kind: Certificate",
                "fieldPath: .metadata.namespace",
                "kind: CustomResourceDefinition",
            ],
        )
        .unwrap();
        assert_eq!(out, again);
    }

    #[test]
    fn entries_need_every_line_and_report_absence() {
        // The name entry has no CRD target yet: it is not a conversion entry.
        assert_eq!(
            enable_entries(
                KB_STYLE,
                "- source:",
                &[
                    "fieldPath: .metadata.name",
                    "kind: CustomResourceDefinition",
                    "name: serving-cert"
                ],
            ),
            None
        );
        let out = enable_entries(
            KB_STYLE,
            "- source:",
            &[
                "kind: Service",
                "name: webhook-service",
                "fieldPath: .metadata.name",
            ],
        )
        .unwrap();
        assert!(out.contains("\n - source: # for any webhook\n     kind: Service\n"));
        assert!(out.contains("\n     - select:\n         kind: Certificate\n# - source:\n"));
    }

    #[test]
    fn lines_inserted_commented_into_an_enabled_entry_are_uncommented() {
        let src = " - source:\n     kind: Certificate\n   targets:\n     - select:\n         name: a\n#     - select:\n#         name: b\n# +kubebuilder:scaffold:x\n";
        let out = enable_entries(src, "- source:", &["kind: Certificate", "name: b"]).unwrap();
        assert_eq!(out, " - source:\n     kind: Certificate\n   targets:\n     - select:\n         name: a\n     - select:\n         name: b\n# +kubebuilder:scaffold:x\n");
    }
}
