//! An [`Edit`] of the plan applied to a file's text through src/markers/, with the conflicts,
//! warnings and notes it reports in the plan's words.

use super::data::Edit;
use crate::markers::go::imports::{insert_go_imports, ImportSpec};
use crate::markers::go::tags::tag_go_type;
use crate::markers::makefile::insert_after_recipe;
use crate::markers::rust::insert_sorted_above;
use crate::markers::scaffold::{comment_token, fragment_present, insert_above_for, MarkerError};
use crate::markers::text::{append_once, insert_after_line, insert_before_line, replace_line};
use crate::markers::yaml::{enable_entries, uncomment};
use std::borrow::Cow;
use std::path::Path;

/// Why an edit cannot be made.
#[derive(Debug)]
pub(super) struct EditError {
    /// The conflict, in full.
    pub text: String,
    /// When what the edit needs is not in the file (a marker, a line, a declaration), that, as
    /// it reads after "has no" ("line `// +kubebuilder:scaffold:scheme`"). Such an edit's
    /// [`super::Part`] can be left out.
    pub missing: Option<String>,
}

impl EditError {
    fn other(text: String) -> Self {
        EditError {
            text,
            missing: None,
        }
    }

    fn missing(text: String, what: String) -> Self {
        EditError {
            text,
            missing: Some(what),
        }
    }
}

/// Add imports to a Go file (several at once: one search for the marker, one copy).
fn go_imports<'a>(
    path: &Path,
    content: &'a str,
    specs: &[ImportSpec],
    module: &str,
    notes: &mut Vec<String>,
) -> Result<Cow<'a, str>, EditError> {
    let show = path.display();
    let (out, has_marker) = insert_go_imports(content, specs, module).map_err(|e| match e {
        MarkerError::Missing(m) => EditError::missing(
            format!(
                "{show}: the marker `{m}` is missing; put it back as the last line of the import block"
            ),
            "import block".into(),
        ),
        e => EditError::other(format!("{show}: {e}")),
    })?;
    // Only files that carry scaffold markers are expected to have an imports marker (main.go
    // and the suites); the webhook files never had one.
    if !has_marker && out != content && content.contains("+kubebuilder:scaffold:") {
        let note = format!(
            "{show}: the marker `// +kubebuilder:scaffold:imports` is missing, so new imports went into the first import block; put the marker back as the last line of that block"
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Ok(out)
}

/// The text after `edit`; borrowed when the edit changes nothing, so that an unchanged file is
/// never copied.
pub(super) fn apply_edit<'a>(
    path: &Path,
    content: &'a str,
    edit: &Edit,
    warnings: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<Cow<'a, str>, EditError> {
    let show = path.display();
    let marker_error = |e: MarkerError| match e {
        MarkerError::Missing(m) => EditError::missing(
            format!(
                "{show}: the marker `{m}` is missing; put it back where new code should be inserted"
            ),
            format!("line `{m}`"),
        ),
        e => EditError::other(format!("{show}: {e}")),
    };
    let token = || {
        comment_token(path).ok_or_else(|| {
            EditError::other(format!(
                "{show}: no comment syntax known for this kind of file"
            ))
        })
    };
    match edit {
        Edit::AboveMarker { marker, fragments } => {
            let token = token()?;
            match insert_above_for(path, content, token, marker, fragments) {
                // Nothing to insert: the marker is not needed.
                Err(MarkerError::Missing(_))
                    if fragments
                        .iter()
                        .all(|f| fragment_present(content, token, f)) =>
                {
                    Ok(Cow::Borrowed(content))
                }
                r => r.map_err(marker_error),
            }
        }
        Edit::SortedAboveMarker { marker, line } => {
            let token = token()?;
            match insert_sorted_above(content, token, marker, line) {
                Err(MarkerError::Missing(_))
                    if content.lines().any(|l| l.trim() == line.trim()) =>
                {
                    Ok(Cow::Borrowed(content))
                }
                r => r.map_err(marker_error),
            }
        }
        Edit::GoImport { spec, module } => {
            go_imports(path, content, std::slice::from_ref(spec), module, notes)
        }
        Edit::Uncomment { block, required } => match uncomment(content, block) {
            Some(c) => Ok(Cow::Owned(c)),
            None if *required => Err(EditError::missing(
                format!(
                    "{show}: expected to find this block (commented out or not) but did not:\n{}",
                    indent_block(block)
                ),
                "such block".into(),
            )),
            None => {
                warnings.push(format!(
                    "{show}: could not find the commented-out block below; enable it by hand:\n{}",
                    indent_block(block)
                ));
                Ok(Cow::Borrowed(content))
            }
        },
        Edit::EnableEntry { start, needs } => {
            let needs: Vec<&str> = needs.iter().map(String::as_str).collect();
            match enable_entries(content, start, &needs) {
                Some(c) => Ok(Cow::Owned(c)),
                None => {
                    warnings.push(format!(
                        "{show}: could not find the `{start}` entry holding these lines, commented out or not; \
                         add or enable it by hand:\n{}",
                        indent_block(&needs.join("\n"))
                    ));
                    Ok(Cow::Borrowed(content))
                }
            }
        }
        Edit::AfterLine { anchor, text } => {
            insert_after_line(content, anchor, text).ok_or_else(|| missing_line(path, anchor))
        }
        Edit::BeforeLine { anchor, text } => {
            insert_before_line(content, anchor, text).ok_or_else(|| missing_line(path, anchor))
        }
        Edit::ReplaceLine { line, text } => {
            replace_line(content, line, text).ok_or_else(|| missing_line(path, line))
        }
        Edit::Append { text } => Ok(append_once(content, text)),
        Edit::TypeTags { type_name, tags } => tag_go_type(content, type_name, tags)
            .map(Cow::Owned)
            .ok_or_else(|| {
                EditError::missing(
                    format!(
                        "{show}: the declaration `type {type_name} struct` is missing; add it back"
                    ),
                    format!("declaration `type {type_name} struct`"),
                )
            }),
        Edit::AfterRecipe { target, text } => insert_after_recipe(content, target, text)
            .map(Cow::Owned)
            .ok_or_else(|| {
                EditError::missing(
                    format!("{show}: the rule `{target}:` is missing; add it back"),
                    format!("rule `{target}:`"),
                )
            }),
    }
}

fn missing_line(path: &Path, anchor: &str) -> EditError {
    EditError::missing(
        format!(
            "{}: the line `{anchor}` is missing; add it back",
            path.display()
        ),
        format!("line `{anchor}`"),
    )
}

fn indent_block(b: &str) -> String {
    b.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
