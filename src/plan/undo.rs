//! [`undo`]: the reverse of a `create` plan, as the files are now. A file the plan created
//! goes when it is still what the plan wrote (else it is kept and reported, or removed with
//! `force`); the edits the plan made to other files are taken out again
//! (`crate::markers::remove`), each unless the rest of the project needs it too (the `keep`
//! plan, what creating everything else would write). What cannot be found as the plan wrote it
//! is reported to be removed by hand; nothing is guessed.

use super::data::{Edit, IfExists, Op, Plan};
use super::edit::apply_edit;
use crate::markers::go::imports::insert_go_imports;
use crate::markers::remove::{self, Removal};
use crate::markers::scaffold::comment_token;
use crate::markers::yaml::{enable_entries, uncomment};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest file read to take an edit out of.
const MAX_FILE: u64 = 64 << 20;

/// What [`undo`] works from.
pub struct Undo<'a> {
    /// What `create` planned, as the plugins plan it again.
    pub created: &'a Plan,
    /// What the rest of the project needs: what creating everything else would write.
    pub keep: &'a Plan,
    /// The same `create` planned with other templates a file may have been written with (those
    /// of the release PROJECT's cliVersion names): a file that matches any is unchanged too.
    pub variants: &'a [Plan],
    /// Files as their templates write them, before any command switched parts on: how a block
    /// or entry a command uncommented is commented out again.
    pub base: &'a BTreeMap<PathBuf, String>,
    /// Remove a file the plan created even when it changed since.
    pub force: bool,
}

/// Text to take out of a file by hand.
#[derive(Debug, Clone, PartialEq)]
pub struct ByHand {
    pub path: PathBuf,
    /// What to do, and the text: "remove these lines", "comment out this block".
    pub what: String,
}

/// The reverse of a plan.
#[derive(Debug, Default)]
pub struct Undone {
    /// Remove a file, or write the text left when the edits are taken out.
    pub ops: Vec<Op>,
    /// Files the plan created that changed since: kept.
    pub kept: Vec<PathBuf>,
    /// Files the plan created that changed since, removed all the same (`force`).
    pub forced: Vec<PathBuf>,
    pub by_hand: Vec<ByHand>,
}

/// The text of `path` under `root`, if it is a readable UTF-8 file.
fn read(root: &Path, path: &Path) -> Option<String> {
    crate::fsx::read_text(&root.join(path), MAX_FILE)
        .ok()
        .flatten()
}

/// The ops of `plan` on `path`, in order.
fn ops_on<'p>(plan: &'p Plan, path: &'p Path) -> impl Iterator<Item = &'p Op> + 'p {
    plan.ops.iter().filter(move |op| op.path() == path)
}

/// What the ops of `plan` on `path` leave there, starting from no file.
pub fn simulate(plan: &Plan, path: &Path) -> Option<String> {
    simulate_from(plan, path, None)
}

/// What the ops of `plan` on `path` leave there, starting from `text` (None: no file).
pub fn simulate_from(plan: &Plan, path: &Path, mut text: Option<String>) -> Option<String> {
    let (mut warnings, mut notes) = (vec![], vec![]);
    for op in ops_on(plan, path) {
        match op {
            Op::Create {
                content, if_exists, ..
            } => {
                if text.is_none() || *if_exists == IfExists::Overwrite {
                    text = Some(content.clone());
                }
            }
            Op::Update { edits, .. } => {
                if let Some(t) = &mut text {
                    for e in edits {
                        if let Ok(std::borrow::Cow::Owned(n)) =
                            apply_edit(path, t, e, &mut warnings, &mut notes)
                        {
                            *t = n;
                        }
                    }
                }
            }
            Op::Remove { .. } => text = None,
        }
    }
    text
}

/// Whether `keep` makes `edit` on `path` too. For fragments above a marker, whether one of its
/// edits at that marker inserts `fragment`.
fn kept(keep: &Plan, path: &Path, edit: &Edit, fragment: Option<&str>) -> bool {
    ops_on(keep, path).any(|op| match op {
        Op::Update { edits, .. } => edits.iter().any(|e| match (e, edit, fragment) {
            (
                Edit::AboveMarker {
                    marker: m,
                    fragments,
                },
                Edit::AboveMarker { marker, .. },
                Some(f),
            ) => m == marker && fragments.iter().any(|g| g == f),
            _ => e == edit,
        }),
        _ => false,
    })
}

/// The lines of `text`, indented for a report.
fn shown(text: &str) -> String {
    text.trim_matches('\n')
        .lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text an edit inserts, for the edits that insert lines.
fn inserted<'e>(edit: &'e Edit, fragment: Option<&'e str>) -> Option<&'e str> {
    match edit {
        Edit::AboveMarker { .. } => fragment,
        Edit::AfterLine { text, .. }
        | Edit::BeforeLine { text, .. }
        | Edit::ReplaceLine { text, .. }
        | Edit::Append { text }
        | Edit::AfterRecipe { text, .. } => Some(text),
        _ => None,
    }
}

/// The lines of what `edit` inserted that are still in `text` though the insertion is not (it
/// changed since): each a line of at least 20 characters that begins a line of the file, and
/// that no insertion of `keep` into the file makes (those are the other resources'). None when
/// nothing is left.
fn traces(
    text: &str,
    edit: &Edit,
    fragment: Option<&str>,
    keep: &Plan,
    path: &Path,
) -> Option<String> {
    let ins = inserted(edit, fragment)?;
    let kept_lines: Vec<&str> = ops_on(keep, path)
        .filter_map(|op| match op {
            Op::Update { edits, .. } => Some(edits),
            _ => None,
        })
        .flatten()
        .flat_map(|e| match e {
            Edit::AboveMarker { fragments, .. } => fragments.iter().map(String::as_str).collect(),
            e => inserted(e, None).into_iter().collect::<Vec<_>>(),
        })
        .flat_map(str::lines)
        .map(str::trim)
        .collect();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let left: Vec<&str> = ins
        .lines()
        .map(str::trim)
        .filter(|l| l.len() >= 20 && !kept_lines.contains(l))
        .filter(|l| lines.iter().any(|t| t.starts_with(l)))
        .collect();
    (!left.is_empty()).then(|| left.join("\n"))
}

/// Take `edit` out of `text`; the text without it, or why not (what to do by hand).
fn take_out(
    path: &Path,
    text: &str,
    edit: &Edit,
    fragment: Option<&str>,
    base: Option<&str>,
) -> Result<Option<String>, String> {
    let token = comment_token(path).unwrap_or("//");
    let removal = match edit {
        Edit::AboveMarker { marker, .. } => {
            let f = fragment.unwrap_or_default();
            match remove::remove_above_marker(text, token, marker, f) {
                Removal::Changed => {
                    return Err(format!("remove these lines (changed since):\n{}", shown(f)))
                }
                r => r,
            }
        }
        Edit::SortedAboveMarker { marker, line } => {
            remove::remove_sorted_above(text, token, marker, line)
        }
        Edit::GoImport { spec, module } => {
            let present = text.lines().any(|l| l.trim() == spec.line());
            let back = remove::remove_go_import(text, spec).into_iter().find(|c| {
                insert_go_imports(c, std::slice::from_ref(spec), module)
                    .is_ok_and(|(again, _)| again == text)
            });
            match back {
                Some(b) => Removal::Removed(b),
                None if present => Removal::Changed,
                None => Removal::Absent,
            }
        }
        Edit::Uncomment { block, .. } => {
            let Some(base) = base else {
                return Err(format!(
                    "comment this block out if nothing else needs it:\n{}",
                    shown(block)
                ));
            };
            match remove::recomment_block(text, block, base) {
                Removal::Removed(t) if uncomment(&t, block).as_deref() == Some(text) => {
                    Removal::Removed(t)
                }
                Removal::Absent => Removal::Absent,
                _ => Removal::Changed,
            }
        }
        Edit::EnableEntry { start, needs } => {
            let needs: Vec<&str> = needs.iter().map(String::as_str).collect();
            let base = base.unwrap_or_default();
            match remove::recomment_entries(text, start, &needs, base) {
                Removal::Removed(t)
                    if enable_entries(&t, start, &needs).as_deref() == Some(text) =>
                {
                    Removal::Removed(t)
                }
                Removal::Absent => Removal::Absent,
                _ => Removal::Changed,
            }
        }
        Edit::AfterLine { anchor, text: t } => remove::remove_after_line(text, anchor, t),
        Edit::BeforeLine { anchor, text: t } => remove::remove_before_line(text, anchor, t),
        Edit::ReplaceLine { line, text: t } => remove::restore_line(text, line, t),
        Edit::Append { text: t } => remove::remove_appended(text, t),
        Edit::TypeTags { type_name, tags } => remove::untag_go_type(text, type_name, tags),
        Edit::AfterRecipe { target, text: t } => remove::remove_after_recipe(text, target, t),
    };
    match removal {
        Removal::Removed(t) => Ok(Some(t)),
        Removal::Absent => Ok(None),
        Removal::Changed => Err(describe(edit)),
    }
}

/// What to take out by hand for `edit`, when it is not there as the plan wrote it.
fn describe(edit: &Edit) -> String {
    match edit {
        Edit::AboveMarker { fragments, .. } => {
            format!(
                "remove these lines (changed since):\n{}",
                shown(&fragments.join("\n"))
            )
        }
        Edit::SortedAboveMarker { line, .. } => format!("remove the line `{}`", line.trim()),
        Edit::GoImport { spec, .. } => format!("remove the import `{}`", spec.line()),
        Edit::Uncomment { block, .. } => format!(
            "comment this block out again if nothing else needs it:\n{}",
            shown(block)
        ),
        Edit::EnableEntry { needs, .. } => format!(
            "comment out again the entry holding these lines, if nothing else needs it:\n{}",
            shown(&needs.join("\n"))
        ),
        Edit::AfterLine { text, .. }
        | Edit::BeforeLine { text, .. }
        | Edit::Append { text }
        | Edit::AfterRecipe { text, .. } => {
            format!("remove these lines (changed since):\n{}", shown(text))
        }
        Edit::ReplaceLine { line, text } => format!(
            "put back the line `{}` in place of these (changed since):\n{}",
            line.trim(),
            shown(text)
        ),
        Edit::TypeTags { type_name, tags } => format!(
            "remove {} above `type {type_name} struct`",
            tags.join(" and ")
        ),
    }
}

/// The reverse of `u.created` under `root`, as the files are now (see the module documentation).
pub fn undo(root: &Path, u: &Undo) -> Undone {
    let mut out = Undone::default();
    let mut paths: Vec<&PathBuf> = vec![];
    for op in &u.created.ops {
        if !paths.contains(&op.path()) {
            paths.push(op.path());
        }
    }
    for path in paths {
        let Some(current) = read(root, path) else {
            continue;
        };
        let creates = ops_on(u.created, path).any(|op| matches!(op, Op::Create { .. }));
        let shared = ops_on(u.keep, path).any(|op| matches!(op, Op::Create { .. }));
        if creates && !shared {
            let unchanged = std::iter::once(u.created)
                .chain(u.variants)
                .any(|p| simulate(p, path).as_deref() == Some(current.as_str()));
            if unchanged || u.force {
                if !unchanged {
                    out.forced.push(path.clone());
                }
                out.ops.push(Op::Remove { path: path.clone() });
                continue;
            }
            // Changed since: kept, and what the plan inserted into it taken out as below.
            out.kept.push(path.clone());
        }
        // Shared, kept, or only edited: take out the edits nothing else needs, last first.
        let mut text = current.clone();
        let edits: Vec<&Edit> = ops_on(u.created, path)
            .filter_map(|op| match op {
                Op::Update { edits, .. } => Some(edits.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        let base = u.base.get(path).map(String::as_str);
        for edit in edits.into_iter().rev() {
            let fragments: Vec<Option<&str>> = match edit {
                Edit::AboveMarker { fragments, .. } => {
                    fragments.iter().rev().map(|f| Some(f.as_str())).collect()
                }
                _ => vec![None],
            };
            for fragment in fragments {
                if kept(u.keep, path, edit, fragment) {
                    continue;
                }
                match take_out(path, &text, edit, fragment, base) {
                    Ok(Some(t)) => text = t,
                    Ok(None) => {
                        // Not there as inserted: what is left of it, changed, is named.
                        if let Some(left) = traces(&text, edit, fragment, u.keep, path) {
                            let entry = ByHand {
                                path: path.clone(),
                                what: format!(
                                    "remove what is left of these lines (changed since):\n{}",
                                    shown(&left)
                                ),
                            };
                            if !out.by_hand.contains(&entry) {
                                out.by_hand.push(entry);
                            }
                        }
                    }
                    Err(what) => {
                        let entry = ByHand {
                            path: path.clone(),
                            what,
                        };
                        if !out.by_hand.contains(&entry) {
                            out.by_hand.push(entry);
                        }
                    }
                }
            }
        }
        if text != current {
            out.ops.push(Op::Create {
                path: path.clone(),
                content: text,
                if_exists: IfExists::Overwrite,
                part: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{apply, ApplyOptions};
    use std::fs;

    /// A create plan applied, then undone: the files are as before, byte for byte; a shared
    /// edit stays while `keep` needs it; a file changed since is kept.
    #[test]
    fn a_plan_undone_gives_the_files_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let main = "package main\n\nimport (\n\t\"os\"\n\t// +kubebuilder:scaffold:imports\n)\n\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n\tos.Exit(0)\n}\n";
        fs::write(root.join("main.go"), main).unwrap();
        let mut created = Plan::default();
        created.create("a.go", "package a\n", IfExists::Error);
        created.go_import("main.go", Some("av1"), "m/api/v1", "m");
        created.above_marker(
            "main.go",
            "builder",
            vec!["a()\n".into(), "shared()\n".into()],
        );
        apply(root, &created, &ApplyOptions::default()).unwrap();
        let mut keep = Plan::default();
        keep.above_marker("main.go", "builder", vec!["shared()\n".into()]);
        let base = BTreeMap::new();
        let u = Undo {
            created: &created,
            keep: &keep,
            variants: &[],
            base: &base,
            force: false,
        };
        let undone = undo(root, &u);
        assert!(undone.kept.is_empty() && undone.by_hand.is_empty());
        let plan = Plan {
            ops: undone.ops,
            ..Default::default()
        };
        apply(root, &plan, &ApplyOptions::default()).unwrap();
        assert!(!root.join("a.go").exists());
        assert_eq!(
            fs::read_to_string(root.join("main.go")).unwrap(),
            main.replace(
                "\t// +kubebuilder:scaffold:builder",
                "\tshared()\n\t// +kubebuilder:scaffold:builder"
            )
        );
        // Changed since: kept, unless forced.
        apply(root, &created, &ApplyOptions::default()).unwrap();
        fs::write(root.join("a.go"), "package a\n\nfunc Mine() {}\n").unwrap();
        let undone = undo(root, &u);
        assert_eq!(undone.kept, [PathBuf::from("a.go")]);
        let forced = undo(root, &Undo { force: true, ..u });
        assert_eq!(forced.forced, [PathBuf::from("a.go")]);
    }
}
