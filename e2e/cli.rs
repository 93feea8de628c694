//! Command-line behaviour: help, exit codes, messages, and that failures leave every file untouched.

use crate::support::{full_snapshot, init_project, opbuilder};
use std::fs;
use std::path::Path;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Run `args` in `dir`, expect exit `code`, every `needle` in stderr, and `dir` unchanged.
fn fails_untouched(dir: &Path, args: &[&str], code: i32, needles: &[&str]) {
    let before = full_snapshot(dir);
    let out = opbuilder(dir).args(args).output().unwrap();
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}\nstderr: {err}\nstdout: {}",
        stdout(&out)
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks {n:?}:\n{err}");
    }
    assert_eq!(before, full_snapshot(dir), "{args:?} changed the directory");
}

fn api(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["create", "api", "--skip-post-steps"];
    args.extend_from_slice(extra);
    opbuilder(dir).args(&args).output().unwrap()
}

#[test]
fn help_shows_examples_everywhere() {
    let t = tempfile::tempdir().unwrap();
    for args in [
        vec!["--help"],
        vec!["init", "--help"],
        vec!["create", "api", "--help"],
        vec!["create", "webhook", "--help"],
        vec!["edit", "--help"],
        vec!["version", "--help"],
        vec!["completion", "--help"],
    ] {
        let out = opbuilder(t.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("Example"), "{args:?} has no example:\n{text}");
    }
    let out = opbuilder(t.path()).arg("version").output().unwrap();
    assert!(
        stdout(&out).contains("controller-runtime: v0.25.0"),
        "{}",
        stdout(&out)
    );
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = opbuilder(t.path())
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(
            out.status.success() && stdout(&out).contains("opbuilder"),
            "{shell}"
        );
    }
}

#[test]
fn unknown_flags_and_subcommands_are_usage_errors() {
    let t = tempfile::tempdir().unwrap();
    fails_untouched(t.path(), &["init", "--nope"], 2, &["--nope"]);
    fails_untouched(t.path(), &["frobnicate"], 2, &["frobnicate"]);
    fails_untouched(
        t.path(),
        &["init", "--license", "mit", "--repo", "example.com/x"],
        2,
        &["mit", "apache2"],
    );
}

#[test]
fn init_bad_input_exits_2_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let base = [
        "init",
        "--repo",
        "example.com/guestbook",
        "--project-name",
        "guestbook",
        "--skip-post-steps",
    ];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        base.iter().chain(extra).copied().collect()
    }
    let with = |extra: &[&'static str]| with(&base, extra);
    fails_untouched(
        d,
        &with(&["--domain", "Example_COM"]),
        2,
        &[
            "--domain",
            "\"Example_COM\"",
            "DNS-1123 subdomain",
            "example.com",
        ],
    );
    fails_untouched(d, &with(&["--domain", "a..b"]), 2, &["--domain"]);
    fails_untouched(
        d,
        &[
            "init",
            "--repo",
            "example.com/guestbook",
            "--project-name",
            "Guest_Book",
            "--skip-post-steps",
        ],
        2,
        &[
            "--project-name",
            "Guest_Book",
            "DNS-1123 label",
            "did you mean --project-name guest-book?",
        ],
    );
    fails_untouched(
        d,
        &["init", "--repo", "example.com//x", "--project-name", "g"],
        2,
        &["--repo", "module path", "github.com/acme/guestbook"],
    );
    fails_untouched(
        d,
        &["init", "--project-name", "g"],
        2,
        &["--repo is required", "go.mod"],
    );
    fails_untouched(
        d,
        &with(&["--license-file", "/nonexistent/header.txt"]),
        2,
        &["--license-file", "/nonexistent/header.txt", "readable"],
    );
    let hdr = tempfile::tempdir().unwrap();
    let bad = hdr.path().join("header.txt");
    let bad_s = bad.to_str().unwrap().to_string();
    fs::write(&bad, "// not a block comment\n").unwrap();
    let mut args = base.to_vec();
    args.extend(["--license-file", &bad_s]);
    fails_untouched(d, &args, 2, &["--license-file", "/*", "*/"]);
    fs::write(&bad, "/* closes */ early */").unwrap();
    fails_untouched(d, &args, 2, &["--license-file", "closes early"]);
    fs::remove_file(&bad).unwrap();
    fails_untouched(
        d,
        &with(&["--plugins", "helm/v2-alpha"]),
        2,
        // helm/v2-alpha only edits: init needs the go/v4 layout with it.
        &[
            "--plugins",
            "`init` needs a layout in the chain",
            "--plugins=go/v4",
        ],
    );
    assert_eq!(fs::read_dir(d).unwrap().count(), 0);
}

#[test]
fn init_takes_repo_from_go_mod_and_refuses_to_run_twice() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("My-Operator");
    fs::create_dir(&d).unwrap();
    fs::write(
        d.join("go.mod"),
        "module github.com/acme/my-operator\n\ngo 1.26.0\n",
    )
    .unwrap();
    let out = opbuilder(&d)
        .args(["init", "--skip-post-steps"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    assert!(
        project.contains("repo: github.com/acme/my-operator\n"),
        "{project}"
    );
    assert!(project.contains("projectName: my-operator\n"), "{project}");
    assert!(project.contains("domain: my.domain\n"), "{project}");
    fails_untouched(
        &d,
        &["init", "--skip-post-steps"],
        1,
        &["already holds a project file (PROJECT)"],
    );
    fs::remove_file(d.join("PROJECT")).unwrap();
    fails_untouched(
        &d,
        &["init", "--skip-post-steps"],
        1,
        &["already holds a project file (Makefile)"],
    );
}

#[test]
fn init_dry_run_prints_the_plan_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = opbuilder(t.path())
        .args([
            "init",
            "--repo",
            "example.com/g",
            "--project-name",
            "g",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("would create    cmd/main.go"), "{text}");
    assert!(text.contains("would create    PROJECT"), "{text}");
    assert_eq!(fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn init_warns_in_a_non_empty_directory_and_keeps_foreign_files() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("notes.txt"), "mine\n").unwrap();
    fs::write(t.path().join("Dockerfile"), "FROM scratch\n").unwrap();
    let out = opbuilder(t.path())
        .args([
            "init",
            "--repo",
            "example.com/g",
            "--project-name",
            "g",
            "--skip-post-steps",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("is not empty (Dockerfile, notes.txt)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(t.path().join("Dockerfile")).unwrap(),
        "FROM scratch\n"
    );
}

#[test]
fn owner_text_cannot_break_the_license_comment() {
    // Refused with the rule, not silently rewritten.
    let t = tempfile::tempdir().unwrap();
    fails_untouched(
        t.path(),
        &[
            "init",
            "--repo",
            "example.com/g",
            "--project-name",
            "g",
            "--skip-post-steps",
            "--owner",
            "Evil */ func init() { panic(1) } /*",
        ],
        2,
        &[
            "--owner",
            "must not contain `*/`",
            "example of a valid value",
        ],
    );
}

#[test]
fn license_none_and_namespaced() {
    let t = tempfile::tempdir().unwrap();
    init_project(t.path(), &["--license", "none", "--namespaced"]);
    assert!(!t.path().join("hack/boilerplate.go.txt").exists());
    let main = fs::read_to_string(t.path().join("cmd/main.go")).unwrap();
    assert!(main.starts_with("package main"), "{}", &main[..80]);
    assert!(main.contains("WATCH_NAMESPACE"));
    let role = fs::read_to_string(t.path().join("config/rbac/role.yaml")).unwrap();
    assert!(role.contains("kind: Role\n"), "{role}");
    assert!(fs::read_to_string(t.path().join("PROJECT"))
        .unwrap()
        .contains("namespaced: true\n"));
}

#[test]
fn create_api_bad_input_exits_non_zero_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let gvk = |g: &'static str, v: &'static str, k: &'static str| {
        vec![
            "create",
            "api",
            "--group",
            g,
            "--version",
            v,
            "--kind",
            k,
            "--skip-post-steps",
        ]
    };
    fails_untouched(
        d,
        &gvk("ingress", "1", "App"),
        2,
        &["--version", "\"1\"", "v1beta1"],
    );
    fails_untouched(d, &gvk("ingress", "V1", "App"), 2, &["--version"]);
    fails_untouched(d, &gvk("ingress", "v1.0", "App"), 2, &["--version"]);
    fails_untouched(
        d,
        &gvk("ingress", "v1", "app"),
        2,
        &["--kind", "\"app\"", "upper-case", "App"],
    );
    fails_untouched(d, &gvk("ingress", "v1", "My_App"), 2, &["--kind"]);
    fails_untouched(
        d,
        &gvk("ingress", "v1", "GroupVersion"),
        2,
        &["--kind", "GroupVersion", "cannot compile"],
    );
    fails_untouched(d, &gvk("Ingress", "v1", "App"), 2, &["--group", "DNS-1123"]);
    fails_untouched(d, &gvk("ingress_x", "v1", "App"), 2, &["--group"]);
    let mut plural = gvk("ingress", "v1", "App");
    plural.extend(["--plural", "Apps"]);
    fails_untouched(d, &plural, 2, &["--plural", "DNS-1035"]);
    let mut ext = gvk("certmanager", "v1", "Issuer");
    ext.extend([
        "--resource=false",
        "--controller",
        "--external-api-path",
        "cert-manager/v1",
    ]);
    fails_untouched(d, &ext, 2, &["--external-api-path", "fully qualified"]);
    let mut ext = gvk("certmanager", "v1", "Issuer");
    ext.extend([
        "--external-api-module",
        "github.com/cert-manager/cert-manager@v1.21.0",
    ]);
    fails_untouched(
        d,
        &ext,
        2,
        &["--external-api-module needs --external-api-path"],
    );
    let mut none = gvk("ingress", "v1", "App");
    none.extend(["--resource=false", "--controller=false"]);
    fails_untouched(d, &none, 2, &["nothing to do"]);
    let mut bad_name = gvk("ingress", "v1", "App");
    bad_name.extend(["--controller-name", "App_Backup"]);
    fails_untouched(d, &bad_name, 2, &["--controller-name", "DNS-1035"]);

    // Project state.
    let ok = api(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1beta1",
            "--kind",
            "App",
        ],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    fails_untouched(
        d,
        &gvk("ingress", "v1beta1", "App"),
        1,
        &["already exists", "--force"],
    );
    fails_untouched(
        d,
        &gvk("batch", "v1", "MyCronJob"),
        1,
        &["single-group", "edit --multigroup"],
    );
    fails_untouched(d, &gvk("ingress", "v1beta1", "AppList"), 1, &["AppList"]);
    let mut ctl = gvk("ingress", "v1beta1", "App");
    ctl.extend(["--resource=false", "--controller"]);
    fails_untouched(
        d,
        &ctl,
        1,
        &["already has a controller", "--controller-name"],
    );
    let mut plural = gvk("ingress", "v1beta1", "App");
    plural.extend(["--force", "--plural", "applications"]);
    fails_untouched(d, &plural, 1, &["--plural", "\"apps\""]);
}

#[test]
fn create_api_needs_a_project_and_intact_markers() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    fails_untouched(
        d,
        &[
            "create",
            "api",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
        ],
        1,
        &["no PROJECT file", "opbuilder init"],
    );
    fs::write(d.join("PROJECT"), "version: [oops\n").unwrap();
    fails_untouched(
        d,
        &[
            "create",
            "api",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
        ],
        1,
        &["PROJECT is not valid"],
    );
    fs::write(d.join("PROJECT"), "version: \"2\"\n").unwrap();
    fails_untouched(
        d,
        &[
            "create",
            "api",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
        ],
        1,
        &["not supported"],
    );

    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let main = d.join("cmd/main.go");
    let text = fs::read_to_string(&main)
        .unwrap()
        .replace("// +kubebuilder:scaffold:builder", "// (marker removed)");
    fs::write(&main, text).unwrap();
    fails_untouched(
        d,
        &[
            "create",
            "api",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--skip-post-steps",
        ],
        1,
        &[
            "cmd/main.go",
            "+kubebuilder:scaffold:builder",
            "nothing was written",
        ],
    );
    fs::remove_file(&main).unwrap();
    fails_untouched(
        d,
        &[
            "create",
            "api",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--skip-post-steps",
        ],
        1,
        &[
            "cmd/main.go is missing, so the manager's setup of the new code has nowhere to go",
            "--allow-missing-markers",
        ],
    );
}

#[test]
fn prompts_take_the_default_without_a_terminal() {
    let t = tempfile::tempdir().unwrap();
    init_project(t.path(), &[]);
    let out = opbuilder(t.path())
        .args([
            "create",
            "api",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--skip-post-steps",
        ])
        .write_stdin("")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--resource not given and stdin is not a terminal"),
        "{err}"
    );
    assert!(err.contains("--controller not given"), "{err}");
    assert!(t.path().join("api/v1/app_types.go").exists());
    assert!(t
        .path()
        .join("internal/controller/app_controller.go")
        .exists());
}

#[test]
fn create_api_dry_run_and_force() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let before = full_snapshot(d);
    let out = api(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--dry-run",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("would update    cmd/main.go"),
        "{}",
        stdout(&out)
    );
    assert_eq!(before, full_snapshot(d));
    assert!(api(
        d,
        &["--group", "ingress", "--version", "v1", "--kind", "App"]
    )
    .status
    .success());
    let types = d.join("api/v1/app_types.go");
    fs::write(&types, "package v1\n// edited\n").unwrap();
    let out = api(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--force",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fs::read_to_string(&types).unwrap().contains("AppSpec"));
    // A second kind: files the command reads but does not change are "kept" in a dry run.
    let out = api(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "Gate",
            "--dry-run",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = stdout(&out);
    assert!(
        plan.contains("would keep      config/default/kustomization.yaml"),
        "{plan}"
    );
    assert!(!plan.contains("would unchanged"), "{plan}");
    let main = fs::read_to_string(d.join("cmd/main.go")).unwrap();
    assert_eq!(main.matches("ingressv1.AddToScheme").count(), 1, "{main}");
    assert_eq!(main.matches("AppReconciler").count(), 1, "{main}");
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    assert_eq!(project.matches("kind: App").count(), 1, "{project}");
}

fn webhook(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["create", "webhook", "--skip-post-steps"];
    args.extend_from_slice(extra);
    opbuilder(dir).args(&args).output().unwrap()
}

/// A project made before config/network-policy/ and test/e2e/ (or whose owner removed them):
/// `create webhook` writes the rest, wired, and leaves those two parts out whole; with the
/// manager's marker gone too, it refuses, and with --allow-missing-markers writes all but the
/// manager's setup. The messages are pinned by the UI cases e2e/ui/degrade-*.
#[test]
fn create_webhook_in_an_older_layout_leaves_out_what_the_project_lacks() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let gvk = ["--group", "ingress", "--version", "v1", "--kind", "App"];
    assert!(
        api(d, &[&gvk[..], &["--resource", "--controller"]].concat())
            .status
            .success()
    );
    fs::remove_dir_all(d.join("config/network-policy")).unwrap();
    fs::remove_dir_all(d.join("test/e2e")).unwrap();
    let main = d.join("cmd/main.go");
    let unmarked = fs::read_to_string(&main)
        .unwrap()
        .replace("\t// +kubebuilder:scaffold:builder\n", "");
    fs::write(&main, &unmarked).unwrap();
    fails_untouched(
        d,
        &[
            &["create", "webhook", "--skip-post-steps", "--defaulting"][..],
            &gvk[..],
        ]
        .concat(),
        1,
        &["the manager's setup of the new code has nowhere to go"],
    );
    let out = webhook(
        d,
        &[&gvk[..], &["--defaulting", "--allow-missing-markers"]].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for said in [
        "note: left out the network policy for webhook traffic, because config/network-policy/kustomization.yaml is missing",
        "note: left out the webhooks' e2e checks, because test/e2e/e2e_test.go is missing",
        "warning: left out the manager's setup of the new code, because cmd/main.go has no line",
        "SetupAppWebhookWithManager(mgr)",
    ] {
        assert!(err.contains(said), "{said:?} not in:\n{err}");
    }
    // Neither left-out part wrote anything; main.go is as it was; the rest is written and wired.
    assert!(!d.join("config/network-policy").exists());
    assert!(!d.join("test/e2e").exists());
    assert_eq!(fs::read_to_string(&main).unwrap(), unmarked);
    assert!(d.join("internal/webhook/v1/app_webhook.go").is_file());
    let suite = fs::read_to_string(d.join("internal/webhook/v1/webhook_suite_test.go")).unwrap();
    assert!(suite.contains("SetupAppWebhookWithManager(mgr)"), "{suite}");
    let default = fs::read_to_string(d.join("config/default/kustomization.yaml")).unwrap();
    assert!(default.contains("\n- ../webhook\n"), "{default}");
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    assert!(project.contains("defaulting: true"), "{project}");
}

#[test]
fn create_webhook_bad_input_exits_non_zero_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    assert!(api(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--resource",
            "--controller"
        ]
    )
    .status
    .success());
    let base = [
        "create",
        "webhook",
        "--group",
        "ingress",
        "--version",
        "v1",
        "--kind",
        "App",
        "--skip-post-steps",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    fails_untouched(
        d,
        &with(&[]),
        2,
        &["--defaulting", "--programmatic-validation", "--conversion"],
    );
    fails_untouched(
        d,
        &with(&["--programmatic-validation", "--defaulting-path", "/x"]),
        2,
        &["--defaulting-path", "add --defaulting"],
    );
    fails_untouched(
        d,
        &with(&["--defaulting", "--validation-path", "/x"]),
        2,
        &["--validation-path", "add --programmatic-validation"],
    );
    fails_untouched(
        d,
        &with(&["--defaulting", "--defaulting-path", "no-slash"]),
        2,
        &["--defaulting-path", "\"no-slash\"", "/validate-app"],
    );
    fails_untouched(
        d,
        &with(&["--conversion", "--spoke", "v2"]),
        1,
        &["--spoke v2", "create api"],
    );
    fails_untouched(
        d,
        &with(&["--conversion", "--spoke", "2"]),
        2,
        &["--spoke", "\"2\""],
    );
    fails_untouched(
        d,
        &with(&["--defaulting", "--spoke", "v2"]),
        2,
        &["--spoke", "add --conversion"],
    );
    fails_untouched(
        d,
        &with(&["--defaulting", "--plural", "applications"]),
        1,
        &["--plural", "\"apps\""],
    );
    fails_untouched(
        d,
        &[
            "create",
            "webhook",
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "Missing",
            "--defaulting",
            "--skip-post-steps",
        ],
        1,
        &["no API ingress.example.com/v1 Missing", "create api"],
    );
    fails_untouched(
        d,
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--conversion",
            "--skip-post-steps",
        ],
        1,
        &["--conversion needs an API whose types live in this project"],
    );
    assert!(webhook(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--defaulting"
        ]
    )
    .status
    .success());
    fails_untouched(
        d,
        &with(&["--defaulting"]),
        1,
        &["already has a defaulting webhook", "--force"],
    );
}

#[test]
fn second_webhook_type_merges_into_edited_files() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    assert!(api(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--resource",
            "--controller"
        ]
    )
    .status
    .success());
    let out = webhook(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--defaulting",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hook = d.join("internal/webhook/v1/app_webhook.go");
    let text = fs::read_to_string(&hook).unwrap();
    assert!(
        text.contains("AppDefaulter") && !text.contains("AppValidator"),
        "{text}"
    );
    // The user fills in the defaulter; adding validation must keep that.
    let edited = text.replace("return nil\n}", "// user code stays\n\treturn nil\n}");
    fs::write(&hook, &edited).unwrap();
    let out = webhook(
        d,
        &[
            "--group",
            "ingress",
            "--version",
            "v1",
            "--kind",
            "App",
            "--programmatic-validation",
            "--validation-path",
            "/check-app",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = fs::read_to_string(&hook).unwrap();
    assert!(merged.contains("// user code stays"), "{merged}");
    assert!(merged.contains("WithDefaulter(&AppDefaulter{}).\n\t\tWithValidator(&AppValidator{}).\n\t\tWithValidatorCustomPath(\"/check-app\").\n\t\tComplete()"), "{merged}");
    assert!(
        merged.contains("func (v *AppValidator) ValidateCreate"),
        "{merged}"
    );
    assert!(
        merged.contains("path=/check-app,mutating=false"),
        "{merged}"
    );
    let tests = fs::read_to_string(d.join("internal/webhook/v1/app_webhook_test.go")).unwrap();
    assert!(
        tests.contains("App defaulting webhook") && tests.contains("App validating webhook"),
        "{tests}"
    );
    let main = fs::read_to_string(d.join("cmd/main.go")).unwrap();
    assert_eq!(
        main.matches("SetupAppWebhookWithManager").count(),
        1,
        "{main}"
    );
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    assert!(
        project.contains(
            "    defaulting: true\n    validation: true\n    validationPath: /check-app\n"
        ),
        "{project}"
    );
    let kust = fs::read_to_string(d.join("config/default/kustomization.yaml")).unwrap();
    assert!(
        kust.contains("\n- ../webhook\n")
            && kust.contains("\n- ../certmanager\n")
            && kust.contains("\nreplacements:\n"),
        "{kust}"
    );
    assert!(kust.contains("\n     fieldPath: .metadata.namespace # Namespace of the certificate CR\n   targets:\n     - select:\n         kind: ValidatingWebhookConfiguration"), "{kust}");
}

#[test]
fn edit_toggles_settings() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    fails_untouched(d, &["edit"], 2, &["nothing to edit"]);
    assert!(opbuilder(d)
        .args(["edit", "--multigroup"])
        .output()
        .unwrap()
        .status
        .success());
    assert!(fs::read_to_string(d.join("PROJECT"))
        .unwrap()
        .contains("multigroup: true\n"));
    assert!(opbuilder(d)
        .args(["edit", "--namespaced"])
        .output()
        .unwrap()
        .status
        .success());
    assert!(fs::read_to_string(d.join("config/rbac/role.yaml"))
        .unwrap()
        .contains("kind: Role\n"));
    assert!(opbuilder(d)
        .args(["edit", "--license", "none"])
        .output()
        .unwrap()
        .status
        .success());
    assert!(!d.join("hack/boilerplate.go.txt").exists());
    assert!(opbuilder(d)
        .args(["edit", "--license", "copyright", "--owner", "Acme"])
        .output()
        .unwrap()
        .status
        .success());
    assert_eq!(
        fs::read_to_string(d.join("hack/boilerplate.go.txt")).unwrap(),
        "/*\nCopyright YEAR Acme.\n*/"
    );
    let before = full_snapshot(d);
    let out = opbuilder(d)
        .args(["edit", "--multigroup=false", "--dry-run"])
        .output()
        .unwrap();
    assert!(
        out.status.success() && stdout(&out).contains("would update    PROJECT"),
        "{}",
        stdout(&out)
    );
    assert_eq!(before, full_snapshot(d));
}

#[test]
fn external_and_core_types_are_recorded_in_project() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let out = api(
        d,
        &[
            "--group",
            "cert-manager",
            "--version",
            "v1",
            "--kind",
            "Issuer",
            "--resource=false",
            "--controller",
            "--external-api-path",
            "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            "--external-api-domain",
            "io",
            "--external-api-module",
            "github.com/cert-manager/cert-manager@v1.21.0",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    for line in [
        "- controller: true\n  domain: io\n  external: true\n  group: cert-manager\n  kind: Issuer\n",
        "  module: github.com/cert-manager/cert-manager@v1.21.0\n  path: github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1\n",
    ] {
        assert!(project.contains(line), "{project}");
    }
    let main = fs::read_to_string(d.join("cmd/main.go")).unwrap();
    assert!(
        main.contains(
            "\tcertmanagerv1 \"github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1\"\n"
        ),
        "{main}"
    );
    assert!(
        main.contains("utilruntime.Must(certmanagerv1.AddToScheme(scheme))"),
        "{main}"
    );
    let ctl = fs::read_to_string(d.join("internal/controller/issuer_controller.go")).unwrap();
    assert!(
        ctl.contains("For(&certmanagerv1.Issuer{})")
            && ctl.contains("groups=cert-manager.io,resources=issuers"),
        "{ctl}"
    );
    let out = webhook(
        d,
        &[
            "--group",
            "cert-manager",
            "--version",
            "v1",
            "--kind",
            "Issuer",
            "--defaulting",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hook = fs::read_to_string(d.join("internal/webhook/v1/issuer_webhook.go")).unwrap();
    assert!(
        hook.contains("path=/mutate-cert-manager-io-v1-issuer,")
            && hook.contains("groups=cert-manager.io,"),
        "{hook}"
    );
    // A webhook on a core type warns about intercepting every object.
    let out = webhook(
        d,
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--defaulting",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("intercepts every such object"),
        "{}",
        stdout(&out)
    );
    let hook = fs::read_to_string(d.join("internal/webhook/v1/pod_webhook.go")).unwrap();
    assert!(
        hook.contains("path=/mutate--v1-pod,") && hook.contains("groups=\"\","),
        "{hook}"
    );
}

#[test]
fn an_invalid_default_plural_is_replaced_and_recorded() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    // flect v1.0.3 pluralises "dns" to "dnsDNSes", which is not a valid resource name.
    let out = api(
        d,
        &[
            "--group",
            "net",
            "--version",
            "v1",
            "--kind",
            "Dns",
            "--resource",
            "--controller",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    assert!(project.contains("  plural: dnses\n"), "{project}");
    let ctl = fs::read_to_string(d.join("internal/controller/dns_controller.go")).unwrap();
    assert!(ctl.contains("resources=dnses,"), "{ctl}");
    // A regular plural is not recorded.
    let out = api(
        d,
        &[
            "--group",
            "net",
            "--version",
            "v1",
            "--kind",
            "Policy",
            "--resource",
            "--controller",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    assert!(!project.contains("plural: policies"), "{project}");
    assert!(fs::read_to_string(d.join("config/crd/kustomization.yaml"))
        .unwrap()
        .contains("- bases/net.example.com_policies.yaml"));
}

// ---- Kubebuilder parity (each of these failed before the parity fixes)

fn ok(out: std::process::Output) {
    assert!(
        out.status.success(),
        "stderr: {}\nstdout: {}",
        stderr(&out),
        stdout(&out)
    );
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// The `replacements` of config/default/kustomization.yaml, parsed.
fn replacements(d: &Path) -> Vec<serde_yaml::Value> {
    let text = fs::read_to_string(d.join("config/default/kustomization.yaml")).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    doc["replacements"]
        .as_sequence()
        .unwrap_or_else(|| panic!("no replacements:\n{text}"))
        .clone()
}

/// The CRD names that get `cert-manager.io/inject-ca-from` from the Certificate's `field`, with
/// the index each one is written at.
fn ca_injection_crds(d: &Path, field: &str) -> Vec<(String, u64)> {
    let mut out = vec![];
    for r in replacements(d) {
        if r["source"]["kind"] != "Certificate" || r["source"]["fieldPath"] != field {
            continue;
        }
        for t in r["targets"].as_sequence().into_iter().flatten() {
            if t["select"]["kind"] == "CustomResourceDefinition" {
                out.push((
                    t["select"]["name"].as_str().unwrap().to_string(),
                    t["options"]["index"].as_u64().unwrap(),
                ));
            }
        }
    }
    out
}

#[test]
fn conversion_ca_injection_targets_both_certificate_sources() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    for (kind, hub, spoke) in [("FirstMate", "v1", "v2"), ("Sailor", "v1", "v2")] {
        ok(api(
            d,
            &words(&format!(
                "--group crew --version {hub} --kind {kind} --resource --controller"
            )),
        ));
        ok(api(
            d,
            &words(&format!(
                "--group crew --version {spoke} --kind {kind} --resource --controller=false"
            )),
        ));
        ok(webhook(
            d,
            &words(&format!(
                "--group crew --version {hub} --kind {kind} --conversion --spoke {spoke}"
            )),
        ));
    }
    let want = |i| {
        vec![
            ("firstmates.crew.example.com".to_string(), i),
            ("sailors.crew.example.com".to_string(), i),
        ]
    };
    // namespace/name: index 0 from the Certificate's namespace, index 1 from its name.
    assert_eq!(ca_injection_crds(d, ".metadata.namespace"), want(0));
    assert_eq!(ca_injection_crds(d, ".metadata.name"), want(1));
    // Conversion webhooks alone give controller-gen nothing to write into
    // config/webhook/manifests.yaml, which config/webhook lists: a placeholder keeps
    // config/default renderable.
    let placeholder = fs::read_to_string(d.join("config/webhook/manifests.yaml")).unwrap();
    assert!(
        placeholder.lines().all(|l| l.starts_with('#')),
        "{placeholder}"
    );
    // Running it again changes nothing.
    let before = fs::read_to_string(d.join("config/default/kustomization.yaml")).unwrap();
    ok(webhook(
        d,
        &words("--group crew --version v1 --kind Sailor --conversion --spoke v2 --force"),
    ));
    assert_eq!(
        before,
        fs::read_to_string(d.join("config/default/kustomization.yaml")).unwrap()
    );
}

#[test]
fn webhook_ca_injection_is_enabled_in_a_kubebuilder_style_kustomization() {
    // Kubebuilder's own layout of the commented blocks (one-space list indentation, its comments):
    // opbuilder must find the entries by their YAML, not by its own comments.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let entry = |src: &str, field: &str, tgt: &str, idx: u8| {
        format!("# - source:\n#     kind: {src}\n#     version: v1\n#     name: {}\n#     fieldPath: {field} # a comment\n#   targets:\n#     - select:\n#         kind: {tgt}\n#       fieldPaths:\n#         - {}\n#       options:\n#         delimiter: '{}'\n#         index: {idx}\n#         create: true\n",
            if src == "Service" { "webhook-service" } else { "serving-cert" },
            if src == "Service" { ".spec.dnsNames.0" } else { ".metadata.annotations.[cert-manager.io/inject-ca-from]" },
            if src == "Service" { "." } else { "/" })
    };
    let kb = format!(
        "namespace: guestbook-system\nnamePrefix: guestbook-\nresources:\n#- ../crd\n- ../rbac\n- ../manager\n#- ../webhook\n#- ../certmanager\n- metrics_service.yaml\npatches:\n- path: manager_metrics_patch.yaml\n  target:\n    kind: Deployment\n#- path: manager_webhook_patch.yaml\n#  target:\n#    kind: Deployment\n#replacements:\n{}{}\n{}{}\n",
        entry("Service", ".metadata.name", "Certificate", 0),
        entry("Service", ".metadata.namespace", "Certificate", 1),
        entry("Certificate", ".metadata.namespace", "MutatingWebhookConfiguration", 0),
        entry("Certificate", ".metadata.name", "MutatingWebhookConfiguration", 1),
    );
    fs::write(d.join("config/default/kustomization.yaml"), kb).unwrap();
    ok(api(
        d,
        &words("--group crew --version v1 --kind Captain --resource --controller"),
    ));
    let out = webhook(
        d,
        &words("--group crew --version v1 --kind Captain --defaulting"),
    );
    assert!(!stderr(&out).contains("could not find"), "{}", stderr(&out));
    ok(out);
    let r = replacements(d);
    assert_eq!(r.len(), 4, "{r:?}");
    let text = fs::read_to_string(d.join("config/default/kustomization.yaml")).unwrap();
    for line in [
        "- ../webhook",
        "- ../certmanager",
        "- ../crd",
        "- path: manager_webhook_patch.yaml",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line} not enabled:\n{text}"
        );
    }
}

#[test]
fn custom_plural_reaches_the_resource_marker() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    ok(api(d, &words("--group crew --version v1 --kind Admiral --plural=admirales --namespaced=false --resource --controller")));
    ok(api(
        d,
        &words("--group crew --version v1 --kind Sailor --plural=sailoren --resource --controller"),
    ));
    ok(api(
        d,
        &words("--group crew --version v1 --kind Captain --resource --controller"),
    ));
    let types = |k: &str| fs::read_to_string(d.join(format!("api/v1/{k}_types.go"))).unwrap();
    assert!(types("admiral").contains("// +kubebuilder:resource:path=admirales,scope=Cluster\n"));
    assert!(types("sailor").contains("// +kubebuilder:resource:path=sailoren\n"));
    assert!(!types("captain").contains("+kubebuilder:resource:"));
}

#[test]
fn core_and_external_controllers_fit_a_single_group_project() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    ok(api(
        d,
        &words("--group crew --version v1 --kind Captain --resource --controller"),
    ));
    ok(api(
        d,
        &words("--group apps --version v1 --kind Deployment --resource=false --controller"),
    ));
    ok(api(d, &words("--group cert-manager --version v1 --kind Certificate --resource=false --controller --external-api-path=github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1 --external-api-domain=io")));
    // An API of a second group is still refused.
    fails_untouched(
        d,
        &words("create api --skip-post-steps --group ship --version v1 --kind Frigate --resource --controller"),
        1,
        &["single-group", "edit --multigroup"],
    );
}

#[test]
fn api_and_webhook_go_interface_matches_kubebuilder() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    ok(api(d, &words("--group crew --version v1 --kind Captain --resource --controller --controller-name captain")));
    ok(webhook(
        d,
        &words("--group crew --version v1 --kind Captain --defaulting --programmatic-validation"),
    ));
    let types = fs::read_to_string(d.join("api/v1/captain_types.go")).unwrap();
    assert!(
        types.contains("\t// +required\n\tSpec CaptainSpec `json:\"spec\"`\n"),
        "{types}"
    );
    let gv = fs::read_to_string(d.join("api/v1/groupversion_info.go")).unwrap();
    assert!(
        gv.contains("runtime.NewSchemeBuilder(") && !gv.contains("controller-runtime/pkg/scheme"),
        "{gv}"
    );
    let hook = fs::read_to_string(d.join("internal/webhook/v1/captain_webhook.go")).unwrap();
    for id in [
        "type CaptainDefaulter struct",
        "type CaptainValidator struct",
    ] {
        assert!(hook.contains(id), "{id}: {hook}");
    }
    // A controller created with --controller-name gets its test, like Kubebuilder's.
    let test =
        fs::read_to_string(d.join("internal/controller/captain_controller_test.go")).unwrap();
    assert!(test.contains("&CaptainReconciler{"), "{test}");
    // Manager: the health port is declared; the webhook port is a flag (Kubebuilder v4.16), which
    // the webhook patch sets to the Service's target port.
    let mgr = fs::read_to_string(d.join("config/manager/manager.yaml")).unwrap();
    assert!(
        mgr.contains("- containerPort: 8081\n          name: health\n"),
        "{mgr}"
    );
    let patch = fs::read_to_string(d.join("config/default/manager_webhook_patch.yaml")).unwrap();
    assert!(patch.contains("value: --webhook-port=9443\n"), "{patch}");
    let main = fs::read_to_string(d.join("cmd/main.go")).unwrap();
    assert!(
        main.contains("\"webhook-port\", webhook.DefaultPort"),
        "{main}"
    );
}

/// Every file opbuilder creates is 0644 whatever the umask (a strict one makes a chmod
/// necessary, a lax one must not leave files writable by others), and an edited file keeps
/// the mode it had.
#[cfg(unix)]
#[test]
fn created_files_are_0644_under_any_umask() {
    use std::os::unix::fs::PermissionsExt;
    fn modes(dir: &Path, out: &mut Vec<(String, u32)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                modes(&p, out);
            } else {
                out.push((p.display().to_string(), m.permissions().mode() & 0o7777));
            }
        }
    }
    let bin = assert_cmd::cargo::cargo_bin("opbuilder");
    for umask in ["077", "022", "000"] {
        let t = tempfile::tempdir().unwrap();
        let run = |args: &str| {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("umask {umask} && exec \"$0\" {args}"))
                .arg(&bin)
                .current_dir(t.path())
                .env("OPBUILDER_TEST_VERSION", crate::support::TEST_VERSION)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "umask {umask}: {args}: {}",
                stderr(&out)
            );
        };
        run("init --domain example.com --repo example.com/modes --project-name modes --skip-post-steps");
        fs::set_permissions(t.path().join("Makefile"), fs::Permissions::from_mode(0o600)).unwrap();
        run("create api --group ship --version v1 --kind Frigate --resource --controller --skip-post-steps");
        let mut found = vec![];
        modes(t.path(), &mut found);
        assert!(found.len() > 40, "{found:?}");
        for (path, mode) in found {
            let want = if path.ends_with("/Makefile") {
                0o600
            } else {
                0o644
            };
            assert_eq!(mode, want, "umask {umask}: {path} has mode {mode:o}");
        }
    }
}

#[test]
fn man_pages_and_version_come_from_the_cli_definition() {
    let t = tempfile::tempdir().unwrap();
    let out = opbuilder(t.path()).arg("man").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie") || page.contains("\n.TH opbuilder 1"),
        "{page}"
    );
    for sub in [
        "opbuilder\\-init(1)",
        "opbuilder\\-create(1)",
        "opbuilder\\-man(1)",
    ] {
        assert!(page.contains(sub), "the page lists no {sub}");
    }
    // Both layouts are named (issue 47).
    for layout in ["go/v4", "rust.opbuilder.io/v1\\-beta", "kube\\-rs"] {
        assert!(page.contains(layout), "opbuilder.1 does not name {layout}");
    }
    let dir = t.path().join("share/man/man1");
    let out = opbuilder(t.path())
        .args(["man", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let init = fs::read_to_string(dir.join("opbuilder-init.1")).unwrap();
    assert!(
        init.contains("\\-\\-plugins=rust.opbuilder.io/v1\\-beta \\-\\-domain example.com"),
        "opbuilder-init.1 has no Rust example:\n{init}"
    );
    let api = fs::read_to_string(dir.join("opbuilder-create-api.1")).unwrap();
    for flag in [
        "\\-\\-group",
        "\\-\\-kind",
        "\\-\\-controller\\-name",
        "\\-\\-dry\\-run",
    ] {
        assert!(api.contains(flag), "opbuilder-create-api.1 has no {flag}");
    }
    let version = stdout(&opbuilder(t.path()).arg("--version").output().unwrap());
    assert!(
        version.starts_with("opbuilder ") && version.contains("(Kubebuilder v"),
        "{version}"
    );
    let long = stdout(&opbuilder(t.path()).arg("version").output().unwrap());
    assert!(long.contains("\n  kubebuilder:        v"), "{long}");
    assert!(
        long.contains("layout:             go.kubebuilder.io/v4")
            && long.contains("layout:             rust.opbuilder.io/v1-beta"),
        "{long}"
    );
}

/// A project made by release 0.2.0 and still pinned to its controller-runtime (v0.24) is
/// extended with 0.2.0's templates, so the new code compiles against what go.mod requires:
/// the webhook types keep 0.2.0's names, the note says why and what to run. Raised to the
/// current pins, the same project gets the current templates.
#[test]
fn a_project_still_on_release_0_2_0_pins_is_extended_with_its_templates() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let current_cr = {
        let gomod = fs::read_to_string(d.join("go.mod")).unwrap();
        let line = gomod
            .lines()
            .find(|l| l.contains("sigs.k8s.io/controller-runtime "))
            .unwrap()
            .to_string();
        line.split_whitespace().last().unwrap().to_string()
    };
    assert_ne!(current_cr, "v0.24.1");
    let release_cr = "v0.24.1"; // releases/0.2.0/versions.toml
    let gomod = fs::read_to_string(d.join("go.mod")).unwrap();
    fs::write(d.join("go.mod"), gomod.replace(&current_cr, release_cr)).unwrap();
    let project = fs::read_to_string(d.join("PROJECT")).unwrap();
    let line = project
        .lines()
        .find(|l| l.starts_with("cliVersion: "))
        .unwrap()
        .to_string();
    fs::write(
        d.join("PROJECT"),
        project.replace(&line, "cliVersion: 0.2.0"),
    )
    .unwrap();
    let kind = ["--group", "ship", "--version", "v1", "--kind", "Frigate"];
    let out = api(d, &[&kind[..], &["--resource", "--controller"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let note = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        note.contains("templates of opbuilder 0.2.0") && note.contains("opbuilder alpha update"),
        "{note}"
    );
    let out = webhook(d, &[&kind[..], &["--defaulting"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let hook = fs::read_to_string(d.join("internal/webhook/v1/frigate_webhook.go")).unwrap();
    assert!(
        hook.contains("type FrigateCustomDefaulter struct"),
        "{hook}"
    );
    assert!(!hook.contains("type FrigateDefaulter struct"), "{hook}");
    // 0.2.0's webhook patch has no --webhook-port; the project's main.go (from init) is kept.
    let patch = fs::read_to_string(d.join("config/default/manager_webhook_patch.yaml")).unwrap();
    assert!(!patch.contains("--webhook-port"), "{patch}");
    // Adding validation merges a section that names 0.2.0's type.
    let out = webhook(d, &[&kind[..], &["--programmatic-validation"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let hook = fs::read_to_string(d.join("internal/webhook/v1/frigate_webhook.go")).unwrap();
    assert!(
        hook.contains("WithValidator(&FrigateCustomValidator{})"),
        "{hook}"
    );

    // On the current pins: the current templates and names.
    let gomod = fs::read_to_string(d.join("go.mod")).unwrap();
    fs::write(d.join("go.mod"), gomod.replace(release_cr, &current_cr)).unwrap();
    let kind = ["--group", "ship", "--version", "v1", "--kind", "Cruiser"];
    assert!(
        api(d, &[&kind[..], &["--resource", "--controller"]].concat())
            .status
            .success()
    );
    let out = webhook(d, &[&kind[..], &["--defaulting"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let hook = fs::read_to_string(d.join("internal/webhook/v1/cruiser_webhook.go")).unwrap();
    assert!(hook.contains("type CruiserDefaulter struct"), "{hook}");
}
