//! UI tests: what opbuilder prints, pinned byte for byte (the idea of cargo's UI tests).
//!
//! Each directory e2e/ui/<case>/ holds:
//! - `commands`: one command per line (`#` comments). `opbuilder ...` must succeed;
//!   `! opbuilder ...` must fail. Environment variables may come first (`NAME=value opbuilder
//!   ...`); `[REPO]` in a value is the repository's root (for e2e/fixtures and docs/examples).
//!   More steps set the scene, each printed in the transcripts as it is written:
//!   `cd DIR` (the directory the next commands run in, relative to the case's directory;
//!   `cd .` goes back), `mkdir DIR` and `chmod MODE PATH` (an octal mode, as a user would
//!   protect a file or a directory); and, to make a project as an earlier release or its owner
//!   left it, `rm PATH...` (files or directories), `mv FROM TO`, `cp [REPO]/FILE TO` and
//!   `drop-lines PATH TEXT` (every line of PATH holding TEXT; it fails the case when no line
//!   does, as each of these does when it finds nothing to change).
//! - `in/` (optional): the tree the commands start from (else an empty directory).
//! - `stdout`, `stderr`: the expected output of all the commands, each command's part headed by
//!   `$ <command>`; a failure adds `[exit N]` to stderr. The working directory reads `[ROOT]`.
//! - `out/` (optional): the tree expected at the end, compared both ways.
//!
//! Re-bless after an intended change of the messages:
//!     OPBUILDER_BLESS=1 cargo test --test e2e ui::
//! which rewrites `stdout`, `stderr` and an existing `out/`; read `git diff e2e/ui` before
//! committing.

use crate::support::{copy_tree, opbuilder, script_dirs, snapshot, split_words};
use std::fs;
use std::path::Path;

/// Run a case's commands in `work`; the stdout and stderr transcripts, or why it went wrong.
fn transcript(script: &str, work: &Path) -> Result<(String, String), String> {
    let repo = env!("CARGO_MANIFEST_DIR");
    let roots = [
        (work.canonicalize().unwrap().display().to_string(), "[ROOT]"),
        (work.display().to_string(), "[ROOT]"),
        (repo.to_string(), "[REPO]"),
    ];
    let clean = |b: &[u8]| {
        let mut s = String::from_utf8_lossy(b).to_string();
        for (r, name) in &roots {
            s = s.replace(r.as_str(), name);
        }
        s
    };
    let (mut out, mut err) = (String::new(), String::new());
    let mut cwd = work.to_path_buf();
    for (n, line) in script.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(done) = scene(line, work, &mut cwd, repo) {
            done.map_err(|e| format!("line {}: `{line}`: {e}", n + 1))?;
            for text in [&mut out, &mut err] {
                text.push_str(&format!("$ {line}\n"));
            }
            continue;
        }
        let (fail, command) = match line.strip_prefix("! ") {
            Some(c) => (true, c),
            None => (false, line),
        };
        let mut words = split_words(command);
        let env: Vec<(String, String)> = words
            .iter()
            .map_while(|w| {
                let (k, v) = w.split_once('=')?;
                k.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    .then(|| (k.to_string(), v.replace("[REPO]", repo)))
            })
            .collect();
        words.drain(..env.len());
        if words.first().map(String::as_str) != Some("opbuilder") {
            return Err(format!(
                "line {}: commands start with `opbuilder` (after NAME=value settings)",
                n + 1
            ));
        }
        let o = opbuilder(&cwd)
            .envs(env)
            .args(&words[1..])
            .output()
            .unwrap();
        if o.status.success() == fail {
            return Err(format!(
                "line {}: `{line}` {} ({})\nstdout:\n{}\nstderr:\n{}",
                n + 1,
                if fail {
                    "succeeded but must fail"
                } else {
                    "failed"
                },
                o.status,
                clean(&o.stdout),
                clean(&o.stderr)
            ));
        }
        for (text, bytes) in [(&mut out, &o.stdout), (&mut err, &o.stderr)] {
            text.push_str(&format!("$ {command}\n"));
            text.push_str(&clean(bytes));
        }
        if let Some(code) = o.status.code().filter(|c| *c != 0) {
            err.push_str(&format!("[exit {code}]\n"));
        }
    }
    Ok((out, err))
}

/// A step that sets the scene (`cd`, `mkdir`, `chmod`, `rm`, `mv`, `cp`, `drop-lines`), done;
/// None for any other line.
fn scene(
    line: &str,
    work: &Path,
    cwd: &mut std::path::PathBuf,
    repo: &str,
) -> Option<Result<(), String>> {
    use std::os::unix::fs::PermissionsExt;
    let words = split_words(line);
    let (first, rest) = words.split_first()?;
    let path = |rel: &str| {
        if rel.starts_with('/') || rel.split('/').any(|p| p == "..") {
            Err(format!("{rel}: paths stay inside the case's directory"))
        } else {
            Ok(work.join(rel))
        }
    };
    Some(match (first.as_str(), rest) {
        ("cd", [dir]) => path(dir).and_then(|p| {
            if p.is_dir() {
                *cwd = p;
                Ok(())
            } else {
                Err(format!("{dir} is not a directory"))
            }
        }),
        ("mkdir", [dir]) => {
            path(dir).and_then(|p| fs::create_dir_all(p).map_err(|e| e.to_string()))
        }
        ("chmod", [mode, target]) => {
            let mode = u32::from_str_radix(mode, 8).map_err(|e| format!("mode {mode}: {e}"));
            mode.and_then(|m| {
                path(target).and_then(|p| {
                    fs::set_permissions(p, fs::Permissions::from_mode(m)).map_err(|e| e.to_string())
                })
            })
        }
        ("rm", paths) if !paths.is_empty() => paths.iter().try_for_each(|rel| {
            let p = path(rel)?;
            if p.is_dir() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            }
            .map_err(|e| format!("{rel}: {e}"))
        }),
        ("mv", [from, to]) => path(from).and_then(|from| {
            let to = path(to)?;
            to.parent()
                .map_or(Ok(()), fs::create_dir_all)
                .and_then(|()| fs::rename(from, to))
                .map_err(|e| e.to_string())
        }),
        ("cp", [from, to]) => match from.strip_prefix("[REPO]/") {
            Some(rel) => path(to).and_then(|to| {
                to.parent()
                    .map_or(Ok(()), fs::create_dir_all)
                    .and_then(|()| fs::copy(Path::new(repo).join(rel), to))
                    .map(drop)
                    .map_err(|e| format!("{from}: {e}"))
            }),
            None => Err("copies only from [REPO]/...".into()),
        },
        ("drop-lines", [file, text]) => path(file).and_then(|p| {
            let old = fs::read_to_string(&p).map_err(|e| format!("{file}: {e}"))?;
            let new: String = old
                .split_inclusive('\n')
                .filter(|l| !l.contains(text.as_str()))
                .collect();
            if new == old {
                return Err(format!("{file} has no line holding {text:?}"));
            }
            fs::write(&p, new).map_err(|e| format!("{file}: {e}"))
        }),
        _ => return None,
    })
}

fn check(case: &Path, bless: bool) -> Result<(), String> {
    let t = tempfile::tempdir().unwrap();
    let work = t.path();
    if case.join("in").is_dir() {
        copy_tree(&case.join("in"), work);
    }
    let script = fs::read_to_string(case.join("commands")).unwrap();
    let (out, err) = transcript(&script, work)?;
    let mut problems = vec![];
    for (name, got) in [("stdout", &out), ("stderr", &err)] {
        let path = case.join(name);
        if bless {
            fs::write(&path, got).unwrap();
            continue;
        }
        let want = fs::read_to_string(&path).unwrap_or_default();
        if want != *got {
            let at = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(got.lines().count()));
            problems.push(format!(
                "{name} differs at line {}:\n  expected: {}\n  actual:   {}\n--- actual {name} ---\n{got}",
                at + 1,
                want.lines().nth(at).unwrap_or("(end)"),
                got.lines().nth(at).unwrap_or("(end)")
            ));
        }
    }
    let expected = case.join("out");
    if expected.is_dir() {
        let got = snapshot(work);
        if bless {
            fs::remove_dir_all(&expected).unwrap();
            fs::create_dir(&expected).unwrap();
            copy_tree(work, &expected);
        } else if snapshot(&expected) != got {
            let want = snapshot(&expected);
            let names: Vec<String> = want
                .keys()
                .chain(got.keys())
                .filter(|k| want.get(*k) != got.get(*k))
                .map(|k| k.display().to_string())
                .collect();
            problems.push(format!("the tree differs from out/: {names:?}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[test]
fn ui() {
    let bless = std::env::var_os("OPBUILDER_BLESS").is_some();
    let cases = script_dirs("ui");
    assert!(!cases.is_empty(), "no cases under e2e/ui");
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            check(c, bless)
                .err()
                .map(|e| format!("== {}\n{e}", c.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{}\nIf the change is intended: OPBUILDER_BLESS=1 cargo test --test e2e ui::",
        failed.join("\n\n")
    );
}
