//! Plugin keys and chains: what `--plugins` accepts, what PROJECT records, and that a plugin
//! opbuilder cannot run is named, never ignored.

mod support;

use std::fs;
use std::path::Path;
use support::{full_snapshot, opbuilder};

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    opbuilder(dir).args(args).output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?} failed:\n{err}");
    err
}

/// `args` exits `code`, names every needle on stderr and leaves `dir` as it was.
fn refused(dir: &Path, args: &[&str], code: i32, needles: &[&str]) {
    let before = full_snapshot(dir);
    let out = run(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}\n{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}:\n{err}");
    }
    assert_eq!(before, full_snapshot(dir), "{args:?} changed files");
}

fn init(dir: &Path, extra: &[&str]) {
    let mut args = vec![
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/x",
        "--project-name",
        "x",
        "--skip-post-steps",
    ];
    args.extend_from_slice(extra);
    ok(dir, &args);
}

fn project(dir: &Path) -> serde_yaml::Value {
    serde_yaml::from_str(&fs::read_to_string(dir.join("PROJECT")).unwrap()).unwrap()
}

fn layout(dir: &Path) -> Vec<String> {
    serde_yaml::from_value(project(dir)["layout"].clone()).unwrap()
}

const API: &[&str] = &[
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
];

#[test]
fn init_records_the_chain_in_kubebuilders_canonical_keys() {
    // What kubebuilder v4.15 records for the same --plugins values.
    for (flag, want) in [
        ("go/v4", vec!["go.kubebuilder.io/v4"]),
        ("go.kubebuilder.io/v4", vec!["go.kubebuilder.io/v4"]),
        (
            "kustomize/v2,base.go.kubebuilder.io/v4",
            vec![
                "kustomize.common.kubebuilder.io/v2",
                "base.go.kubebuilder.io/v4",
            ],
        ),
    ] {
        let t = tempfile::tempdir().unwrap();
        init(t.path(), &["--plugins", flag]);
        assert_eq!(layout(t.path()), want, "{flag}");
        assert!(t.path().join("Makefile").is_file());
        // The next command reads the chain back from PROJECT.
        ok(t.path(), API);
        assert!(t.path().join("api/v1/frigate_types.go").is_file());
    }
}

#[test]
fn create_api_and_webhook_accept_the_go_keys() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    let mut args = API.to_vec();
    args.extend(["--plugins", "go.kubebuilder.io/v4"]);
    ok(d, &args);
    ok(
        d,
        &[
            "create",
            "webhook",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--defaulting",
            "--skip-post-steps",
            "--plugins=go/v4",
        ],
    );
    assert_eq!(layout(d), ["go.kubebuilder.io/v4"]);
}

#[test]
fn plugins_opbuilder_cannot_run_are_named_with_what_to_do() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    // On the command line: usage errors (exit 2), nothing written.
    let mut args = API.to_vec();
    args.extend(["--plugins", "deploy-image/v1-alpha"]);
    refused(
        d,
        &args,
        2,
        &[
            "deploy-image.go.kubebuilder.io/v1-alpha",
            "kubebuilder create api",
        ],
    );
    refused(
        d,
        &["edit", "--plugins=helm.kubebuilder.io/v2-alpha"],
        2,
        &["helm.kubebuilder.io/v2-alpha"],
    );
    refused(
        d,
        &["edit", "--plugins=helm/v1-alpha"],
        2,
        &["deprecated", "v2-alpha"],
    );
    refused(
        d,
        &["edit", "--plugins=my.example.com/v1"],
        2,
        &["my.example.com/v1", "external"],
    );
    refused(
        d,
        &["edit", "--plugins=go/v4,kustomize/v2"],
        2,
        &["go/v4 already holds"],
    );

    // In PROJECT's layout: the command stops (exit 1) and says how to run go/v4 alone.
    let text = fs::read_to_string(d.join("PROJECT")).unwrap();
    let with_helm = text.replace(
        "- go.kubebuilder.io/v4\n",
        "- go.kubebuilder.io/v4\n- helm.kubebuilder.io/v1-alpha\n",
    );
    assert_ne!(text, with_helm);
    fs::write(d.join("PROJECT"), &with_helm).unwrap();
    refused(
        d,
        API,
        1,
        &["helm.kubebuilder.io/v1-alpha", "--plugins=go/v4"],
    );
    let mut go_only = API.to_vec();
    go_only.extend(["--plugins", "go/v4"]);
    ok(d, &go_only);
    assert_eq!(
        layout(d),
        ["go.kubebuilder.io/v4", "helm.kubebuilder.io/v1-alpha"],
        "the layout is kept"
    );

    // In PROJECT's plugins section: kept, and a warning says it is not updated.
    let text = fs::read_to_string(d.join("PROJECT"))
        .unwrap()
        .replace("- helm.kubebuilder.io/v1-alpha\n", "");
    let with_section = text.replace(
        "projectName:",
        "plugins:\n  helm.kubebuilder.io/v2-alpha: {}\n  acme.example.com/v1:\n    x: 1\nprojectName:",
    );
    fs::write(d.join("PROJECT"), &with_section).unwrap();
    let err = ok(d, &["edit", "--multigroup"]);
    assert!(
        err.contains("warning") && err.contains("helm.kubebuilder.io/v2-alpha"),
        "{err}"
    );
    assert!(err.contains("acme.example.com/v1"), "{err}");
    let p = project(d);
    assert_eq!(
        p["plugins"]["acme.example.com/v1"]["x"],
        serde_yaml::Value::from(1)
    );
    assert!(p["plugins"]["helm.kubebuilder.io/v2-alpha"].is_mapping());
}
