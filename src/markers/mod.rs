//! Text edits on existing files, one file per language or format:
//!
//! - [`scaffold`]: the `+kubebuilder:scaffold:<name>` marker (comment tokens, finding the one
//!   marker line and checking where it is, [`scaffold::MarkerError`]) and inserting fragments
//!   above it, in any format;
//! - [`go`]: Go: where a marker may take code ([`go::placement`]), imports in sorted position
//!   ([`go::imports`]), comment tags above a type ([`go::tags`]);
//! - [`yaml`]: YAML with `#` comments, as kustomize files are: uncommenting blocks and list
//!   entries;
//! - [`rust`]: the Rust layout's `mod` declarations, in rustfmt's order above a marker;
//! - [`makefile`]: lines added to a Makefile rule's recipe;
//! - [`remove`]: the reverse of each insertion above (the exact lines it added, taken out
//!   again; blocks and entries commented out again as their template had them), for `delete`;
//! - [`text`]: what they all share (lines, indentation, the search for a fragment already
//!   present) and the edits anchored on a plain line (after, before, append).
//!
//! Marker syntax is Kubebuilder's: a line whose content, after trimming and removing the comment
//! token (`//` in Go, `#` in YAML, Makefiles and shell), is `+kubebuilder:scaffold:<name>`.
//! Inserted text takes the indentation of the marker line. An insertion is skipped when the
//! fragment's non-blank lines, trimmed, already appear as consecutive non-blank lines of the file.

pub mod go;
pub mod makefile;
pub mod remove;
pub mod rust;
pub mod scaffold;
pub mod text;
pub mod yaml;

#[cfg(test)]
mod tests {
    use super::go::imports::{insert_go_import, ImportSpec};
    use super::scaffold::{insert_above, MarkerError};
    use super::text::{insert_after_line, insert_before_line, LINE_BY_LINE};
    use std::borrow::Cow;

    /// A cmd/main.go as `init` writes it, cut down to its import block and scheme marker.
    pub(super) const MAIN: &str = "package main\n\nimport (\n\t\"os\"\n\n\tutilruntime \"k8s.io/apimachinery/pkg/util/runtime\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc init() {\n\t// +kubebuilder:scaffold:scheme\n}\n";

    /// Every edit gives the same result working on the text directly as line by line: the same
    /// text, or the same error (missing, duplicated or misplaced marker).
    #[test]
    fn direct_edits_match_line_by_line_edits() {
        const LINES: &[&str] = &[
            "\t// +kubebuilder:scaffold:builder",
            "// +kubebuilder:scaffold:imports",
            "  # +kubebuilder:scaffold:x",
            "package main",
            "package main",
            "import (",
            "\t\"os\"",
            "\tappv1 \"m/api/v1\"",
            "\t\"m/internal/controller\"",
            ")",
            "",
            "  ",
            "a()",
            "\tb()",
            "Complete()",
            "resources:",
            "- a.yaml",
            "var s = `",
            "`",
            "/*",
            "*/",
            "x := \"`/*\" + '`' // `",
        ];
        let mut seed: u64 = 0x0bad_cafe;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        fn both<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> T {
            let direct = f();
            LINE_BY_LINE.with(|c| c.set(true));
            let lines = f();
            LINE_BY_LINE.with(|c| c.set(false));
            assert_eq!(direct, lines);
            direct
        }
        // How often each outcome came up, so the comparison covers every kind of result.
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        let mut tally = |r: Result<String, MarkerError>| {
            let kind = match r {
                Ok(_) => "ok".to_string(),
                Err(MarkerError::Missing(_)) => "missing".into(),
                Err(MarkerError::Duplicate { .. }) => "duplicate".into(),
                Err(MarkerError::Misplaced { why, .. }) => why.into(),
            };
            *seen.entry(kind).or_default() += 1;
        };
        for _ in 0..10000 {
            let mut text: String = (0..next(12))
                .map(|_| LINES[next(LINES.len())])
                .collect::<Vec<_>>()
                .join("\n");
            if next(3) > 0 {
                text.push('\n');
            }
            let frag = ["a()\n", "x()\n\ny()\n", "- a.yaml", "", "\tb()"][next(5)].to_string();
            let t = &text;
            tally(both(|| {
                insert_above(t, "//", "builder", std::slice::from_ref(&frag)).map(Cow::into_owned)
            }));
            tally(both(|| {
                insert_above(t, "#", "x", &[frag.clone(), "- b".into()]).map(Cow::into_owned)
            }));
            tally(both(|| {
                insert_go_import(t, &ImportSpec::new(Some("bv1"), "m/api/b/v1"), "m")
            }));
            tally(both(|| {
                insert_go_import(t, &ImportSpec::new(None, "context"), "m")
            }));
            both(|| insert_after_line(t, " resources: ", &frag));
            both(|| insert_before_line(t, "Complete()", &frag));
        }
        for kind in [
            "ok",
            "missing",
            "duplicate",
            "above the package clause",
            "inside a raw string literal",
            "inside a /* */ comment",
        ] {
            assert!(seen.get(kind).copied().unwrap_or(0) >= 100, "{seen:?}");
        }
    }
}
