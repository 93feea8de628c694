//! What to do by hand for a part of a plan that was left out: each of its operations as a place
//! in a file and the text to put there, less what the file holds already.

use super::data::{Edit, IfExists, Op};
use super::report::Piece;
use crate::markers::scaffold::{comment_token, fragment_present, has_marker, purpose};
use crate::markers::text::contains_fragment;
use std::path::Path;

/// The pieces of `op`, given the text of its file as the rest of the plan leaves it (None: the
/// file is missing).
pub(super) fn pieces(op: &Op, current: Option<&str>) -> Vec<Piece> {
    match op {
        Op::Create {
            path,
            content,
            if_exists,
            ..
        } => {
            if current.is_some() && *if_exists != IfExists::Overwrite {
                return vec![];
            }
            vec![Piece {
                place: format!("a new file {}", path.display()),
                text: content.clone(),
            }]
        }
        Op::Update { path, edits, .. } => edits
            .iter()
            .filter_map(|e| piece(path, e, current))
            .collect(),
        Op::Remove { .. } => vec![],
    }
}

/// Whether `text` is in the file already (never, when it is missing).
fn present(current: Option<&str>, text: &str) -> bool {
    current.is_some_and(|c| contains_fragment(c, text))
}

/// Where the text above marker `name` goes: above the marker when the file has it, else where it
/// would be.
fn marker_place(path: &Path, current: Option<&str>, token: &str, name: &str) -> String {
    let file = path.display();
    let marker = format!("{token} +kubebuilder:scaffold:{name}");
    if current.is_some_and(|c| has_marker(c, token, name)) {
        return format!("{file}, above `{marker}`");
    }
    match purpose(name) {
        Some(p) => format!("{file}, {p} (where `{marker}` belongs)"),
        None => format!("{file}, where `{marker}` belongs"),
    }
}

fn piece(path: &Path, edit: &Edit, current: Option<&str>) -> Option<Piece> {
    let file = path.display();
    let (place, text) = match edit {
        Edit::AboveMarker { marker, fragments } => {
            let token = comment_token(path).unwrap_or("//");
            let todo: Vec<&str> = fragments
                .iter()
                .filter(|f| !current.is_some_and(|c| fragment_present(c, token, f)))
                .map(|f| f.trim_end_matches('\n'))
                .collect();
            if todo.is_empty() {
                return None;
            }
            (marker_place(path, current, token, marker), todo.join("\n"))
        }
        Edit::SortedAboveMarker { marker, line } => {
            if current.is_some_and(|c| c.lines().any(|l| l.trim() == line.trim())) {
                return None;
            }
            let token = comment_token(path).unwrap_or("//");
            (marker_place(path, current, token, marker), line.clone())
        }
        Edit::GoImport { spec, .. } => {
            if current.is_some_and(|c| c.contains(&format!("\"{}\"", spec.path))) {
                return None;
            }
            let line = match &spec.name {
                Some(n) => format!("{n} \"{}\"", spec.path),
                None => format!("\"{}\"", spec.path),
            };
            (format!("{file}, in the import block"), line)
        }
        Edit::Uncomment { block, .. } => {
            if present(current, block) {
                return None;
            }
            (format!("{file}, uncommented (or added)"), block.clone())
        }
        Edit::EnableEntry { start, needs } => (
            format!("{file}, the `{start}` entry holding these lines, uncommented (or added)"),
            needs.join("\n"),
        ),
        Edit::AfterLine { anchor, text } => {
            if present(current, text) {
                return None;
            }
            (format!("{file}, after the line `{anchor}`"), text.clone())
        }
        Edit::BeforeLine { anchor, text } => {
            if present(current, text) {
                return None;
            }
            (format!("{file}, before the line `{anchor}`"), text.clone())
        }
        Edit::ReplaceLine { line, text } => {
            if present(current, text) {
                return None;
            }
            (
                format!("{file}, in place of the line `{}`", line.trim()),
                text.clone(),
            )
        }
        Edit::Append { text } => {
            if present(current, text) {
                return None;
            }
            (format!("{file}, at the end"), text.clone())
        }
        Edit::TypeTags { type_name, tags } => (
            format!("{file}, in the comment above `type {type_name} struct`"),
            tags.join("\n"),
        ),
        Edit::AfterRecipe { target, text } => {
            if present(current, text) {
                return None;
            }
            (
                format!("{file}, at the end of the recipe of `{target}:`"),
                text.clone(),
            )
        }
    };
    Some(Piece { place, text })
}

/// Parts left out: how `apply` stages a plan without them, and what it says to add by hand.
#[cfg(test)]
mod tests {
    use super::super::apply::{apply, ApplyOptions};
    use super::super::data::{Edit, IfExists, Part, Plan};
    use super::super::report::{Conflicts, Missing, Piece};
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::{Path, PathBuf};

    const OPTIONAL: Part = Part::optional("the optional part");
    const OTHER: Part = Part::optional("the other part");
    const ESSENTIAL: Part = Part::essential("the essential part");
    const MAIN: &str = "package main\n\nimport (\n\t\"os\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n";

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("cmd")).unwrap();
        fs::write(t.path().join("cmd/main.go"), MAIN).unwrap();
        fs::write(t.path().join("k.yaml"), "resources:\n- a.yaml\n").unwrap();
        t
    }

    fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    out.insert(p.strip_prefix(root).unwrap().into(), fs::read(&p).unwrap());
                }
            }
        }
        out
    }

    fn opts(dry_run: bool, leave_out_essential: bool) -> ApplyOptions {
        ApplyOptions {
            dry_run,
            leave_out_essential,
            ..Default::default()
        }
    }

    fn missing(file: &str, what: Option<&str>) -> Missing {
        Missing {
            file: file.into(),
            what: what.map(String::from),
        }
    }

    /// A plan with a file of its own, an optional part (a new file and the entry for it in a
    /// kustomization the test may remove) and an essential one (an import and a setup in main.go).
    fn plan() -> Plan {
        let mut plan = Plan::default();
        plan.create("new.txt", "new\n", IfExists::Error);
        plan.part(OPTIONAL, |plan| {
            plan.create("policy/p.yaml", "kind: P\n", IfExists::Skip);
            plan.update(
                "k.yaml",
                Edit::AfterLine {
                    anchor: "resources:".into(),
                    text: "- p.yaml".into(),
                },
            );
        });
        plan.part(ESSENTIAL, |plan| {
            plan.go_import(
                "cmd/main.go",
                None,
                "example.com/m/internal/controller",
                "example.com/m",
            );
            plan.above_marker(
                "cmd/main.go",
                "builder",
                vec!["controller.Setup()\n".into()],
            );
        });
        plan.project = Some("version: \"3\"\n".into());
        plan
    }

    #[test]
    fn an_optional_part_whose_file_is_missing_is_left_out_whole_and_said() {
        let t = tree();
        fs::remove_file(t.path().join("k.yaml")).unwrap();
        let dry = apply(t.path(), &plan(), &opts(true, false)).unwrap();
        let report = apply(t.path(), &plan(), &opts(false, false)).unwrap();
        // The dry run says the same.
        assert_eq!(dry.skipped, report.skipped);
        assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
        let s = &report.skipped[0];
        assert_eq!(s.part, OPTIONAL);
        assert_eq!(s.missing, [missing("k.yaml", None)]);
        assert_eq!(
            s.pieces,
            [
                Piece {
                    place: "a new file policy/p.yaml".into(),
                    text: "kind: P\n".into()
                },
                Piece {
                    place: "k.yaml, after the line `resources:`".into(),
                    text: "- p.yaml".into()
                }
            ]
        );
        // The part's new file is not written; the rest is.
        assert!(!t.path().join("policy").exists());
        assert_eq!(
            fs::read_to_string(t.path().join("new.txt")).unwrap(),
            "new\n"
        );
        let main = fs::read_to_string(t.path().join("cmd/main.go")).unwrap();
        assert!(main.contains("\tcontroller.Setup()\n\t// +kubebuilder:scaffold:builder"));
        assert!(main.contains("\"example.com/m/internal/controller\""));
    }

    #[test]
    fn a_part_is_left_out_whole_when_one_of_its_markers_is_missing() {
        let t = tree();
        let mut plan = Plan::default();
        plan.part(OPTIONAL, |plan| {
            plan.create("policy/p.yaml", "kind: P\n", IfExists::Skip);
            plan.above_marker("cmd/main.go", "builder", vec!["a()\n".into()]);
            plan.above_marker("cmd/main.go", "gone", vec!["b()\n".into()]);
        });
        plan.create("new.txt", "new\n", IfExists::Error);
        let before = snapshot(t.path());
        let report = apply(t.path(), &plan, &opts(false, false)).unwrap();
        let mut after = snapshot(t.path());
        assert_eq!(
            after.remove(Path::new("new.txt")).as_deref(),
            Some(&b"new\n"[..])
        );
        assert_eq!(before, after, "the part wrote something");
        let s = &report.skipped[0];
        assert_eq!(
            s.missing,
            [missing(
                "cmd/main.go",
                Some("line `// +kubebuilder:scaffold:gone`")
            )]
        );
        // Above the marker that is there; where the missing one belongs.
        let places: Vec<&str> = s.pieces.iter().map(|p| p.place.as_str()).collect();
        assert_eq!(
            places,
            [
                "a new file policy/p.yaml",
                "cmd/main.go, above `// +kubebuilder:scaffold:builder`",
                "cmd/main.go, where `// +kubebuilder:scaffold:gone` belongs"
            ]
        );
    }

    #[test]
    fn an_essential_part_refuses_the_plan_unless_told_to_leave_it_out() {
        let t = tree();
        fs::write(
            t.path().join("cmd/main.go"),
            MAIN.replace("// +kubebuilder:scaffold:builder", ""),
        )
        .unwrap();
        let before = snapshot(t.path());
        for dry_run in [false, true] {
            let err = apply(t.path(), &plan(), &opts(dry_run, false)).unwrap_err();
            let c = err.downcast_ref::<Conflicts>().expect("conflicts");
            assert!(c.0.is_empty(), "{:?}", c.0);
            assert_eq!(c.1.len(), 1);
            assert_eq!(c.1[0].part, ESSENTIAL);
            // The import is said too: the rest of the plan does not add it.
            let texts: Vec<&str> = c.1[0].pieces.iter().map(|p| p.text.as_str()).collect();
            assert_eq!(
                texts,
                [
                    "\"example.com/m/internal/controller\"",
                    "controller.Setup()"
                ]
            );
            let shown = err.to_string();
            assert!(shown.contains("--allow-missing-markers"), "{shown}");
            assert!(
                shown.contains("cmd/main.go has no line `// +kubebuilder:scaffold:builder`, so the essential part has nowhere to go"),
                "{shown}"
            );
            assert_eq!(before, snapshot(t.path()));
        }
        let report = apply(t.path(), &plan(), &opts(false, true)).unwrap();
        assert_eq!(report.skipped.len(), 1);
        assert!(report.skipped[0].part.essential);
        // Neither the import nor the setup: the file is as it was.
        assert_eq!(
            fs::read_to_string(t.path().join("cmd/main.go")).unwrap(),
            MAIN.replace("// +kubebuilder:scaffold:builder", "")
        );
        assert!(t.path().join("policy/p.yaml").is_file());
    }

    #[test]
    fn a_part_that_needs_what_a_part_left_out_would_write_is_left_out_too() {
        let t = tree();
        let mut plan = Plan::default();
        plan.part(OPTIONAL, |plan| {
            plan.create("policy/k.yaml", "resources:\n", IfExists::Skip);
            plan.above_marker("cmd/main.go", "gone", vec!["b()\n".into()]);
        });
        plan.part(OTHER, |plan| {
            plan.update(
                "policy/k.yaml",
                Edit::AfterLine {
                    anchor: "resources:".into(),
                    text: "- p.yaml".into(),
                },
            )
        });
        let report = apply(t.path(), &plan, &opts(false, false)).unwrap();
        let parts: Vec<Part> = report.skipped.iter().map(|s| s.part).collect();
        assert_eq!(parts, [OPTIONAL, OTHER]);
        assert_eq!(report.skipped[1].missing, [missing("policy/k.yaml", None)]);
        assert!(!t.path().join("policy").exists());
    }

    #[test]
    fn what_is_not_missing_still_refuses_a_part() {
        // A duplicated marker is a mistake to fix, not a project laid out otherwise.
        let t = tree();
        let twice = MAIN.replace(
            "\t// +kubebuilder:scaffold:builder\n",
            "\t// +kubebuilder:scaffold:builder\n\t// +kubebuilder:scaffold:builder\n",
        );
        fs::write(t.path().join("cmd/main.go"), &twice).unwrap();
        let mut plan = Plan::default();
        plan.part(OPTIONAL, |plan| {
            plan.above_marker("cmd/main.go", "builder", vec!["a()\n".into()])
        });
        let err = apply(t.path(), &plan, &opts(false, true)).unwrap_err();
        let c = err.downcast_ref::<Conflicts>().expect("conflicts");
        assert!(c.0[0].contains("more than once"), "{:?}", c.0);
        assert!(c.1.is_empty());
    }

    #[test]
    fn a_fragment_already_there_needs_no_marker() {
        let t = tree();
        let by_hand = MAIN.replace("\t// +kubebuilder:scaffold:builder\n", "\ta()\n");
        fs::write(t.path().join("cmd/main.go"), &by_hand).unwrap();
        let mut plan = Plan::default();
        plan.part(ESSENTIAL, |plan| {
            plan.above_marker("cmd/main.go", "builder", vec!["a()\n".into()])
        });
        plan.update(
            "cmd/main.go",
            Edit::SortedAboveMarker {
                marker: "mods".into(),
                line: "\"os\"".into(),
            },
        );
        let report = apply(t.path(), &plan, &opts(false, false)).unwrap();
        assert!(report.skipped.is_empty());
        assert_eq!(
            fs::read_to_string(t.path().join("cmd/main.go")).unwrap(),
            by_hand
        );
    }

    #[test]
    fn a_failed_write_after_a_part_was_left_out_restores_every_byte() {
        for n in 0..3 {
            let t = tree();
            fs::remove_file(t.path().join("k.yaml")).unwrap();
            let before = snapshot(t.path());
            let o = ApplyOptions {
                fail_after_writes: Some(n),
                ..Default::default()
            };
            let err = apply(t.path(), &plan(), &o).unwrap_err();
            assert!(format!("{err:#}").contains("restored"), "{err:#}");
            assert_eq!(before, snapshot(t.path()), "after failing at write {n}");
        }
    }
}
