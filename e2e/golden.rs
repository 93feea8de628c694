//! Golden trees: each directory e2e/testdata/<scenario>/ holds a `commands` script (one
//! `opbuilder ...` command per line, `#` comments) and `tree/`, the exact expected output.
//! The test runs the script in an empty directory and compares both ways (missing, extra and
//! different files). It also fails when a command rendered a template through the handlebars
//! crate's run-time compiler instead of src/hbs.rs (issue 50: that costs a command about 900
//! instructions per byte of template): the debug binary lists such templates in the file
//! `OPBUILDER_TEMPLATE_FALLBACK_LOG` names (src/templates.rs).
//!
//! Re-bless after an intended change of the scaffolds:
//!     OPBUILDER_BLESS=1 cargo test --test e2e golden::
//! then read `git diff e2e/testdata` before committing.

use crate::support::{opbuilder, snapshot, split_words};
use std::fs;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/testdata")
}

/// Run a scenario's script in `work`; the templates rendered through handlebars' run-time
/// compiler are appended to `fallback_log`.
pub fn run_script(script: &str, work: &Path, fallback_log: &Path) {
    for (n, line) in script.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words = split_words(line);
        assert_eq!(
            words[0],
            "opbuilder",
            "line {}: commands start with `opbuilder`",
            n + 1
        );
        let out = opbuilder(work)
            .env("OPBUILDER_TEMPLATE_FALLBACK_LOG", fallback_log)
            .args(&words[1..])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "line {}: `{line}` failed ({})\nstdout:\n{}\nstderr:\n{}",
            n + 1,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    for (i, (a, b)) in w.lines().zip(g.lines()).enumerate() {
        if a != b {
            return format!("line {}:\n      expected: {a}\n      actual:   {b}", i + 1);
        }
    }
    format!(
        "lengths differ: expected {} lines, got {}",
        w.lines().count(),
        g.lines().count()
    )
}

fn check_scenario(dir: &Path, bless: bool) -> Result<(), String> {
    let script =
        fs::read_to_string(dir.join("commands")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let work = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let fallback_log = logs.path().join("fallback");
    run_script(&script, work.path(), &fallback_log);
    let fell_back = fs::read_to_string(&fallback_log).unwrap_or_default();
    if !fell_back.is_empty() {
        let mut names: Vec<&str> = fell_back.lines().collect();
        names.sort_unstable();
        names.dedup();
        return Err(format!(
            "scenario {}: templates rendered by the handlebars crate's run-time compiler, which \
             src/hbs.rs cannot render (make hbs.rs render them, or change the templates):\n  {}",
            dir.file_name().unwrap().to_string_lossy(),
            names.join("\n  ")
        ));
    }
    let got = snapshot(work.path());
    let tree = dir.join("tree");
    if bless {
        let _ = fs::remove_dir_all(&tree);
        for (rel, bytes) in &got {
            let p = tree.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, bytes).unwrap();
        }
        return Ok(());
    }
    let want = snapshot(&tree);
    let mut problems = vec![];
    for (rel, bytes) in &want {
        match got.get(rel) {
            None => problems.push(format!("  missing: {}", rel.display())),
            Some(g) if g != bytes => problems.push(format!(
                "  differs: {} ({})",
                rel.display(),
                first_difference(bytes, g)
            )),
            _ => {}
        }
    }
    for rel in got.keys().filter(|k| !want.contains_key(*k)) {
        problems.push(format!("  extra:   {}", rel.display()));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "scenario {} does not match its golden tree:\n{}\nIf the change is intended: OPBUILDER_BLESS=1 cargo test --test e2e golden::",
            dir.file_name().unwrap().to_string_lossy(),
            problems.join("\n")
        ))
    }
}

#[test]
fn golden_trees_match() {
    let dirs = crate::support::script_dirs("testdata");
    assert!(!dirs.is_empty(), "no scenarios under e2e/testdata");
    let bless = std::env::var_os("OPBUILDER_BLESS").is_some();
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| check_scenario(d, bless).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn golden_comparison_detects_each_kind_of_difference() {
    // A scenario whose tree was tampered with must fail in all three ways.
    let src = testdata().join("init");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("init");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(src.join("commands"), dir.join("commands")).unwrap();
    for (rel, bytes) in snapshot(&src.join("tree")) {
        let p = dir.join("tree").join(&rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    fs::write(dir.join("tree/Makefile"), "changed\n").unwrap();
    fs::remove_file(dir.join("tree/Dockerfile")).unwrap();
    fs::write(dir.join("tree/unexpected.txt"), "x").unwrap();
    let err = check_scenario(&dir, false).unwrap_err();
    assert!(err.contains("differs: Makefile"), "{err}");
    assert!(err.contains("extra:   Dockerfile"), "{err}");
    assert!(err.contains("missing: unexpected.txt"), "{err}");
}

#[test]
fn golden_go_files_are_gofmt_clean() {
    // Generated Go must be gofmt-clean by construction. gofmt ships with Go; CI has it, so there
    // a missing gofmt is a failure, never a skip.
    let trees: Vec<PathBuf> = fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path().join("tree"))
        .filter(|p| p.is_dir())
        .collect();
    let out = match std::process::Command::new("gofmt")
        .arg("-l")
        .args(&trees)
        .output()
    {
        Ok(out) => out,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: gofmt not runnable here ({e}); CI runs it");
            return;
        }
        Err(e) => panic!("gofmt is needed in CI: {e}"),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.trim().is_empty(), "not gofmt-clean:\n{listed}");
}
