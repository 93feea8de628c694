//! Faults: injected failures and crashes at every step of a transaction, concurrent commands,
//! hostile files in the project, broken stdout/stderr, and input that used to hang or panic.
//!
//! The failure seam (OPBUILDER_FAILPOINT, OPBUILDER_CRASHPOINT, OPBUILDER_FAIL_ROLLBACK) is
//! compiled into debug builds only, which is what `cargo test` runs; see src/fsx.rs. The slow
//! and root-only faults (kill -9 loop, a full tmpfs) are in e2e/scripts/faults.sh.

use crate::support::{copy_tree, text, SOURCE_DATE_EPOCH, TEST_VERSION};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What a path is, exactly: kind, bytes or link target, and permission bits.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Dir(u32),
    /// Content, permission bits, number of hard links.
    File(Vec<u8>, u32, u64),
    Link(PathBuf),
}

/// Every path below `root`, hidden ones included (stray temp files show up here).
fn tree(root: &Path) -> BTreeMap<PathBuf, Node> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let m = fs::symlink_metadata(&p).unwrap();
            let mode = m.permissions().mode() & 0o7777;
            if m.file_type().is_symlink() {
                out.insert(rel, Node::Link(fs::read_link(&p).unwrap()));
            } else if m.is_dir() {
                out.insert(rel, Node::Dir(mode));
                walk(root, &p, out);
            } else {
                out.insert(rel, Node::File(fs::read(&p).unwrap(), mode, m.nlink()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The paths where two trees differ, for readable assertion messages.
fn diff(a: &BTreeMap<PathBuf, Node>, b: &BTreeMap<PathBuf, Node>) -> Vec<String> {
    let mut out = vec![];
    for (k, v) in a {
        match b.get(k) {
            None => out.push(format!("only before: {}", k.display())),
            Some(w) if w != v => out.push(format!("differs: {}", k.display())),
            _ => {}
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        out.push(format!("only after: {}", k.display()));
    }
    out
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_opbuilder"))
}

fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.current_dir(dir)
        .args(args)
        .env("OPBUILDER_TEST_VERSION", TEST_VERSION)
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        .env_remove("OPBUILDER_FAILPOINT")
        .env_remove("OPBUILDER_CRASHPOINT")
        .env_remove("OPBUILDER_FAIL_ROLLBACK")
        .env_remove("OPBUILDER_STEP_DELAY_MS")
        .env_remove("GOFLAGS")
        .stdin(Stdio::null());
    c
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = cmd(dir, args);
    // The loops below run hundreds of commands: durability is not what they test, and the
    // sync steps are still counted (and failed) by the seam.
    c.env("OPBUILDER_FSYNC", "0");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Run with a watchdog: a command that used to hang fails the test instead of hanging it.
fn run_bounded(dir: &Path, args: &[&str]) -> Output {
    let mut child = cmd(dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} hung (killed after 20s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

const INIT: &[&str] = &[
    "init",
    "--domain",
    "example.com",
    "--repo",
    "example.com/guestbook",
    "--project-name",
    "guestbook",
    "--skip-post-steps",
];

fn api_args(kind: &str) -> Vec<String> {
    [
        "create",
        "api",
        "--group",
        "ship",
        "--version",
        "v1",
        "--kind",
        kind,
        "--resource",
        "--controller",
        "--skip-post-steps",
    ]
    .map(String::from)
    .to_vec()
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {:?}\nstderr: {}",
        o.status,
        text(&o.stderr)
    );
}

fn project(dir: &Path) {
    ok(&run(dir, INIT, &[]), "init");
}

/// The writing commands, each on a project state that makes it create, replace, remove and
/// rewrite in place.
fn scenarios() -> Vec<(&'static str, tempfile::TempDir, Vec<String>)> {
    let empty = tempfile::tempdir().unwrap();
    let fresh = tempfile::tempdir().unwrap();
    project(fresh.path());
    let with_api = tempfile::tempdir().unwrap();
    project(with_api.path());
    let a: Vec<String> = api_args("Frigate");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    ok(&run(with_api.path(), &a, &[]), "create api");
    let edit_base = tempfile::tempdir().unwrap();
    copy_tree(with_api.path(), edit_base.path());
    // A hard-linked cmd/main.go is rewritten in place (with a copy as its backup).
    let linked = tempfile::tempdir().unwrap();
    project(linked.path());
    fs::hard_link(
        linked.path().join("cmd/main.go"),
        linked.path().join("main.go.hardlink"),
    )
    .unwrap();
    vec![
        ("init", empty, INIT.iter().map(|s| s.to_string()).collect()),
        ("create api", fresh, api_args("Frigate")),
        (
            "create api, hard-linked main.go",
            linked,
            api_args("Frigate"),
        ),
        (
            "create webhook",
            with_api,
            [
                "create",
                "webhook",
                "--group",
                "ship",
                "--version",
                "v1",
                "--kind",
                "Frigate",
                "--defaulting",
                "--programmatic-validation",
                "--skip-post-steps",
            ]
            .map(String::from)
            .to_vec(),
        ),
        (
            "edit",
            edit_base,
            ["edit", "--namespaced", "--force", "--license", "none"]
                .map(String::from)
                .to_vec(),
        ),
    ]
}

/// The tree a command produces on a copy of `base` when nothing goes wrong.
fn expected_after(base: &Path, args: &[&str]) -> BTreeMap<PathBuf, Node> {
    let t = tempfile::tempdir().unwrap();
    copy_tree(base, t.path());
    ok(&run(t.path(), args, &[]), "reference run");
    tree(t.path())
}

/// The name of the (copied) directory matters for init's project name, so copies go into a
/// directory named like the original's role.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("guestbook");
    fs::create_dir(&d).unwrap();
    (t, d)
}

#[test]
fn a_failure_at_any_step_leaves_the_tree_byte_identical() {
    for (name, base, args) in scenarios() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = tree(base.path());
        let after = expected_after(base.path(), &args);
        let mut injected = 0;
        for n in 1.. {
            let (_t, d) = scratch();
            copy_tree(base.path(), &d);
            let o = run(&d, &args, &[("OPBUILDER_FAILPOINT", &n.to_string())]);
            let err = text(&o.stderr);
            if o.status.success() {
                if !err.contains("injected failure") {
                    break; // past the last step
                }
                // Failed after the commit point (cleanup): the command succeeded; the next
                // command removes the leftovers.
                let again = run(&d, &args, &[]);
                assert!(
                    !text(&again.stderr).contains("rolled back"),
                    "{name} step {n}"
                );
                assert_eq!(
                    tree(&d),
                    after,
                    "{name}: step {n}: {:?}",
                    diff(&after, &tree(&d))
                );
                continue;
            }
            injected += 1;
            assert_eq!(o.status.code(), Some(1), "{name} step {n}: {err}");
            assert!(err.contains("injected failure"), "{name} step {n}: {err}");
            assert!(
                err.contains("restored") || err.contains("nothing was written"),
                "{name} step {n}: {err}"
            );
            let now = tree(&d);
            assert_eq!(now, before, "{name}: step {n}: {:?}", diff(&before, &now));
        }
        assert!(
            injected > 5,
            "{name}: only {injected} steps could be failed: is the failure seam compiled in?"
        );
    }
}

#[test]
fn a_crash_at_any_step_is_undone_or_completed_by_the_next_command() {
    for (name, base, args) in scenarios() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = tree(base.path());
        let after = expected_after(base.path(), &args);
        let mut crashed = 0;
        for n in 1.. {
            // Past the first 12 steps (the journal and the first files) the steps repeat one
            // pattern per file: crash at every second one (every third for init's ~40 files),
            // alternating odd and even. The failure test above covers every step, and
            // e2e/scripts/faults.sh kills real runs at random points on top of this.
            let stride = if name == "init" { 3 } else { 2 };
            if n > 12 && n % stride != (n / 20) % stride {
                continue;
            }
            let (_t, d) = scratch();
            copy_tree(base.path(), &d);
            let o = run(&d, &args, &[("OPBUILDER_CRASHPOINT", &n.to_string())]);
            if o.status.code() != Some(86) {
                ok(&o, "past the last step");
                break;
            }
            crashed += 1;
            let mid = tree(&d);
            if mid != before && mid != after && n % 4 == 1 {
                // A dry run reports the interrupted transaction and changes nothing.
                let dry: Vec<&str> = args.iter().copied().chain(["--dry-run"]).collect();
                let o = run(&d, &dry, &[]);
                assert_eq!(tree(&d), mid, "{name} step {n}: the dry run changed files");
                let err = text(&o.stderr);
                let journal = [".opbuilder-journal", ".opbuilder-journal.done"]
                    .iter()
                    .any(|j| mid.contains_key(Path::new(j)));
                assert!(
                    !journal || err.contains("was interrupted") || err.contains("not its cleanup"),
                    "{name} step {n}: {err}"
                );
            }
            // The next command: the same one again. Either the crashed run had committed (then
            // this one finds the work done, or for edit redoes it identically) or it is rolled
            // back and this run does the work.
            let o = run(&d, &args, &[]);
            let now = tree(&d);
            assert_eq!(
                now,
                after,
                "{name}: crash at step {n}, then: {}\n{:?}",
                text(&o.stderr),
                diff(&after, &now)
            );
        }
        assert!(crashed > 5, "{name}: only {crashed} crash points");
    }
}

#[test]
fn a_rollback_that_cannot_finish_is_finished_by_the_next_command() {
    let base = tempfile::tempdir().unwrap();
    project(base.path());
    let a = api_args("Sloop");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    let before = tree(base.path());
    let after = expected_after(base.path(), &args);
    let (_t, d) = scratch();
    copy_tree(base.path(), &d);
    let o = run(
        &d,
        &args,
        &[
            ("OPBUILDER_FAILPOINT", "40"),
            ("OPBUILDER_FAIL_ROLLBACK", "1"),
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("AND restoring failed"), "{err}");
    assert!(err.contains("recovery journal"), "{err}");
    assert!(d.join(".opbuilder-journal").exists());
    // A dry run only reports.
    let mid = tree(&d);
    let dry: Vec<&str> = args.iter().copied().chain(["--dry-run"]).collect();
    let o = run(&d, &dry, &[]);
    assert!(
        text(&o.stderr).contains("was interrupted"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(tree(&d), mid);
    // A failing command still rolls back first (bad input is refused after recovery).
    let o = run(&d, &["edit"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("rolled back"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(tree(&d), before, "{:?}", diff(&before, &tree(&d)));
    ok(&run(&d, &args, &[]), "rerun");
    assert_eq!(tree(&d), after);
}

#[test]
fn parallel_create_api_serializes_and_loses_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    project(d);
    let mut all = vec![];
    for round in 0..3 {
        let kinds: Vec<String> = (0..8).map(|i| format!("Kind{round}x{i}")).collect();
        let children: Vec<_> = kinds
            .iter()
            .map(|k| {
                let a = api_args(k);
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                cmd(d, &a)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", text(&o.stderr));
        }
        all.extend(kinds);
    }
    let p = fs::read_to_string(d.join("PROJECT")).unwrap();
    let main = fs::read_to_string(d.join("cmd/main.go")).unwrap();
    for k in &all {
        assert!(
            p.contains(&format!("kind: {k}\n")),
            "{k} missing from PROJECT"
        );
        assert!(
            main.contains(&format!("{k}Reconciler{{")),
            "{k} missing from main.go"
        );
        assert!(d
            .join(format!("api/v1/{}_types.go", k.to_lowercase()))
            .exists());
    }
    assert_eq!(main.matches("shipv1.AddToScheme").count(), 1);
    assert!(fs::read_dir(d).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".opbuilder")));
}

#[test]
fn a_held_lock_makes_the_next_command_wait_then_fail_clearly() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    project(d);
    // The lock is a flock on the project directory.
    let lock = fs::File::open(d).unwrap();
    lock.lock().unwrap();
    let before = tree(d);
    let a = api_args("Barge");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = run(d, &args, &[("OPBUILDER_LOCK_TIMEOUT", "0.5")]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "waiting for another opbuilder in this project, pid {}",
            std::process::id()
        )),
        "{err}"
    );
    assert!(err.contains("OPBUILDER_LOCK_TIMEOUT"), "{err}");
    assert_eq!(tree(d), before);
    // Released: the command goes through.
    lock.unlock().unwrap();
    ok(&run(d, &args, &[]), "after unlock");
}

#[test]
fn planted_temp_file_symlinks_are_never_followed() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    fs::create_dir(&d).unwrap();
    project(&d);
    let outside = t.path().join("outside.txt");
    // The old temp names were `.<name>.opbuilder-<pid>.tmp`: plant them for the pids the next
    // processes are likely to get.
    let last: u32 = fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(std::process::id());
    for pid in last..last + 300 {
        for (dir, name) in [("cmd", "main.go"), ("", "PROJECT")] {
            let _ = std::os::unix::fs::symlink(
                &outside,
                d.join(dir).join(format!(".{name}.opbuilder-{pid}.tmp")),
            );
        }
    }
    let a = api_args("Tug");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    ok(&run(&d, &args, &[]), "create api");
    assert!(
        !outside.exists(),
        "wrote outside the project through a planted link"
    );
    for f in ["cmd/main.go", "PROJECT"] {
        let m = fs::symlink_metadata(d.join(f)).unwrap();
        assert!(m.file_type().is_file(), "{f} is no longer a regular file");
    }
    assert!(fs::read_to_string(d.join("cmd/main.go"))
        .unwrap()
        .contains("TugReconciler"));
}

#[test]
fn links_mode_and_owner_of_updated_files_are_kept() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    project(d);
    // cmd/main.go becomes a symlink to a file inside the project.
    fs::rename(d.join("cmd/main.go"), d.join("cmd/real_main.go")).unwrap();
    std::os::unix::fs::symlink("real_main.go", d.join("cmd/main.go")).unwrap();
    // PROJECT gets a second hard link and a mode of its own.
    fs::hard_link(d.join("PROJECT"), d.join("PROJECT.link")).unwrap();
    fs::set_permissions(d.join("PROJECT"), fs::Permissions::from_mode(0o640)).unwrap();
    // config/crd/kustomization.yaml does not exist yet; Makefile is only read. Use
    // config/rbac/kustomization.yaml (updated by create api) for the owner.
    let rbac = d.join("config/rbac/kustomization.yaml");
    fs::set_permissions(&rbac, fs::Permissions::from_mode(0o600)).unwrap();
    let root = fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false);
    if root {
        std::os::unix::fs::chown(&rbac, Some(4242), Some(4343)).unwrap();
    }
    let a = api_args("Ketch");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    ok(&run(d, &args, &[]), "create api");

    let link = fs::symlink_metadata(d.join("cmd/main.go")).unwrap();
    assert!(
        link.file_type().is_symlink(),
        "the symlink was replaced by a file"
    );
    assert!(fs::read_to_string(d.join("cmd/real_main.go"))
        .unwrap()
        .contains("KetchReconciler"));
    let p = fs::metadata(d.join("PROJECT")).unwrap();
    assert_eq!(p.nlink(), 2, "the hard link was broken");
    assert!(fs::read_to_string(d.join("PROJECT.link"))
        .unwrap()
        .contains("kind: Ketch"));
    assert_eq!(p.permissions().mode() & 0o777, 0o640);
    let r = fs::metadata(&rbac).unwrap();
    assert_eq!(r.permissions().mode() & 0o777, 0o600);
    assert!(fs::read_to_string(&rbac).unwrap().contains("ketch"));
    if root {
        assert_eq!((r.uid(), r.gid()), (4242, 4343), "the owner changed");
    }
}

#[test]
fn a_closed_or_full_stdout_or_stderr_does_not_fail_a_command_that_wrote() {
    for how in ["closed", "full", "stderr-full"] {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        project(d);
        // No --resource/--controller: with stdin not a terminal a note goes to stderr.
        let mut c = cmd(
            d,
            &[
                "create",
                "api",
                "--group",
                "ship",
                "--version",
                "v1",
                "--kind",
                "Yacht",
                "--skip-post-steps",
            ],
        );
        let full = || {
            fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap()
        };
        match how {
            "closed" => c.stdout(Stdio::piped()).stderr(Stdio::piped()),
            "full" => c.stdout(full()).stderr(Stdio::piped()),
            _ => c.stdout(Stdio::null()).stderr(full()),
        };
        let mut child = c.spawn().unwrap();
        drop(child.stdout.take()); // `| true`: the reader is gone before anything is printed
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{how}: {}", text(&o.stderr));
        assert!(fs::read_to_string(d.join("PROJECT"))
            .unwrap()
            .contains("kind: Yacht"));
    }
}

#[test]
fn fifos_devices_and_huge_files_are_refused_not_read_forever() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("header.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for lf in [Path::new("/dev/zero"), fifo.as_path()] {
        let d = t.path().join("p");
        let _ = fs::remove_dir_all(&d);
        fs::create_dir(&d).unwrap();
        let mut a: Vec<&str> = INIT.to_vec();
        let lf = lf.to_str().unwrap();
        a.extend(["--license-file", lf]);
        let o = run_bounded(&d, &a);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("regular"), "{}", text(&o.stderr));
        assert!(fs::read_dir(&d).unwrap().next().is_none(), "wrote files");
        project(&d);
        let o = run_bounded(&d, &["edit", "--license-file", lf]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    }
    // PROJECT as a FIFO.
    let d = t.path().join("fifo-project");
    fs::create_dir(&d).unwrap();
    assert!(Command::new("mkfifo")
        .arg(d.join("PROJECT"))
        .status()
        .unwrap()
        .success());
    let a = api_args("Raft");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = run_bounded(&d, &args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // The upward search for the project root passes over a PROJECT that is not a regular file;
    // Project::load refuses one that turns into a FIFO after that (a unit test in project.rs).
    assert!(
        err.contains("no PROJECT file") || err.contains("regular file"),
        "{err}"
    );
}

#[test]
fn a_license_file_holding_slash_star_slash_is_refused_in_init_and_edit() {
    let t = tempfile::tempdir().unwrap();
    let h = t.path().join("h.txt");
    fs::write(&h, "/*/\n").unwrap();
    let d = t.path().join("p");
    fs::create_dir(&d).unwrap();
    let mut a: Vec<&str> = INIT.to_vec();
    a.extend(["--license-file", h.to_str().unwrap()]);
    let o = run(&d, &a, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--license-file"));
    project(&d);
    let before = tree(&d);
    let o = run(&d, &["edit", "--license-file", h.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(tree(&d), before);
}

#[test]
fn an_unusable_boilerplate_file_is_an_error_not_a_silent_loss() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    project(d);
    let a = api_args("Canoe");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    let bp = d.join("hack/boilerplate.go.txt");
    fs::write(&bp, b"/*\nCopyright \xff\xfe Acme.\n*/\n").unwrap();
    let before = tree(d);
    let o = run(d, &args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("hack/boilerplate.go.txt"));
    assert!(text(&o.stderr).contains("UTF-8"));
    assert_eq!(tree(d), before);
    // Not a regular file (unreadable as a header).
    fs::remove_file(&bp).unwrap();
    fs::create_dir(&bp).unwrap();
    let o = run(d, &args, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("hack/boilerplate.go.txt"));
}

#[test]
fn an_external_api_module_that_looks_like_a_flag_is_bad_input() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    project(d);
    let before = tree(d);
    for bad in [
        "-modfile=/tmp/x",
        "example.com/m@-x",
        "example.com/m@",
        "nodots/m",
    ] {
        let o = run(
            d,
            &[
                "create",
                "api",
                "--group",
                "cert",
                "--version",
                "v1",
                "--kind",
                "Certificate",
                "--controller",
                "--external-api-path",
                "example.com/m/api/v1",
                &format!("--external-api-module={bad}"),
            ],
            &[],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--external-api-module"), "{err}");
        assert!(err.contains("example of a valid value"), "{err}");
        assert_eq!(tree(d), before);
    }
}

#[test]
fn misplaced_or_duplicated_markers_are_errors_and_a_missing_imports_marker_is_noted() {
    let base = tempfile::tempdir().unwrap();
    project(base.path());
    let a = api_args("Skiff");
    let args: Vec<&str> = a.iter().map(String::as_str).collect();
    let main_of = |d: &Path| fs::read_to_string(d.join("cmd/main.go")).unwrap();
    let original = main_of(base.path());
    let builder = "\t// +kubebuilder:scaffold:builder\n";
    assert!(original.contains(builder));
    let cases: Vec<(String, &str)> = vec![
        (
            format!(
                "// +kubebuilder:scaffold:builder\n{}",
                original.replace(builder, "")
            ),
            "above the package clause",
        ),
        (
            original.replace(
                builder,
                "\ts := `\n\t// +kubebuilder:scaffold:builder\n`\n\t_ = s\n",
            ),
            "inside a raw string literal",
        ),
        (
            original.replace(builder, &format!("{builder}{builder}")),
            "appears more than once",
        ),
    ];
    for (main, needle) in cases {
        let (_t, d) = scratch();
        copy_tree(base.path(), &d);
        fs::write(d.join("cmd/main.go"), &main).unwrap();
        let before = tree(&d);
        let o = run(&d, &args, &[]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{needle}: {err}");
        assert!(err.contains(needle), "{err}");
        assert_eq!(tree(&d), before);
    }
    let (_t, d) = scratch();
    copy_tree(base.path(), &d);
    fs::write(
        d.join("cmd/main.go"),
        original.replace("\t// +kubebuilder:scaffold:imports\n", ""),
    )
    .unwrap();
    let o = run(&d, &args, &[]);
    ok(&o, "missing imports marker");
    let err = text(&o.stderr);
    assert!(
        err.contains("note: cmd/main.go: the marker `// +kubebuilder:scaffold:imports` is missing"),
        "{err}"
    );
}
