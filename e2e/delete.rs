//! `delete api` and `delete webhook`: round trips derived from the golden scripts. Each
//! golden script (e2e/testdata/*/commands) is run forward, keeping the tree after every
//! command; then, from the last command back, each `create api` and `create webhook` is undone
//! by the matching `delete` and the tree must be byte-identical (every file and directory) to
//! the one before that `create`. A command that has no reverse (`init`, `edit`, `create
//! --force`) is stepped over by going back to the tree before it. So every kind of API and
//! webhook the golden trees have is created and deleted again, in both layouts.

use crate::support::{full_snapshot, opbuilder, project_yaml, split_words};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// Make `dir` hold exactly `tree`.
fn restore(dir: &Path, tree: &Tree) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            fs::remove_dir_all(&p).unwrap();
        } else {
            fs::remove_file(&p).unwrap();
        }
    }
    for (rel, bytes) in tree {
        let p = dir.join(rel);
        match bytes {
            None => fs::create_dir_all(&p).unwrap(),
            Some(b) => {
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(&p, b).unwrap();
            }
        }
    }
}

/// The value of `--flag` in a command's words (`--flag v` or `--flag=v`).
fn flag<'a>(words: &'a [String], name: &str) -> Option<&'a str> {
    words.iter().enumerate().find_map(|(i, w)| {
        if w == name {
            words.get(i + 1).map(String::as_str)
        } else {
            w.strip_prefix(name).and_then(|r| r.strip_prefix('='))
        }
    })
}

/// The `delete` command that undoes the `create` command `words` in a project whose PROJECT
/// (before that command) is `before`; None for a command without one.
pub fn reverse(words: &[String], before: &serde_yaml::Value) -> Option<Vec<String>> {
    let has = |f: &str| words.iter().any(|w| w == f);
    if words.get(1).map(String::as_str) != Some("create") || has("--force") {
        return None;
    }
    let (g, v, k) = (
        flag(words, "--group").unwrap_or_default(),
        flag(words, "--version")?,
        flag(words, "--kind")?,
    );
    let mut out: Vec<String> = [
        "delete",
        words[2].as_str(),
        "--group",
        g,
        "--version",
        v,
        "--kind",
        k,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    match words[2].as_str() {
        "api" => {
            if let Some(n) = flag(words, "--controller-name") {
                out.extend(["--controller-name".to_string(), n.to_string()]);
            } else if has("--resource=false") {
                let recorded = before["resources"].as_sequence().is_some_and(|rs| {
                    rs.iter().any(|r| {
                        r["group"].as_str().unwrap_or_default() == g
                            && r["version"].as_str() == Some(v)
                            && r["kind"].as_str() == Some(k)
                    })
                });
                if recorded {
                    out.push("--resource=false".into());
                }
            }
        }
        "webhook" => {
            for f in ["--defaulting", "--programmatic-validation", "--conversion"] {
                if has(f) {
                    out.push(f.into());
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

/// The first differences between two trees, for a failure message.
fn differences(want: &Tree, got: &Tree) -> String {
    let mut out = vec![];
    for (p, w) in want {
        match got.get(p) {
            None => out.push(format!("  missing: {}", p.display())),
            Some(g) if g != w => {
                let (w, g) = (
                    String::from_utf8_lossy(w.as_deref().unwrap_or_default()).to_string(),
                    String::from_utf8_lossy(g.as_deref().unwrap_or_default()).to_string(),
                );
                let line = w
                    .lines()
                    .zip(g.lines())
                    .position(|(a, b)| a != b)
                    .map_or_else(
                        || format!("{} lines, got {}", w.lines().count(), g.lines().count()),
                        |i| {
                            format!(
                                "line {}:\n      want: {}\n      got:  {}",
                                i + 1,
                                w.lines().nth(i).unwrap_or_default(),
                                g.lines().nth(i).unwrap_or_default()
                            )
                        },
                    );
                out.push(format!("  differs: {} ({line})", p.display()));
            }
            _ => {}
        }
    }
    for p in got.keys().filter(|p| !want.contains_key(*p)) {
        out.push(format!("  extra:   {}", p.display()));
    }
    out.truncate(12);
    out.join("\n")
}

/// Run `script` forward in `dir`, then undo its `create` commands from the last back; the
/// problems found, and how many commands were undone.
fn round_trip(script: &str, dir: &Path) -> (Vec<String>, usize) {
    let lines: Vec<Vec<String>> = script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(split_words)
        .collect();
    let mut trees: Vec<Tree> = vec![full_snapshot(dir)];
    let mut projects: Vec<serde_yaml::Value> = vec![serde_yaml::Value::Null];
    for words in &lines {
        let out = opbuilder(dir).args(&words[1..]).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            words.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        trees.push(full_snapshot(dir));
        projects.push(project_yaml(dir));
    }
    let mut problems = vec![];
    let mut undone = 0;
    let mut in_place = true;
    for i in (0..lines.len()).rev() {
        let Some(delete) = reverse(&lines[i], &projects[i]) else {
            in_place = false;
            continue;
        };
        if !in_place {
            restore(dir, &trees[i + 1]);
            in_place = true;
        }
        let out = opbuilder(dir).args(&delete).output().unwrap();
        undone += 1;
        let shown = format!(
            "`opbuilder {}` after `{}`",
            delete.join(" "),
            lines[i].join(" ")
        );
        if !out.status.success() {
            problems.push(format!(
                "{shown} failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            in_place = false;
            continue;
        }
        let got = full_snapshot(dir);
        if got != trees[i] {
            problems.push(format!(
                "{shown} does not give the tree before it back:\n{}\nstdout:\n{}",
                differences(&trees[i], &got),
                String::from_utf8_lossy(&out.stdout)
            ));
            in_place = false;
        }
    }
    (problems, undone)
}

#[test]
fn create_then_delete_gives_every_golden_tree_back() {
    let mut failures = vec![];
    let mut total = 0;
    for case in crate::support::script_dirs("testdata") {
        let script = fs::read_to_string(case.join("commands")).unwrap();
        let work = tempfile::tempdir().unwrap();
        let (problems, undone) = round_trip(&script, work.path());
        for p in problems {
            failures.push(format!(
                "{}: {p}",
                case.file_name().unwrap().to_string_lossy()
            ));
        }
        total += undone;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every `create` of the golden scripts but the --force ones (44 when this was written).
    let creates = crate::support::script_dirs("testdata")
        .iter()
        .flat_map(|d| {
            fs::read_to_string(d.join("commands"))
                .unwrap()
                .lines()
                .filter(|l| l.starts_with("opbuilder create ") && !l.contains("--force"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .count();
    assert_eq!(
        total, creates,
        "every create of the golden scripts is undone"
    );
}
