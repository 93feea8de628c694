//! `alpha update` and `alpha check`: conflicts, dry runs, injected failures and bad input.
//!
//! A project "made by release 0.1.0" is scaffolded here with the embedded 0.1.0 templates
//! (`alpha generate --templates-version 0.1.0`); that this equals what the real 0.1.0 binary
//! wrote is proven by e2e/scripts/alpha-update.sh. The current templates are whatever this
//! build holds, so the tests find the files the two releases disagree on at run time.

use crate::support::{full_snapshot, init_project, opbuilder, snapshot, TEST_VERSION};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// A current project (init + one API), and the same project scaffolded with 0.1.0's templates
/// in `<tmp>/old`. Returns (current, old).
fn projects(t: &Path) -> (PathBuf, PathBuf) {
    let cur = t.join("cur");
    fs::create_dir(&cur).unwrap();
    init_project(&cur, &[]);
    opbuilder(&cur)
        .args([
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--resource",
            "--controller",
            "--skip-post-steps",
        ])
        .assert()
        .success();
    let old = t.join("old");
    opbuilder(&cur)
        .args([
            "alpha",
            "generate",
            "--templates-version",
            "0.1.0",
            "--output-dir",
        ])
        .arg(&old)
        .assert()
        .success();
    let project = fs::read_to_string(old.join("PROJECT")).unwrap();
    assert!(project.contains("cliVersion: 0.1.0\n"), "{project}");
    (cur, old)
}

/// Files (not PROJECT) whose content differs between the two trees or that only `b` has.
fn changed(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<PathBuf> {
    b.iter()
        .filter(|(p, c)| p.as_os_str() != "PROJECT" && a.get(*p) != Some(*c))
        .map(|(p, _)| p.clone())
        .collect()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}
fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Edit the first line of `path` (in `old`) that the current template changes, so the edit
/// and the template change overlap.
fn conflicting_edit(old: &Path, cur: &Path, path: &Path) {
    let mine = fs::read_to_string(old.join(path)).unwrap();
    let theirs = fs::read_to_string(cur.join(path)).unwrap();
    let (a, b): (Vec<&str>, Vec<&str>) = (mine.lines().collect(), theirs.lines().collect());
    let i = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    assert!(
        i < a.len(),
        "{}: the old file is a prefix of the new",
        path.display()
    );
    let mut lines: Vec<String> = a.iter().map(|s| s.to_string()).collect();
    lines[i] = format!("{} // edited by the user", lines[i]);
    fs::write(old.join(path), lines.join("\n") + "\n").unwrap();
}

#[test]
fn update_merges_marks_conflicts_and_exits_1() {
    let t = tempfile::tempdir().unwrap();
    let (cur, old) = projects(t.path());
    let (want, before) = (snapshot(&cur), snapshot(&old));
    let diffs = changed(&before, &want);
    assert!(diffs.len() >= 3, "the releases differ in {diffs:?}");
    // A conflicting edit in one file the templates changed (present in both), an edit far from
    // any template change in another (a new last line), and a file the user deleted.
    let both: Vec<&PathBuf> = diffs.iter().filter(|p| before.contains_key(*p)).collect();
    assert!(both.len() >= 3, "{both:?}");
    let conflicted = both
        .iter()
        .find(|p| p.to_string_lossy().ends_with("_types.go"))
        .copied()
        .unwrap_or(both[0]);
    conflicting_edit(&old, &cur, conflicted);
    let others: Vec<&PathBuf> = both.iter().copied().filter(|p| *p != conflicted).collect();
    // Appending stays clear of template changes where the files end alike.
    let tail = |b: &[u8]| {
        let s = String::from_utf8_lossy(b).to_string();
        s.lines()
            .rev()
            .take(4)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let appended = *others
        .iter()
        .find(|p| tail(&before[**p]) == tail(&want[**p]))
        .expect("a changed file whose end the templates did not change");
    let deleted = *others.iter().find(|p| **p != appended).unwrap();
    let mut text = fs::read_to_string(old.join(appended)).unwrap();
    text.push_str("# kept by the update\n");
    fs::write(old.join(appended), &text).unwrap();
    fs::remove_file(old.join(deleted)).unwrap();

    let out = opbuilder(&old).args(["alpha", "update"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let shown = conflicted.display().to_string();
    assert!(
        stdout(&out).contains(&format!("CONFLICT (1 region(s))     {shown}")),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("1 file(s) have conflicts"),
        "{}",
        stderr(&out)
    );
    let got = fs::read_to_string(old.join(conflicted)).unwrap();
    assert!(
        got.contains("<<<<<<< yours\n")
            && got.contains("// edited by the user")
            && got.contains("\n=======\n")
            && got.contains(&format!(">>>>>>> opbuilder {TEST_VERSION} templates\n")),
        "{got}"
    );
    // Every other file is on the new templates, with the user's line kept where they added it.
    let after = snapshot(&old);
    for p in &diffs {
        if p == conflicted || p == deleted {
            continue;
        }
        let mut expect = want[p].clone();
        if p == appended {
            expect.extend_from_slice(b"# kept by the update\n");
        }
        assert_eq!(
            String::from_utf8_lossy(&after[p]),
            String::from_utf8_lossy(&expect),
            "{}",
            p.display()
        );
    }
    assert!(
        !old.join(deleted).exists(),
        "{} came back",
        deleted.display()
    );
    assert!(stderr(&out).contains("you deleted it; it stays deleted"));
    let project = fs::read_to_string(old.join("PROJECT")).unwrap();
    assert!(
        project.contains(&format!("cliVersion: {TEST_VERSION}\n")),
        "{project}"
    );
    // On the current templates now: alpha check is clean, a second update changes nothing.
    opbuilder(&old).args(["alpha", "check"]).assert().success();
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (_cur, old) = projects(t.path());
    let before = full_snapshot(&old);
    let out = opbuilder(&old)
        .args(["alpha", "update", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = stdout(&out);
    assert!(s.contains("nothing was written"), "{s}");
    assert!(s.contains("--- a/Makefile\n+++ b/Makefile\n@@ "), "{s}");
    assert!(s.contains(&format!("+cliVersion: {TEST_VERSION}")), "{s}");
    assert_eq!(full_snapshot(&old), before);
    // alpha check reports the same files and exits 1.
    let out = opbuilder(&old).args(["alpha", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("Makefile"), "{}", stdout(&out));
    assert!(stderr(&out).contains("not on the current templates"));
    assert_eq!(full_snapshot(&old), before);
}

/// An injected failure at every step of the update's transaction leaves the project
/// byte-identical; the first run without one updates it.
#[test]
fn failure_mid_update_leaves_the_tree_byte_identical() {
    let t = tempfile::tempdir().unwrap();
    let (cur, old) = projects(t.path());
    let before = full_snapshot(&old);
    let mut n = 1;
    loop {
        let out = opbuilder(&old)
            .args(["alpha", "update"])
            .env("OPBUILDER_FAILPOINT", n.to_string())
            .output()
            .unwrap();
        if out.status.success() {
            break;
        }
        assert!(
            stderr(&out).contains("injected failure"),
            "step {n}: {}",
            stderr(&out)
        );
        assert_eq!(
            full_snapshot(&old),
            before,
            "step {n} left the tree changed"
        );
        n += 1;
        assert!(n < 2000, "the update never succeeded");
    }
    assert!(
        n > 3,
        "only {n} steps: the failpoints did not reach the transaction"
    );
    let (got, want) = (snapshot(&old), snapshot(&cur));
    for (p, c) in &want {
        if p.as_os_str() != "PROJECT" {
            assert_eq!(got.get(p), Some(c), "{}", p.display());
        }
    }
}

#[test]
fn bad_input_is_refused_and_nothing_is_touched() {
    let t = tempfile::tempdir().unwrap();
    let (_cur, old) = projects(t.path());
    let before = full_snapshot(&old);
    // An unknown release.
    let out = opbuilder(&old)
        .args(["alpha", "update", "--from-version", "0.0.7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("\"0.0.7\" for --from-version") && e.contains("0.1.0"),
        "{e}"
    );
    assert!(
        e.contains("or a Kubebuilder v4 release")
            && e.contains("example of a valid value: --from-version v4.16.0"),
        "{e}"
    );
    let out = opbuilder(&old)
        .args(["alpha", "update", "--to-version", "9.9.9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(full_snapshot(&old), before);
    // A PROJECT without cliVersion (as Kubebuilder writes it).
    let project = fs::read_to_string(old.join("PROJECT")).unwrap();
    fs::write(
        old.join("PROJECT"),
        project.replace("cliVersion: 0.1.0\n", ""),
    )
    .unwrap();
    let before = full_snapshot(&old);
    for cmd in ["update", "check"] {
        let out = opbuilder(&old).args(["alpha", cmd]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let e = stderr(&out);
        assert!(
            e.contains("PROJECT has no cliVersion")
                && e.contains("opbuilder alpha update --from-version v4.5.0")
                && e.contains("or an opbuilder release (0.1.0"),
            "{e}"
        );
        assert_eq!(full_snapshot(&old), before);
    }
    // A project made by Kubebuilder (its cliVersion, or --from-version naming its release), where
    // that Kubebuilder cannot be had: none on PATH, none built before, no Go to build it.
    let bare = t.path().join("bare-path");
    let cache = t.path().join("cache");
    fs::create_dir_all(&bare).unwrap();
    for (cli, from) in [
        ("cliVersion: 4.15.0\n", None),
        ("cliVersion: v4.15.0\n", None),
        ("", Some("4.15.0")),
    ] {
        fs::write(
            old.join("PROJECT"),
            project.replace("cliVersion: 0.1.0\n", cli),
        )
        .unwrap();
        let before = full_snapshot(&old);
        for cmd in ["update", "check"] {
            let mut c = opbuilder(&old);
            c.args(["alpha", cmd])
                .env("PATH", &bare)
                .env("XDG_CACHE_HOME", &cache);
            if let Some(v) = from {
                c.args(["--from-version", v]);
            }
            let out = c.output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{cmd} {cli}");
            let e = stderr(&out);
            assert!(
                e.contains("made by Kubebuilder v4.15.0")
                    && e.contains("Go is not installed")
                    && e.contains("nothing was written")
                    && e.contains("put Kubebuilder v4.15.0 on PATH as `kubebuilder`")
                    && e.contains("releases/tag/v4.15.0")
                    && e.contains("install Go (https://go.dev/dl/)")
                    && e.contains(
                        &cache
                            .join("opbuilder/kubebuilder/v4.15.0")
                            .display()
                            .to_string()
                    ),
                "{cmd} {cli}: {e}"
            );
            assert_eq!(full_snapshot(&old), before, "{cmd} {cli}");
        }
    }
    assert!(!cache.exists(), "nothing was built or cached");
    // A cliVersion that is neither opbuilder's nor Kubebuilder v4's.
    fs::write(
        old.join("PROJECT"),
        project.replace("cliVersion: 0.1.0\n", "cliVersion: 3.15.1\n"),
    )
    .unwrap();
    let before = full_snapshot(&old);
    let out = opbuilder(&old).args(["alpha", "update"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("cliVersion 3.15.1")
            && e.contains("nor a Kubebuilder v4 release")
            && e.contains("opbuilder alpha generate --output-dir"),
        "{e}"
    );
    assert_eq!(full_snapshot(&old), before);
    // No PROJECT at all.
    let empty = t.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let out = opbuilder(&empty)
        .args(["alpha", "update"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no PROJECT file"), "{}", stderr(&out));
    assert!(fs::read_dir(&empty).unwrap().next().is_none());
    // An unknown release for alpha generate.
    let out = opbuilder(&old)
        .args([
            "alpha",
            "generate",
            "--templates-version",
            "1.2",
            "--output-dir",
        ])
        .arg(t.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!t.path().join("x").exists());
}

/// In a git work tree with uncommitted changes the update refuses unless --force.
#[test]
fn uncommitted_changes_need_force() {
    let t = tempfile::tempdir().unwrap();
    let (_cur, old) = projects(t.path());
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .current_dir(&old)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .output()
            .expect("git is installed")
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "."]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "made"]);
    fs::write(old.join("notes.txt"), "mine\n").unwrap();
    let before = full_snapshot(&old);
    let out = opbuilder(&old).args(["alpha", "update"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("uncommitted changes") && e.contains("notes.txt") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(full_snapshot(&old), before);
    opbuilder(&old)
        .args(["alpha", "update", "--force"])
        .assert()
        .success();
    assert_eq!(fs::read_to_string(old.join("notes.txt")).unwrap(), "mine\n");
    opbuilder(&old).args(["alpha", "check"]).assert().success();
}

#[test]
fn check_is_clean_on_a_current_project() {
    let t = tempfile::tempdir().unwrap();
    let (cur, _old) = projects(t.path());
    let out = opbuilder(&cur).args(["alpha", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("on the current templates"));
}

/// A Rust project's license header is hack/boilerplate.rs.txt. One made by 0.4.0 (v1-alpha) has
/// it as hack/boilerplate.go.txt: new files take their header from that until `alpha update`
/// moves the user's text to the new name (and removes the old one).
#[test]
fn rust_license_header_moves_to_boilerplate_rs_txt() {
    let t = tempfile::tempdir().unwrap();
    let cur = t.path().join("cur");
    fs::create_dir(&cur).unwrap();
    opbuilder(&cur)
        .args([
            "init",
            "--plugins=rust.opbuilder.io/v1-beta",
            "--domain",
            "example.com",
        ])
        .args(["--project-name", "guestbook", "--skip-post-steps"])
        .args(["--license", "copyright", "--owner", "Acme Rockets"])
        .assert()
        .success();
    let header = fs::read_to_string(cur.join("hack/boilerplate.rs.txt")).unwrap();
    assert!(header.contains("Acme Rockets"), "{header}");
    assert!(!cur.join("hack/boilerplate.go.txt").exists());
    let create = |dir: &Path, version: &str| {
        opbuilder(dir)
            .args(["create", "api", "--group", "ship", "--version", version])
            .args(["--kind", "Frigate", "--resource", "--controller=false"])
            .assert()
            .success();
        fs::read_to_string(dir.join(format!("src/api/ship/{version}/frigate.rs"))).unwrap()
    };
    let first = create(&cur, "v1");
    assert!(
        first.starts_with("/*\nCopyright 2026 Acme Rockets."),
        "{first}"
    );

    // The same project as 0.4.0 made it: the header under go/v4's name, used by `create`.
    let old = t.path().join("old");
    opbuilder(&cur)
        .args([
            "alpha",
            "generate",
            "--templates-version",
            "0.4.0",
            "--output-dir",
        ])
        .arg(&old)
        .assert()
        .success();
    assert_eq!(
        fs::read_to_string(old.join("hack/boilerplate.go.txt")).unwrap(),
        header
    );
    assert!(!old.join("hack/boilerplate.rs.txt").exists());
    assert!(create(&old, "v2").starts_with("/*\nCopyright 2026 Acme Rockets."));

    opbuilder(&old).args(["alpha", "update"]).assert().success();
    assert_eq!(
        fs::read_to_string(old.join("hack/boilerplate.rs.txt")).unwrap(),
        header
    );
    assert!(!old.join("hack/boilerplate.go.txt").exists());
    assert!(create(&old, "v3").starts_with("/*\nCopyright 2026 Acme Rockets."));
    opbuilder(&old).args(["alpha", "check"]).assert().success();
}

/// certs/v1-alpha turned on in a project an earlier release made, whose cmd/main.go lacks the
/// lines `init` writes now (0.4.0: no --webhook-dev-host, no metrics certificate watcher): the
/// flags go above the logger's options and the setup above the health checks. A later `alpha
/// update` scaffolds its ancestor the same way, so cmd/main.go merges without a conflict and
/// ends with the flags where `init` puts them now, declared once; the webhook patch, cert-manager's
/// there and the plugin's in the new templates, is the one conflict, the user's to settle
/// (docs/certs.md).
#[test]
fn certs_in_a_project_of_an_earlier_release_then_its_update() {
    let t = tempfile::tempdir().unwrap();
    let cur = t.path().join("cur");
    fs::create_dir(&cur).unwrap();
    init_project(&cur, &[]);
    let gvk = ["--group", "ship", "--version", "v1", "--kind", "Frigate"];
    opbuilder(&cur)
        .args(["create", "api"])
        .args(gvk)
        .args(["--resource", "--controller", "--skip-post-steps"])
        .assert()
        .success();
    opbuilder(&cur)
        .args(["create", "webhook"])
        .args(gvk)
        .args(["--defaulting", "--programmatic-validation"])
        .assert()
        .success();
    let old = t.path().join("old");
    opbuilder(&cur)
        .args([
            "alpha",
            "generate",
            "--templates-version",
            "0.4.0",
            "--output-dir",
        ])
        .arg(&old)
        .assert()
        .success();
    let main_of = |dir: &Path| fs::read_to_string(dir.join("cmd/main.go")).unwrap();
    assert!(!main_of(&old).contains("webhookDevHost"), "0.4.0's main.go");
    opbuilder(&old)
        .args(["edit", "--plugins=certs/v1-alpha"])
        .assert()
        .success();
    let main = main_of(&old);
    let at = |s: &str| {
        main.find(s)
            .unwrap_or_else(|| panic!("no `{s}` in:\n{main}"))
    };
    assert!(at("\tvar webhookCertSecret, webhookService string\n") < at("\topts := zap.Options{"));
    assert!(
        at("webhookcerts.SetupCluster(mgr, webhookServer") < at("mgr.AddHealthzCheck(\"healthz\"")
    );
    assert!(main.contains("\"example.com/guestbook/internal/webhookcerts\"\n"));
    gofmt_clean(&old.join("cmd/main.go"));

    let out = opbuilder(&old).args(["alpha", "update"]).output().unwrap();
    let report = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{report}");
    let conflicts: Vec<&str> = report.lines().filter(|l| l.contains("CONFLICT")).collect();
    assert_eq!(conflicts.len(), 1, "{report}");
    assert!(
        conflicts[0].ends_with("config/default/manager_webhook_patch.yaml"),
        "{report}"
    );
    let main = main_of(&old);
    assert!(!main.contains("<<<<<<<"), "{main}");
    assert!(!main.contains("var webhookCertSecret"), "{main}");
    assert_eq!(
        main.matches("\t\twebhookCertSecret    string\n").count(),
        1,
        "{main}"
    );
    assert_eq!(main.matches("\"webhook-cert-secret\"").count(), 1, "{main}");
    assert_eq!(
        main.matches("webhookcerts.SetupCluster(").count(),
        1,
        "{main}"
    );
    gofmt_clean(&old.join("cmd/main.go"));
}

/// gofmt -l lists nothing for `file` (CI has gofmt; elsewhere a missing one skips the check).
fn gofmt_clean(file: &Path) {
    match std::process::Command::new("gofmt")
        .arg("-l")
        .arg(file)
        .output()
    {
        Ok(out) => assert!(
            out.status.success() && out.stdout.is_empty(),
            "not gofmt-clean: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("gofmt not runnable here ({e}); CI runs it")
        }
        Err(e) => panic!("gofmt is needed in CI: {e}"),
    }
}
