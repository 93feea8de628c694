//! The `+kubebuilder:scaffold:<name>` marker in any format: which comment token a file uses,
//! finding the one line holding a marker (present, not duplicated, and in Go where code may
//! go), and inserting fragments above it.

use super::go::placement::go_marker_problem;
use super::text::{
    contains_fragment, direct, fragment_in, indent_fragment, indentation, insert_lines, join_lines,
    line_around, split_lines,
};
use super::yaml::uncommented;
use memchr::memmem;
use std::borrow::Cow;
use std::path::Path;

/// The line-comment token for a file, by extension or name.
pub fn comment_token(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("go" | "rs") => Some("//"),
        Some("yaml" | "yml" | "sh" | "mk" | "toml") => Some("#"),
        _ if name == "Makefile" || name == "Dockerfile" || name == "PROJECT" => Some("#"),
        _ => None,
    }
}

/// Where the text inserted above marker `name` belongs, in words, for someone who puts it there
/// by hand in a file that lost the marker (Kubebuilder's markers and the Rust layout's).
pub fn purpose(name: &str) -> Option<&'static str> {
    Some(match name {
        "imports" => "in the import block",
        "scheme" => "with the other AddToScheme calls",
        "builder" => {
            "in main(), where the controllers and webhooks are set up with the manager, before it starts"
        }
        "webhook" => "in BeforeSuite, where the webhooks are set up with the test manager",
        "e2e-webhooks-checks" => "among the specs of the Manager context",
        "e2e-metrics-webhooks-readiness" => {
            "in the metrics spec, before the pod that scrapes the metrics is created"
        }
        "crdkustomizeresource" | "manifestskustomizesamples" => "at the end of `resources:`",
        "crdkustomizewebhookpatch" => "at the end of `patches:`",
        "crdkustomizecainjectionns" | "crdkustomizecainjectionname" => {
            "among the targets of the replacement that copies the serving Certificate's namespace (ns) or name"
        }
        "api-groups" | "versions" | "kinds" | "controller-modules" | "webhook-modules" => {
            "with the other module declarations"
        }
        "crds" => "in the list that crds() merges",
        "controllers" => "in the list of controllers that run_all() starts",
        "rbac" => "in the list that rbac() returns",
        "webhook-routes" => "in the list of routes that routes() flattens",
        "conversions" => "in the list that conversions() returns",
        "webhook-configurations" => "in the list that webhooks() flattens",
        _ => return None,
    })
}

/// Whether `line` is the marker `name` for the comment token `token`.
pub fn is_marker(line: &str, token: &str, name: &str) -> bool {
    line.trim()
        .strip_prefix(token)
        .and_then(|rest| rest.trim().strip_prefix("+kubebuilder:scaffold:"))
        .is_some_and(|n| n == name)
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

/// The marker `name` as written with comment token `token`.
fn marker_text(token: &str, name: &str) -> String {
    format!("{token} +kubebuilder:scaffold:{name}")
}

/// The 1-based number of the line starting at byte `start`.
fn line_number(content: &str, start: usize) -> usize {
    content.as_bytes()[..start]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

/// Whether the marker line starting at byte `start` may take code: in Go, not above the package
/// clause, in a raw string or in a block comment. Shared by both ways of finding the marker.
fn check_placement(
    content: &str,
    start: usize,
    token: &str,
    name: &str,
    go: bool,
) -> Result<(), MarkerError> {
    if go && token == "//" {
        if let Some(why) = go_marker_problem(&content[..start]) {
            return Err(MarkerError::Misplaced {
                marker: marker_text(token, name),
                line: line_number(content, start),
                why,
            });
        }
    }
    Ok(())
}

/// The one line holding marker `name`, checked: present, not duplicated, and (for Go) where
/// code may go. `lines` are `content`'s lines; returns the line's index.
pub(super) fn find_marker(
    content: &str,
    lines: &[Cow<'_, str>],
    token: &str,
    name: &str,
    go: bool,
) -> Result<usize, MarkerError> {
    let positions: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| is_marker(l, token, name))
        .map(|(i, _)| i)
        .collect();
    match positions.as_slice() {
        [] => Err(MarkerError::Missing(marker_text(token, name))),
        &[at] => {
            // Line `at` starts after the `at`-th newline.
            let start = match at {
                0 => 0,
                _ => content
                    .match_indices('\n')
                    .nth(at - 1)
                    .map_or(content.len(), |(i, _)| i + 1),
            };
            check_placement(content, start, token, name, go)?;
            Ok(at)
        }
        many => Err(MarkerError::Duplicate {
            marker: marker_text(token, name),
            lines: many.iter().map(|i| i + 1).collect(),
        }),
    }
}

/// [`find_marker`] on the text directly: the byte range (without the newline) of the one line
/// holding marker `name`, with the same checks and errors.
pub(super) fn find_marker_direct(
    content: &str,
    token: &str,
    name: &str,
    go: bool,
) -> Result<(usize, usize), MarkerError> {
    match marker_lines(content, token, name).as_slice() {
        [] => Err(MarkerError::Missing(marker_text(token, name))),
        &[(start, end)] => {
            check_placement(content, start, token, name, go)?;
            Ok((start, end))
        }
        many => Err(MarkerError::Duplicate {
            marker: marker_text(token, name),
            lines: many.iter().map(|&(s, _)| line_number(content, s)).collect(),
        }),
    }
}

/// Whether `fragment` is already in `content`. In `#`-comment files a fragment counts as present
/// whether it is commented out or not: YAML fragments are inserted commented and enabled
/// afterwards.
pub fn fragment_present(content: &str, token: &str, fragment: &str) -> bool {
    if token == "#" {
        fragment_in(content, fragment, uncommented)
    } else {
        contains_fragment(content, fragment)
    }
}

/// Byte ranges (without the newline) of the lines holding marker `name`, found by searching
/// for the marker text instead of walking every line.
fn marker_lines(content: &str, token: &str, name: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = vec![];
    // One searcher for the process: building it costs more than a search of a small file.
    static FINDER: std::sync::OnceLock<memmem::Finder<'static>> = std::sync::OnceLock::new();
    let finder = FINDER.get_or_init(|| memmem::Finder::new("+kubebuilder:scaffold:"));
    for at in finder.find_iter(content.as_bytes()) {
        let (start, end) = line_around(content, at);
        if out.last().is_none_or(|l| l.0 != start) && is_marker(&content[start..end], token, name) {
            out.push((start, end));
        }
    }
    out
}

/// Whether `content` has a line holding marker `name` (found as [`marker_lines`] finds them).
pub fn has_marker(content: &str, token: &str, name: &str) -> bool {
    !marker_lines(content, token, name).is_empty()
}

/// Insert each fragment (unless already present) directly above the one line holding the
/// marker; a missing, duplicated or (Go) misplaced marker is an error.
#[cfg(test)]
pub fn insert_above<'a>(
    content: &'a str,
    token: &str,
    name: &str,
    fragments: &[String],
) -> Result<Cow<'a, str>, MarkerError> {
    insert_above_in(content, token, name, fragments, true)
}

/// [`insert_above`] for a file of `path`: Go's placement rules apply to Go files only (a Rust
/// file shares the `//` token but has no package clause).
pub fn insert_above_for<'a>(
    path: &Path,
    content: &'a str,
    token: &str,
    name: &str,
    fragments: &[String],
) -> Result<Cow<'a, str>, MarkerError> {
    let go = path.extension().is_some_and(|e| e == "go");
    insert_above_in(content, token, name, fragments, go)
}

fn insert_above_in<'a>(
    content: &'a str,
    token: &str,
    name: &str,
    fragments: &[String],
    go: bool,
) -> Result<Cow<'a, str>, MarkerError> {
    if direct(content) {
        let (start, end) = find_marker_direct(content, token, name, go)?;
        let indent = indentation(&content[start..end]);
        // The marker line's start in `current`; each insertion lands above it.
        let mut at = start;
        let mut current = Cow::Borrowed(content);
        for fragment in fragments {
            if fragment_present(&current, token, fragment) {
                continue;
            }
            let out = insert_lines(&current, at, &indent_fragment(fragment, indent));
            at += out.len() - current.len();
            current = Cow::Owned(out);
        }
        return Ok(current);
    }
    let (mut lines, nl) = split_lines(content);
    let mut at = find_marker(content, &lines, token, name, go)?;
    let mut current = Cow::Borrowed(content);
    for fragment in fragments {
        if fragment_present(&current, token, fragment) {
            continue;
        }
        let indent = indentation(&lines[at]).to_string();
        let new = indent_fragment(fragment, &indent);
        let n = new.len();
        lines.splice(at..at, new);
        at += n;
        current = Cow::Owned(join_lines(&lines, nl));
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::go::imports::{insert_go_import, ImportSpec};
    use crate::markers::tests::MAIN;
    use crate::markers::yaml::uncomment_all;

    #[test]
    fn go_placement_rules_stay_out_of_rust_files() {
        // No package clause: a Go file's marker is refused, a Rust file's is fine.
        let text = "// +kubebuilder:scaffold:x\n";
        let frag = ["a".to_string()];
        assert!(insert_above_for(Path::new("a.go"), text, "//", "x", &frag).is_err());
        assert_eq!(
            insert_above_for(Path::new("a.rs"), text, "//", "x", &frag).unwrap(),
            "a\n// +kubebuilder:scaffold:x\n"
        );
    }

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
    fn commented_fragment_search_matches_uncommenting_the_whole_file() {
        // The search reads each line through `uncommented` instead of copying the file with
        // every line uncommented; both must agree on any text.
        const PIECES: &[&str] = &[
            "#", "# ", "  ", "- a.yaml", "- b.yaml", "kind: X", "\n", "\r\n", "\r", " #", "\t", "a",
        ];
        let mut seed: u64 = 0x2545_f491;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut agree_present = 0;
        for _ in 0..50000 {
            let mut text = |max: usize| -> String {
                let n = next(max);
                (0..n).map(|_| PIECES[next(PIECES.len())]).collect()
            };
            let content = text(30);
            let fragment = text(8);
            let old = contains_fragment(&uncomment_all(&content), &uncomment_all(&fragment));
            assert_eq!(
                fragment_present(&content, "#", &fragment),
                old,
                "content {content:?}, fragment {fragment:?}"
            );
            agree_present += usize::from(old);
        }
        // Both outcomes were exercised.
        assert!((1000..49000).contains(&agree_present), "{agree_present}");
    }
}
