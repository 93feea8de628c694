//! The universe: the project's files by path, as an external plugin sees them and answers with.
//!
//! Kubebuilder sends every file under the working directory as it is on disk once the plugins
//! before this one have written theirs. opbuilder writes nothing until the whole chain has
//! planned, so it sends the files on disk with the plan so far applied in memory: the same
//! files. Left out, where Kubebuilder would send them garbled or rewrite them: `.git/`, files
//! that are not UTF-8 text (binaries such as the tools in `bin/`), files over
//! [`MAX_FILE`], and opbuilder's own journal.
//!
//! The answer becomes plan operations: a file whose text differs from what was sent (or that
//! was not sent) is written, replacing what is there; a file the plugin leaves out stays as it
//! is (as in Kubebuilder, a plugin cannot delete). Paths must stay inside the project: an
//! absolute path or one that climbs out with `..` is refused. PROJECT is opbuilder's to write, as
//! Kubebuilder's: a plugin's change to it is dropped, with a note.

use crate::plan::{apply, ApplyOptions, IfExists, Plan};
use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The largest file put in the universe.
pub const MAX_FILE: u64 = 8 << 20;

/// Every regular text file below `root` (symbolic links to files followed, to directories not),
/// by `/`-separated relative path.
fn on_disk(root: &Path) -> Result<BTreeMap<String, String>> {
    fn walk(root: &Path, rel: &str, out: &mut BTreeMap<String, String>) -> Result<()> {
        let dir = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(rel)
        };
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && rel.is_empty() => return Ok(()),
            Err(e) => bail!("reading {} for the external plugin: {e}", dir.display()),
        };
        for e in rd {
            let e = e?;
            let Ok(name) = e.file_name().into_string() else {
                continue;
            };
            // Version control's own files, and opbuilder's journal and its temporary files.
            if name == ".git" || (name.starts_with('.') && name.contains(".opbuilder-")) {
                continue;
            }
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let ft = e.file_type()?;
            if ft.is_dir() {
                walk(root, &path, out)?;
                continue;
            }
            let Ok(meta) = fs::metadata(e.path()) else {
                continue; // a dangling link
            };
            if !meta.is_file() || meta.len() > MAX_FILE {
                continue;
            }
            if let Ok(Some(text)) = crate::fsx::read_text(&e.path(), MAX_FILE) {
                out.insert(path, text);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, "", &mut out)?;
    Ok(out)
}

/// The universe for a plugin that runs after `plan` was planned: the files under `root` with
/// the plan applied in memory (PROJECT as it is on disk: it is written after every plugin).
pub fn current(root: &Path, plan: &Plan) -> Result<BTreeMap<String, String>> {
    let mut universe = on_disk(root)?;
    let report = apply(
        root,
        plan,
        &ApplyOptions {
            dry_run: true,
            contents: true,
            // What the plugin is shown: the plan as it stands; the command's own apply refuses
            // an essential part that cannot be written.
            leave_out_essential: true,
            ..Default::default()
        },
    )?;
    for (path, content) in report.contents {
        let Some(key) = path.to_str().map(|p| p.replace('\\', "/")) else {
            continue;
        };
        match content.map(String::from_utf8) {
            Some(Ok(text)) if text.len() as u64 <= MAX_FILE => {
                universe.insert(key, text);
            }
            _ => {
                universe.remove(&key);
            }
        }
    }
    Ok(universe)
}

/// A response path as a relative path inside the project, or why it is refused.
fn inside(path: &str) -> Result<PathBuf, String> {
    if path.starts_with('/') {
        return Err(format!(
            "{path:?} is an absolute path; a plugin names files relative to the project root"
        ));
    }
    let mut parts: Vec<&str> = vec![];
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!("{path:?} leads outside the project root"));
                }
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(format!("{path:?} names no file"));
    }
    if parts[parts.len() - 1].starts_with(".opbuilder-journal") {
        return Err(format!("{path:?} is opbuilder's transaction journal"));
    }
    Ok(parts.iter().collect())
}

/// Add the files of a plugin's answer to `plan`: those it changed or added. `who` names the
/// plugin in errors and notes.
pub fn answer_into_plan(
    sent: &BTreeMap<String, String>,
    answer: BTreeMap<String, String>,
    plan: &mut Plan,
    notes: &mut Vec<String>,
    who: &str,
) -> Result<()> {
    let mut refused = vec![];
    let mut files = vec![];
    for (path, text) in answer {
        let rel = match inside(&path) {
            Ok(r) => r,
            Err(e) => {
                refused.push(e);
                continue;
            }
        };
        let key = rel.to_string_lossy().to_string();
        if sent.get(&key) == Some(&text) {
            continue;
        }
        if key == crate::project::FILE {
            notes.push(format!(
                "{who} changed PROJECT; opbuilder writes PROJECT itself (as Kubebuilder does), so that change was \
                 not kept"
            ));
            continue;
        }
        files.push((rel, text));
    }
    if !refused.is_empty() {
        bail!(
            "{who} returned files outside the project, which opbuilder does not write: {}. Nothing was written; the \
             plugin must name files by paths relative to the project root",
            refused.join("; ")
        );
    }
    for (rel, text) in files {
        plan.create(rel, text, IfExists::Overwrite);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_stay_inside_the_project() {
        assert_eq!(inside("a/./b//c.txt").unwrap(), Path::new("a/b/c.txt"));
        assert_eq!(inside("a/../b.txt").unwrap(), Path::new("b.txt"));
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "",
            ".",
            "a/.opbuilder-journal",
        ] {
            assert!(inside(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_what_the_plugin_changed_is_planned() {
        let sent = BTreeMap::from([
            ("same.txt".to_string(), "1\n".to_string()),
            ("changed.txt".to_string(), "1\n".to_string()),
            ("PROJECT".to_string(), "version: \"3\"\n".to_string()),
        ]);
        let answer = BTreeMap::from([
            ("same.txt".to_string(), "1\n".to_string()),
            ("./changed.txt".to_string(), "2\n".to_string()),
            ("new/file.txt".to_string(), "3\n".to_string()),
            ("PROJECT".to_string(), "version: \"3\"\nx: 1\n".to_string()),
        ]);
        let (mut plan, mut notes) = (Plan::default(), vec![]);
        answer_into_plan(&sent, answer, &mut plan, &mut notes, "p").unwrap();
        let paths: Vec<String> = plan
            .ops
            .iter()
            .map(|op| match op {
                crate::plan::Op::Create { path, .. } => path.display().to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(paths, ["changed.txt", "new/file.txt"]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let e = answer_into_plan(
            &sent,
            BTreeMap::from([("../up.txt".to_string(), String::new())]),
            &mut plan,
            &mut notes,
            "the external plugin p/v1",
        )
        .unwrap_err();
        assert!(e.to_string().contains("outside the project"), "{e}");
    }
}
