//! Go imports, placed where gofmt keeps them: the import block is split into groups separated
//! by blank lines (standard library, third party, this module), and a new import goes into the
//! last group of its kind at its sorted position, or opens a group in class order.

use crate::markers::scaffold::{find_marker, find_marker_direct, has_marker, MarkerError};
use crate::markers::text::{direct, indentation, join_lines, line_start, split_lines};
use std::borrow::Cow;

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

    /// The spec as a line of an import block writes it (without indentation).
    pub fn line(&self) -> String {
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
#[cfg(test)]
pub fn insert_go_import(
    content: &str,
    spec: &ImportSpec,
    module: &str,
) -> Result<String, MarkerError> {
    Ok(
        insert_go_imports(content, std::slice::from_ref(spec), module)?
            .0
            .into_owned(),
    )
}

/// [`insert_go_import`] for several imports at once: the marker is found and the file copied
/// once, however many there are. Also says whether the imports marker was there (without it
/// they go into the first import block).
pub fn insert_go_imports<'a>(
    content: &'a str,
    specs: &[ImportSpec],
    module: &str,
) -> Result<(Cow<'a, str>, bool), MarkerError> {
    if direct(content) {
        // Work on the lines from the block's `import (` to the marker only. Without a marker,
        // or without an `import (` above it, the line-by-line path below does the work.
        match find_marker_direct(content, "//", "imports", true) {
            Ok((marker, marker_end)) => {
                let mut pos = marker;
                while pos > 0 {
                    let start = line_start(content, pos - 1);
                    if content[start..pos - 1].trim_start().starts_with("import (") {
                        let end = (marker_end + 1).min(content.len());
                        let mut block = content[start..end].to_string();
                        for spec in specs {
                            let (lines, nl) = split_lines(&block);
                            let last = lines.len() - 1;
                            block = add_import(&block, lines, nl, 0, last, spec, module);
                        }
                        if block == content[start..end] {
                            return Ok((Cow::Borrowed(content), true));
                        }
                        let mut out = String::with_capacity(content.len() + block.len());
                        out.push_str(&content[..start]);
                        out.push_str(&block);
                        out.push_str(&content[end..]);
                        return Ok((Cow::Owned(out), true));
                    }
                    pos = start;
                }
            }
            Err(MarkerError::Missing(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let mut out = content.to_string();
    for spec in specs {
        out = insert_go_import_lines(&out, spec, module)?;
    }
    let out = if out == content {
        Cow::Borrowed(content)
    } else {
        Cow::Owned(out)
    };
    Ok((out, has_marker(content, "//", "imports")))
}

fn insert_go_import_lines(
    content: &str,
    spec: &ImportSpec,
    module: &str,
) -> Result<String, MarkerError> {
    let (lines, nl) = split_lines(content);
    // The block ends at the imports marker when there is one, else at the first block's `)`.
    let found = match find_marker(content, &lines, "//", "imports", true) {
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
    Ok(add_import(content, lines, nl, open, marker, spec, module))
}

/// `content` (split into `lines`) with `spec` added to the import block from line `open`
/// (`import (`) to line `marker` (the imports marker or the closing `)`).
fn add_import(
    content: &str,
    mut lines: Vec<Cow<'_, str>>,
    nl: bool,
    open: usize,
    marker: usize,
    spec: &ImportSpec,
    module: &str,
) -> String {
    if lines[open + 1..marker]
        .iter()
        .filter_map(|l| ImportSpec::parse(l))
        .any(|s| s.path == spec.path)
    {
        return content.to_string();
    }
    // Indentation: the marker's, else that of an existing spec, else a tab.
    let indent_src = if lines[marker].trim() == ")" {
        lines[open + 1..marker]
            .iter()
            .find(|l| ImportSpec::parse(l).is_some())
            .cloned()
            .unwrap_or(Cow::Borrowed("\t"))
    } else {
        lines[marker].clone()
    };
    let indent = indentation(&indent_src).to_string();
    let new_line: Cow<str> = Cow::Owned(format!("{indent}{}", spec.line()));
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
        return join_lines(&lines, nl);
    }

    // New group, before the first group of a later class, else at the end above the marker.
    if let Some(&(start, _)) = groups
        .iter()
        .find(|g| group_class(g).is_some_and(|c| c > class))
    {
        lines.splice(start..start, [new_line, Cow::Borrowed("")]);
    } else {
        let previous = lines[marker - 1].trim();
        let mut add = vec![];
        if !previous.is_empty() && !previous.starts_with("import (") {
            add.push(Cow::Borrowed(""));
        }
        add.push(new_line);
        lines.splice(marker..marker, add);
    }
    join_lines(&lines, nl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::tests::MAIN;

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
        // All three at once: the same file, and the marker was there.
        let specs = [
            ImportSpec::new(None, "example.com/g/internal/controller"),
            ImportSpec::new(
                Some("certv1"),
                "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            ),
            ImportSpec::new(None, "context"),
        ];
        assert_eq!(
            insert_go_imports(MAIN, &specs, "example.com/g").unwrap(),
            (Cow::Owned(out.clone()), true)
        );
        // With carriage returns (the line-by-line path): as one at a time.
        let mut one_by_one = MAIN.replace('\n', "\r\n");
        let crlf = one_by_one.clone();
        for spec in &specs {
            one_by_one = insert_go_import(&one_by_one, spec, "example.com/g").unwrap();
        }
        assert_eq!(
            insert_go_imports(&crlf, &specs, "example.com/g").unwrap(),
            (Cow::Owned(one_by_one), true)
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
}
