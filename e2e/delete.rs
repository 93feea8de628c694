//! `delete api` and `delete webhook`: round trips derived from the golden scripts. Each
//! golden script (e2e/testdata/*/commands) is run forward, keeping the tree after every
//! command; then, from the last command back, each `create api` and `create webhook` is undone
//! by the same command line with `create` changed to `delete` (`delete` takes `create`'s flags,
//! checked against PROJECT) and the tree must be byte-identical (every file and directory) to
//! the one before that `create`. A command that has no reverse (`init`, `edit`, `create
//! --force`) is stepped over by going back to the tree before it. So every kind of API and
//! webhook the golden trees have is created and deleted again, in both layouts.

use crate::support::{full_snapshot, opbuilder, split_words};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// Make `dir` hold exactly `tree`.
pub fn restore(dir: &Path, tree: &Tree) {
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

/// The `create` command `words` as a `delete` command, every flag as it is (`delete` takes
/// `create`'s flags); None for a command without one.
fn swapped(words: &[String]) -> Option<Vec<String>> {
    if words.get(1).map(String::as_str) != Some("create")
        || !matches!(words.get(2).map(String::as_str), Some("api" | "webhook"))
        || words.iter().any(|w| w == "--force")
    {
        return None;
    }
    let mut out = words[1..].to_vec();
    out[0] = "delete".into();
    Some(out)
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
pub fn differences(want: &Tree, got: &Tree) -> String {
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
    for words in &lines {
        let out = opbuilder(dir).args(&words[1..]).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            words.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        trees.push(full_snapshot(dir));
    }
    let mut problems = vec![];
    let mut undone = 0;
    let mut in_place = true;
    for i in (0..lines.len()).rev() {
        let Some(delete) = swapped(&lines[i]) else {
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

/// A fresh test project (`ship` group, single-group) in `dir`, with `commands` run after init.
fn project(dir: &Path, commands: &[&str]) {
    crate::support::init_project(dir, &[]);
    for c in commands {
        let words = split_words(c);
        let mut args: Vec<String> = words.clone();
        if words[0] == "create" {
            args.push("--skip-post-steps".into());
        }
        let out = opbuilder(dir).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{c}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn run(dir: &Path, args: &str) -> std::process::Output {
    opbuilder(dir).args(split_words(args)).output().unwrap()
}

fn ok(dir: &Path, args: &str) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "{args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

const APP: &str = "--group ship --version v1 --kind Frigate";

/// A test project with the API Frigate (types and controller), in a directory of its own.
fn with_frigate() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    project(
        dir.path(),
        &[&format!("create api {APP} --resource --controller")],
    );
    dir
}

/// `args` (a command line without `opbuilder`) exits `code` naming each needle, and changes
/// nothing.
fn refuse(d: &Path, args: &str, code: i32, needles: &[&str]) {
    let words = split_words(args);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    crate::support::refused(d, &words, code, needles);
}

#[test]
fn user_edits_stay_and_a_changed_file_of_the_kind_is_kept_until_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    project(d, &[]);
    let before = full_snapshot(d);
    ok(
        d,
        &format!("create api {APP} --resource --controller --skip-post-steps"),
    );
    // The user's code in shared files, and in the kind's controller.
    let main = fs::read_to_string(d.join("cmd/main.go")).unwrap();
    let main = main.replacen("func main() {", "// Mine.\nfunc main() {", 1);
    fs::write(d.join("cmd/main.go"), &main).unwrap();
    let ctrl = d.join("internal/controller/frigate_controller.go");
    let mut text = fs::read_to_string(&ctrl).unwrap();
    text.push_str("\n// Mine too.\n");
    fs::write(&ctrl, &text).unwrap();
    // The changed controller uses the types that would go: refused, nothing written.
    refuse(
        d,
        &format!("delete api {APP}"),
        1,
        &[
            "these files `create` wrote changed since, so they are kept, and they use what this would delete:\n  \
             internal/controller/frigate_controller.go (lines ",
            "--force",
        ],
    );
    // The controller alone goes with --force; the user's main.go line stays.
    let out = ok(d, &format!("delete api {APP} --force"));
    assert!(
        out.contains("removed all the same (--force)") && out.contains("frigate_controller.go"),
        "{out}"
    );
    let mut want = before.clone();
    want.insert(
        PathBuf::from("cmd/main.go"),
        Some(
            String::from_utf8(before[Path::new("cmd/main.go")].clone().unwrap())
                .unwrap()
                .replacen("func main() {", "// Mine.\nfunc main() {", 1)
                .into_bytes(),
        ),
    );
    let got = full_snapshot(d);
    assert!(got == want, "{}", differences(&want, &got));
}

#[test]
fn code_elsewhere_that_uses_the_kind_stops_the_deletion() {
    let dir = with_frigate();
    let d = dir.path();
    fs::create_dir_all(d.join("internal/fleet")).unwrap();
    fs::write(
        d.join("internal/fleet/fleet.go"),
        "package fleet\n\nimport (\n\tshipv1 \"example.com/guestbook/api/v1\"\n)\n\n// Flagship is a shipv1.Frigate.\nvar Flagship shipv1.Frigate\n",
    )
    .unwrap();
    refuse(
        d,
        &format!("delete api {APP}"),
        1,
        &[
            "other code still uses what this would delete",
            "internal/fleet/fleet.go:4: shipv1 \"example.com/guestbook/api/v1\"",
            "internal/fleet/fleet.go:8: var Flagship shipv1.Frigate",
        ],
    );
    let out = ok(d, &format!("delete api {APP} --force"));
    assert!(out.contains("Still used (--force)"), "{out}");
    assert!(d.join("internal/fleet/fleet.go").is_file());
    assert!(!d.join("api/v1/frigate_types.go").exists());
}

#[test]
fn rust_code_elsewhere_that_uses_the_kind_stops_the_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(
        d,
        "init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name fleet --skip-post-steps",
    );
    ok(
        d,
        &format!("create api {APP} --resource --controller --skip-post-steps"),
    );
    fs::write(
        d.join("src/fleet.rs"),
        "use crate::api::ship::v1::Frigate;\n\npub fn flagship() -> Option<Frigate> {\n    None\n}\n",
    )
    .unwrap();
    let lib = fs::read_to_string(d.join("src/lib.rs")).unwrap();
    fs::write(d.join("src/lib.rs"), format!("{lib}pub mod fleet;\n")).unwrap();
    refuse(
        d,
        &format!("delete api {APP}"),
        1,
        &[
            "other code still uses what this would delete",
            "src/fleet.rs:1: use crate::api::ship::v1::Frigate;",
            "src/fleet.rs:3: pub fn flagship() -> Option<Frigate> {",
        ],
    );
    let out = ok(d, &format!("delete api {APP} --force"));
    assert!(out.contains("Still used (--force)"), "{out}");
    assert!(d.join("src/fleet.rs").is_file());
    assert!(!d.join("src/api/ship/v1/frigate.rs").exists());
}

#[test]
fn one_webhook_type_goes_as_if_it_had_never_been_created() {
    for (first, gone, stays) in [
        (
            "--defaulting --programmatic-validation",
            "--defaulting",
            "--programmatic-validation",
        ),
        (
            "--defaulting --programmatic-validation",
            "--programmatic-validation",
            "--defaulting",
        ),
        ("--defaulting", "--defaulting", "--programmatic-validation"),
    ] {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let api = format!("create api {APP} --resource --controller");
        project(a.path(), &[&api, &format!("create webhook {APP} {first}")]);
        if first == gone {
            ok(
                a.path(),
                &format!("create webhook {APP} {stays} --skip-post-steps"),
            );
        }
        ok(a.path(), &format!("delete webhook {APP} {gone}"));
        project(b.path(), &[&api, &format!("create webhook {APP} {stays}")]);
        let (want, got) = (full_snapshot(b.path()), full_snapshot(a.path()));
        assert!(
            want == got,
            "{first}, then delete {gone}:\n{}",
            differences(&want, &got)
        );
    }
}

#[test]
fn cert_manager_stays_while_the_metrics_certificate_uses_it() {
    for rust in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        metrics_certificate_kept(dir.path(), rust);
    }
}

/// A project of go/v4 (or the Rust layout, whose kustomize tree is go/v4's) whose only
/// webhook goes while the metrics certificate is on.
fn metrics_certificate_kept(d: &Path, rust: bool) {
    if rust {
        ok(
            d,
            "init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name fleet --skip-post-steps",
        );
    } else {
        crate::support::init_project(d, &[]);
    }
    ok(
        d,
        &format!("create api {APP} --resource --controller --skip-post-steps"),
    );
    ok(
        d,
        &format!("create webhook {APP} --defaulting --skip-post-steps"),
    );
    let k = d.join("config/default/kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap().replace(
        "#- path: cert_metrics_manager_patch.yaml\n#  target:\n#    kind: Deployment",
        "- path: cert_metrics_manager_patch.yaml\n  target:\n    kind: Deployment",
    );
    fs::write(&k, &text).unwrap();
    ok(d, &format!("delete webhook {APP}"));
    let after = fs::read_to_string(&k).unwrap();
    for line in [
        "\n- ../certmanager\n",
        "\nreplacements:\n",
        "\n- path: cert_metrics_manager_patch.yaml\n",
    ] {
        assert!(after.contains(line), "{line:?} went:\n{after}");
    }
    assert!(after.contains("\n#- ../webhook\n"), "{after}");
    assert!(d
        .join("config/certmanager/certificate-metrics.yaml")
        .is_file());
    assert!(!d.join("config/webhook").exists());
}

#[test]
fn versions_the_crd_needs_stay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    project(
        d,
        &[
            &format!("create api {APP} --resource --controller"),
            "create api --group ship --version v2 --kind Frigate --resource --controller=false",
            "create api --group ship --version v3 --kind Frigate --resource --controller=false",
            &format!("create webhook {APP} --conversion --spoke v2"),
        ],
    );
    refuse(
        d,
        &format!("delete api {APP}"),
        1,
        &[
            "has webhooks",
            "opbuilder delete webhook --group ship --version v1 --kind Frigate --conversion",
        ],
    );
    // v3 is neither stored nor converted: it goes while the others stay.
    ok(d, "delete api --group ship --version v3 --kind Frigate");
    // v1 is the storage version (the conversion webhook marked it so).
    ok(d, &format!("delete webhook {APP}"));
    let types = d.join("api/v1/frigate_types.go");
    let text = fs::read_to_string(&types).unwrap().replacen(
        "// +kubebuilder:object:root=true\n",
        "// +kubebuilder:object:root=true\n// +kubebuilder:storageversion\n",
        1,
    );
    fs::write(&types, text).unwrap();
    refuse(
        d,
        &format!("delete api {APP}"),
        1,
        &[
            "ship/v1 Frigate is the storage version of Frigate",
            "version v2 stays",
        ],
    );
}

#[test]
fn bad_requests_are_usage_errors_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    project(
        d,
        &[
            &format!("create api {APP} --resource --controller"),
            &format!("create webhook {APP} --defaulting"),
        ],
    );
    let check = |args: &str, code: i32, needles: &[&str]| refuse(d, args, code, needles);
    check(
        "delete api --group ship --version 1 --kind Frigate",
        2,
        &["--version"],
    );
    check(
        &format!("delete api {APP} --controller=false"),
        2,
        &[
            "--controller=false would keep the kind's controller",
            "--resource=false",
        ],
    );
    check(
        &format!("delete api {APP} --resource --controller-name x"),
        2,
        &["give one of them"],
    );
    check(
        &format!("delete api {APP} --resource=false --controller=false"),
        2,
        &["nothing to delete"],
    );
    check(&format!("delete api {APP} --image=x"), 2, &["--image"]);
    check(
        "delete api --group ship --version v1 --kind Corvette",
        1,
        &["PROJECT records no ship/v1 Corvette"],
    );
    check(
        &format!("delete webhook {APP} --programmatic-validation"),
        1,
        &["has no validating webhook; it has: defaulting"],
    );
    check(
        &format!("delete api {APP} --controller-name audit --resource=false"),
        1,
        &["has no controller named \"audit\""],
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_writes_nothing() {
    let dir = with_frigate();
    let d = dir.path();
    let before = full_snapshot(d);
    let out = ok(d, &format!("delete api {APP} --dry-run"));
    assert_eq!(before, full_snapshot(d));
    for line in [
        "opbuilder delete api --dry-run: nothing was written. The plan:",
        "would remove    api/v1/frigate_types.go",
        "would update    cmd/main.go",
        "would update    PROJECT",
        "make generate manifests",
    ] {
        assert!(out.contains(line), "{line:?} missing:\n{out}");
    }
}

#[test]
fn the_rust_layout_keeps_its_storage_version() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    opbuilder(d)
        .args([
            "init",
            "--plugins=rust.opbuilder.io/v1-beta",
            "--domain",
            "example.com",
            "--project-name",
            "guestbook",
        ])
        .assert()
        .success();
    let before = full_snapshot(d);
    ok(d, "create api --group webapp --version v1 --kind Guestbook");
    ok(
        d,
        "create api --group webapp --version v2 --kind Guestbook --controller=false",
    );
    refuse(
        d,
        "delete api --group webapp --version v1 --kind Guestbook",
        1,
        &["webapp/v1 Guestbook is the storage version of Guestbook"],
    );
    ok(d, "delete api --group webapp --version v2 --kind Guestbook");
    ok(d, "delete api --group webapp --version v1 --kind Guestbook");
    let got = full_snapshot(d);
    assert!(got == before, "{}", differences(&before, &got));
}

#[test]
fn rust_webhooks_created_one_after_the_other_go_in_either_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    opbuilder(d)
        .args([
            "init",
            "--plugins=rust.opbuilder.io/v1-beta",
            "--domain",
            "example.com",
            "--project-name",
            "guestbook",
        ])
        .assert()
        .success();
    let api = "--group webapp --version v1 --kind Guestbook";
    ok(d, &format!("create api {api} --resource --controller"));
    let before = full_snapshot(d);
    ok(
        d,
        &format!("create webhook {api} --programmatic-validation"),
    );
    ok(d, &format!("create webhook {api} --defaulting"));
    let out = ok(d, &format!("delete webhook {api}"));
    assert!(!out.contains("Kept"), "{out}");
    let got = full_snapshot(d);
    assert!(got == before, "{}", differences(&before, &got));
}

#[test]
fn the_helm_charts_templates_of_a_kind_go_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    opbuilder(d)
        .args([
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--skip-post-steps",
        ])
        .assert()
        .success();
    let api = "--group ship --version v1beta1 --kind Frigate";
    ok(
        d,
        &format!("create api {api} --resource --controller --skip-post-steps"),
    );
    // The chart of the kustomize output (the fixture is that of a project named x with Frigate).
    fs::create_dir_all(d.join("dist")).unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/fixtures/helm/install.yaml"),
        d.join("dist/install.yaml"),
    )
    .unwrap();
    ok(d, "edit --plugins=helm/v2-alpha --skip-build-installer");
    let chart = d.join("dist/chart/templates");
    assert!(chart.join("crd/frigates.ship.example.com.yaml").is_file());
    let out = ok(d, &format!("delete api {api}"));
    for f in [
        "crd/frigates.ship.example.com.yaml",
        "rbac/frigate-admin-role.yaml",
        "rbac/frigate-editor-role.yaml",
        "rbac/frigate-viewer-role.yaml",
    ] {
        assert!(!chart.join(f).exists(), "{f} is still there:\n{out}");
        assert!(
            out.contains(&format!("remove    dist/chart/templates/{f}")),
            "{out}"
        );
    }
    assert!(
        out.contains(
            "dist/chart/templates/rbac/manager-role.yaml  (opbuilder edit --plugins=helm/v2-alpha)"
        ),
        "{out}"
    );
    assert!(
        out.contains("opbuilder edit --plugins=helm/v2-alpha\n"),
        "{out}"
    );
}

#[test]
fn a_project_of_an_earlier_release_loses_what_that_release_wrote() {
    // Made with the templates of 0.3.0 (PROJECT's cliVersion says so) while the project's pins
    // are the current templates' own: `delete` plans with the current templates, and finds what
    // 0.3.0's wrote (its webhook setup in cmd/main.go and its webhook file differ) through them.
    let made = |webhooks: &str| {
        let src = tempfile::tempdir().unwrap();
        let mut commands = vec![format!("create api {APP} --resource --controller")];
        if !webhooks.is_empty() {
            commands.push(format!("create webhook {APP} {webhooks}"));
        }
        let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
        project(src.path(), &commands);
        let out = tempfile::tempdir().unwrap();
        let to = out.path().join("p");
        let o = run(
            src.path(),
            &format!(
                "alpha generate --templates-version 0.3.0 --output-dir {}",
                to.display()
            ),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (out, to)
    };
    let (_a, a) = made("--defaulting --programmatic-validation");
    assert!(crate::support::read(&a, "PROJECT").contains("cliVersion: 0.3.0"));
    let (_b, b) = made("--programmatic-validation");
    ok(&a, &format!("delete webhook {APP} --defaulting"));
    let (want, got) = (full_snapshot(&b), full_snapshot(&a));
    assert!(want == got, "{}", differences(&want, &got));
    let (_c, c) = made("");
    let out = ok(&a, &format!("delete webhook {APP}"));
    let (want, got) = (full_snapshot(&c), full_snapshot(&a));
    assert!(want == got, "{}\n{out}", differences(&want, &got));
}

#[test]
fn a_spoke_goes_and_the_hub_converts_the_others() {
    for rust in [false, true] {
        let (g, k) = if rust {
            ("--group webapp", "--kind Guestbook")
        } else {
            ("--group ship", "--kind Frigate")
        };
        let make = |versions: &[&str], spokes: &str| {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            if rust {
                opbuilder(d)
                    .args([
                        "init",
                        "--plugins=rust.opbuilder.io/v1-beta",
                        "--domain",
                        "example.com",
                        "--project-name",
                        "guestbook",
                    ])
                    .assert()
                    .success();
            } else {
                crate::support::init_project(d, &[]);
            }
            for (i, v) in versions.iter().enumerate() {
                let controller = if i == 0 { "" } else { "=false" };
                ok(
                    d,
                    &format!("create api {g} --version {v} {k} --resource --controller{controller} --skip-post-steps"),
                );
            }
            ok(
                d,
                &format!("create webhook {g} --version v1 {k} --conversion --spoke {spokes} --skip-post-steps"),
            );
            dir
        };
        let a = make(&["v1", "v2", "v3"], "v2,v3");
        let b = make(&["v1", "v2"], "v2");
        let out = ok(a.path(), &format!("delete api {g} --version v3 {k}"));
        let (want, got) = (full_snapshot(b.path()), full_snapshot(a.path()));
        assert!(
            want == got,
            "rust: {rust}:\n{}\n{out}",
            differences(&want, &got)
        );
    }
}

#[test]
fn an_api_made_before_edit_multigroup_goes_from_where_it_was_made() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let kraken = "create api --group sea --version v1 --kind Kraken --resource --controller";
    project(
        a.path(),
        &[
            &format!("create api {APP} --resource --controller"),
            "edit --multigroup",
            kraken,
        ],
    );
    project(b.path(), &["edit --multigroup", kraken]);
    ok(a.path(), &format!("delete api {APP}"));
    let (want, got) = (full_snapshot(b.path()), full_snapshot(a.path()));
    assert!(want == got, "{}", differences(&want, &got));
}

#[test]
fn wiring_changed_since_is_left_to_take_out_by_hand() {
    let dir = with_frigate();
    let d = dir.path();
    let main = d.join("cmd/main.go");
    let text = fs::read_to_string(&main).unwrap();
    let changed = text.replace(
        "\"Failed to set up controller\", \"controller\", \"frigate\"",
        "\"cannot set up the frigate controller\"",
    );
    assert_ne!(changed, text, "the setup's message is in cmd/main.go");
    fs::write(&main, &changed).unwrap();
    // The setup names the reconciler that goes: refused, with the line.
    refuse(
        d,
        &format!("delete api {APP}"),
        1,
        &["cmd/main.go:", "controller.FrigateReconciler"],
    );
    // Forced: everything else goes; the changed setup is named, to take out by hand.
    let out = ok(d, &format!("delete api {APP} --force"));
    assert!(
        out.contains("Not found as `create` wrote it, so left for you to take out:\n  cmd/main.go: remove what is left of these lines (changed since):"),
        "{out}"
    );
    let after = fs::read_to_string(&main).unwrap();
    assert!(
        after.contains("cannot set up the frigate controller"),
        "{after}"
    );
    assert!(
        !after.contains("shipv1.AddToScheme"),
        "the scheme's line went: {after}"
    );
}
