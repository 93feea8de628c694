//! `delete api` and `delete webhook` of a resource that is not the last one created: each
//! golden script (e2e/testdata/*/commands) is run whole, then one of its `create` commands at
//! a time is undone by the matching `delete` (a command no later command builds on: none names
//! the same group and kind), and the tree must hold what running the script without that
//! command makes. Not byte for byte: where several commands insert into one file, what the
//! first of them wrote comes first, so lines can stand in another order, and a blank line
//! that the first one's template put below its own lines is where that command put it. So
//! each file must hold the same lines, blank ones aside, in any order; and the deletion must
//! keep nothing as changed, leave nothing to take out by hand and find no code still using
//! what goes (those only come from the user's changes, and there are none).

use crate::delete::{differences, restore, reverse};
use crate::support::{full_snapshot, opbuilder, project_yaml, script_dirs, split_words};
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// A name `create` chose from what was there when it ran, which stays when what made it
/// choose so goes: (script, the create command undone, the path as it stays, the path a
/// project without that command has, the word in files for each).
const KEPT_NAMES: &[(&str, &str, &str, &str, &str, &str)] = &[(
    // core's Event controller was created beside webapp's Event, so its module is core_event.
    "rust",
    "create api --group webapp --version v1 --kind Event",
    "src/controllers/core_event.rs",
    "src/controllers/event.rs",
    "core_event",
    "event",
)];

/// `tree`'s files with their lines sorted and blank lines left out; directories as they are.
fn lines_of(tree: &Tree) -> BTreeMap<PathBuf, Option<Vec<String>>> {
    tree.iter()
        .map(|(p, b)| {
            let lines = b.as_ref().map(|b| {
                let mut l: Vec<String> = String::from_utf8_lossy(b)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect();
                l.sort();
                l
            });
            (p.clone(), lines)
        })
        .collect()
}

/// `tree` with the names of [`KEPT_NAMES`] for `script` and `command` as a project without
/// the command has them.
fn renamed(tree: Tree, script: &str, command: &str) -> Tree {
    let mut tree = tree;
    for (s, c, from, to, word, by) in KEPT_NAMES {
        if *s != script || !command.starts_with(c) {
            continue;
        }
        if let Some(b) = tree.remove(&PathBuf::from(from)) {
            tree.insert(PathBuf::from(to), b);
        }
        for b in tree.values_mut().flatten() {
            let text = String::from_utf8_lossy(b).to_string();
            if text.contains(word) {
                *b = text.replace(word, by).into_bytes();
            }
        }
    }
    tree
}

/// Run `lines` in a new directory; its tree.
fn made(lines: &[&Vec<String>]) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    for words in lines {
        let out = opbuilder(dir.path()).args(&words[1..]).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            words.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    full_snapshot(dir.path())
}

#[test]
fn a_create_undone_out_of_order_leaves_what_the_others_made() {
    let mut failures = vec![];
    let mut undone = 0;
    for case in script_dirs("testdata") {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let lines: Vec<Vec<String>> = fs::read_to_string(case.join("commands"))
            .unwrap()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(split_words)
            .collect();
        let work = tempfile::tempdir().unwrap();
        let dir = work.path();
        let mut projects = vec![serde_yaml::Value::Null];
        for words in &lines {
            let out = opbuilder(dir).args(&words[1..]).output().unwrap();
            assert!(out.status.success(), "{name}: {}", words.join(" "));
            projects.push(project_yaml(dir));
        }
        let whole = full_snapshot(dir);
        let named = |w: &[String], f: &str| {
            w.iter()
                .position(|x| x == f)
                .and_then(|i| w.get(i + 1).cloned())
        };
        let gk = |w: &[String]| (named(w, "--group"), named(w, "--kind"));
        for (i, words) in lines.iter().enumerate() {
            if i + 1 == lines.len() || lines[i + 1..].iter().any(|w| gk(w) == gk(words)) {
                continue;
            }
            let Some(delete) = reverse(words, &projects[i]) else {
                continue;
            };
            undone += 1;
            restore(dir, &whole);
            let shown = format!("{name}: `opbuilder {}`", delete.join(" "));
            let out = opbuilder(dir).args(&delete).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            if !out.status.success() {
                failures.push(format!(
                    "{shown} failed:\n{stdout}{}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
            if ["Kept, because", "Not found as", "Still used"]
                .iter()
                .any(|s| stdout.contains(s))
            {
                failures.push(format!("{shown} found changes no one made:\n{stdout}"));
                continue;
            }
            let others: Vec<&Vec<String>> = lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, w)| w)
                .collect();
            let want = made(&others);
            let command = words[1..].join(" ");
            let got = renamed(full_snapshot(dir), &name, &command);
            if lines_of(&want) != lines_of(&got) {
                failures.push(format!(
                    "{shown} after the whole script does not leave what it makes without `{command}`:\n{}",
                    differences(&want, &got)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(undone >= 15, "only {undone} creates undone out of order");
}
