//! PROJECT files as people keep them (issue 45): each fixture under e2e/fixtures/shapes/ is a
//! PROJECT of a shape real projects have (written for these tests), and each test runs `create
//! api`, `create webhook`, `edit` and `alpha generate` in a project with that PROJECT. They do
//! what Kubebuilder v4.16 does with it, or refuse with a precise reason where Kubebuilder fails;
//! docs/commands.md ("Projects opbuilder did not make") lists where opbuilder does better on
//! purpose.
//!
//! The trees the Go of these shapes must build in are kept when `OPBUILDER_SHAPES_OUT` names a
//! directory: e2e/scripts/shapes.sh (the `shapes` stage of e2e/run.sh) builds and vets them.

use crate::support::{full_snapshot, ok, opbuilder, read, refused, run, text, TEST_VERSION};
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("e2e/fixtures/shapes")
        .join(name)
}

fn fixture_project(name: &str) -> String {
    fs::read_to_string(fixture(name).join("PROJECT")).unwrap()
}

/// A project for the fixture `name`: its PROJECT (changed by `edit`, for a shape alpha
/// generate refuses) scaffolded again by `alpha generate`, then the fixture's own PROJECT put
/// back, and the types of a resource whose path is not where go/v4 puts them moved there (with
/// the imports that name them).
fn tree(name: &str, edit: impl Fn(&str) -> String) -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let input = t.path().join("input");
    fs::create_dir(&input).unwrap();
    let original = fixture_project(name);
    fs::write(input.join("PROJECT"), edit(&original)).unwrap();
    let dir = t.path().join("harbor");
    let out = opbuilder(&input)
        .args(["alpha", "generate", "--output-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    fs::remove_dir_all(&input).unwrap();
    fs::write(dir.join("PROJECT"), &original).unwrap();
    let repo = "github.com/tugboat/harbor";
    for line in original.lines() {
        let Some(path) = line.trim().strip_prefix("path: ") else {
            continue;
        };
        let Some(rel) = path.strip_prefix(&format!("{repo}/")) else {
            continue;
        };
        // pkg/apis/<group>/<version>: generated as api/<group>/<version>.
        if let Some(gv) = rel.strip_prefix("pkg/apis/") {
            let from = dir.join("api").join(gv);
            fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
            fs::rename(&from, dir.join(rel)).unwrap();
            replace_in_go(&dir, &format!("{repo}/api/{gv}\""), &format!("{path}\""));
        }
    }
    (t, dir)
}

/// Replace `from` with `to` in every .go file under `dir`.
fn replace_in_go(dir: &Path, from: &str, to: &str) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            replace_in_go(&p, from, to);
        } else if p.extension().is_some_and(|x| x == "go") {
            let s = fs::read_to_string(&p).unwrap();
            if s.contains(from) {
                fs::write(&p, gofmt_imports(&s.replace(from, to))).unwrap();
            }
        }
    }
}

/// `text` with each run of import lines sorted by path, as gofmt sorts them (as the user who
/// moved the types would have left them).
fn gofmt_imports(text: &str) -> String {
    let path = |l: &str| l.split('"').nth(1).map(str::to_string);
    let is_spec = |l: &str| l.starts_with('\t') && l.trim_end().ends_with('"') && path(l).is_some();
    let mut out: Vec<String> = vec![];
    let mut run: Vec<&str> = vec![];
    let flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        run.sort_by_key(|l| path(l));
        out.extend(run.drain(..).map(String::from));
    };
    for line in text.lines() {
        if is_spec(line) {
            run.push(line);
        } else {
            flush(&mut run, &mut out);
            out.push(line.to_string());
        }
    }
    flush(&mut run, &mut out);
    out.join("\n") + "\n"
}

/// Keep `dir` as `$OPBUILDER_SHAPES_OUT/<name>` for the Go build of the `shapes` stage.
fn keep(dir: &Path, name: &str) {
    let Some(out) = std::env::var_os("OPBUILDER_SHAPES_OUT") else {
        return;
    };
    let to = Path::new(&out).join(name);
    let _ = fs::remove_dir_all(&to);
    fs::create_dir_all(&to).unwrap();
    crate::support::copy_tree(dir, &to);
}

/// `alpha generate` of `input` into a new directory beside it: that directory and stderr.
fn generate(input: &Path) -> (PathBuf, String) {
    let out = input.parent().unwrap().join("generated");
    let res = opbuilder(input)
        .args(["alpha", "generate", "--output-dir"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(res.status.success(), "{}", text(&res.stderr));
    (out, text(&res.stderr))
}

fn no_post(args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.push("--skip-post-steps".into());
    v
}

fn ok_np(dir: &Path, args: &[&str]) -> String {
    let v = no_post(args);
    let v: Vec<&str> = v.iter().map(String::as_str).collect();
    ok(dir, &v)
}

const KUBEBUILDER_HEADER: &str = "# Code generated by tool. DO NOT EDIT.
# This file is used to track the info used to scaffold your project
# and allow the plugins properly work.
# More info: https://book.kubebuilder.io/reference/project-config.html
";

#[test]
fn kubebuilders_header_and_cli_version_stay_when_extending() {
    let (_t, d) = tree("kubebuilder-header", str::to_string);
    for args in [
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v2",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ][..],
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--defaulting",
        ],
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--resource=false",
            "--controller",
            "--controller-name",
            "berth-audit",
        ],
        &["edit", "--namespaced"],
    ] {
        if args[0] == "edit" {
            ok(&d, args);
        } else {
            ok_np(&d, args);
        }
        let p = read(&d, "PROJECT");
        // As Kubebuilder v4.16: its header, and the cliVersion of the release that made it.
        assert!(p.starts_with(KUBEBUILDER_HEADER), "{args:?}:\n{p}");
        assert!(!p.contains("opbuilder"), "{args:?}:\n{p}");
        assert!(p.contains("\ncliVersion: 4.13.1\n"), "{args:?}:\n{p}");
    }
    // alpha generate makes a project of its own (its cliVersion), with the header it read.
    let (g, _) = generate(&d);
    let p = read(&g, "PROJECT");
    assert!(p.starts_with(KUBEBUILDER_HEADER), "{p}");
    assert!(
        p.contains(&format!("\ncliVersion: {TEST_VERSION}\n")),
        "{p}"
    );
}

#[test]
fn a_hand_kept_project_is_read_and_written_in_kubebuilders_shape() {
    // Comments, `layout` as one string, indented list items, keys in any order, no final
    // newline, `plugins: []`, `componentConfig`, `cliVersion: v4.15.0`.
    let (_t, d) = tree("hand-kept", |p| p.replace("plugins: []\n", ""));
    ok_np(
        &d,
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v2",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ],
    );
    // What Kubebuilder v4.16 writes (its own header aside), except: `plugins: []`, which it
    // cannot read at all, is dropped; `componentConfig`, which it drops, is kept (opbuilder keeps
    // the keys it does not model); the comment lines the file starts with are its header.
    assert_eq!(
        read(&d, "PROJECT"),
        "# This project started with kubebuilder v4.15; the file was tidied by hand since.
cliVersion: v4.15.0
componentConfig: true
domain: tugboat.io
layout:
- go.kubebuilder.io/v4
projectName: harbor
repo: github.com/tugboat/harbor
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: tugboat.io
  group: dock
  kind: Berth
  path: github.com/tugboat/harbor/api/v1
  version: v1
- api:
    crdVersion: v1
    namespaced: true
  domain: tugboat.io
  group: dock
  kind: Berth
  path: github.com/tugboat/harbor/api/v2
  version: v2
version: \"3\"
"
    );
    fs::write(d.join("PROJECT"), fixture_project("hand-kept")).unwrap();
    ok_np(
        &d,
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--programmatic-validation",
        ],
    );
    assert!(read(&d, "cmd/main.go").contains("webhookv1.SetupBerthWebhookWithManager(mgr)"));
    fs::write(d.join("PROJECT"), fixture_project("hand-kept")).unwrap();
    ok(&d, &["edit", "--multigroup"]);
    let p = read(&d, "PROJECT");
    assert!(
        p.contains("\nmultigroup: true\n") && !p.contains("plugins"),
        "{p}"
    );
    // alpha generate: componentConfig is not carried (go/v4 has none), and a note says so.
    fs::write(d.join("PROJECT"), fixture_project("hand-kept")).unwrap();
    let (g, err) = generate(&d);
    assert!(err.contains("componentConfig is not carried"), "{err}");
    let p = read(&g, "PROJECT");
    assert!(
        !p.contains("componentConfig") && p.contains("layout:\n- go.kubebuilder.io/v4\n"),
        "{p}"
    );
}

/// Each group's kind in the groups fixture, and whether its types are this project's.
const KINDS: &[(&str, &str)] = &[
    ("", "Berth"),
    ("cargo.hold", "Crate"),
    ("x", "Buoy"),
    ("import", "Manifest"),
    ("core", "Anchor"),
    ("apps", "Crane"),
    ("pilot", "Tug"),
    ("legacy", "Lighthouse"),
];

#[test]
fn groups_of_every_shape_are_extended_where_their_types_are() {
    let (_t, d) = tree("groups", str::to_string);
    keep(&d, "groups-generated");
    let repo = "github.com/tugboat/harbor";
    // The types of a crdVersion Kubebuilder no longer makes, scaffolded again (before the
    // conversion below marks them as the storage version): Kubebuilder refuses
    // ("CRD versions do not match"); opbuilder says the CRD is v1 and records it.
    let err = ok_np(
        &d,
        &[
            "create",
            "api",
            "--group=x",
            "--version",
            "v1",
            "--kind",
            "Buoy",
            "--plural",
            "buoyz",
            "--resource",
            "--controller=false",
            "--force",
        ],
    );
    assert!(err.contains("crdVersion v1alpha1"), "{err}");
    let p: serde_yaml::Value = serde_yaml::from_str(&read(&d, "PROJECT")).unwrap();
    let buoy = p["resources"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Buoy" && r["version"] == "v1")
        .unwrap();
    assert_eq!(buoy["api"]["crdVersion"], "v1");
    assert_eq!(buoy["plural"], "buoyz");
    // In every group: a second version, and webhooks of every type on the first, which turns
    // the hub (storage) version of a conversion to the second.
    for (group, kind) in KINDS {
        let g = format!("--group={group}");
        // (A kind's irregular plural is given again for its new version, as in Kubebuilder.)
        let mut api = vec!["create", "api", &g, "--version", "v2", "--kind", kind];
        if *kind == "Buoy" {
            api.push("--plural=buoyz");
        }
        api.extend(["--resource", "--controller=false"]);
        ok_np(&d, &api);
        ok_np(
            &d,
            &[
                "create",
                "webhook",
                &g,
                "--version",
                "v1",
                "--kind",
                kind,
                "--defaulting",
                "--programmatic-validation",
                "--conversion",
                "--spoke",
                "v2",
            ],
        );
    }
    // A kind without group in a multigroup project: its webhook package is internal/webhook/v1,
    // imported as webhookv1 (as Kubebuilder does) and set up by that name.
    let main = read(&d, "cmd/main.go");
    assert!(
        main.contains(&format!("\twebhookv1 \"{repo}/internal/webhook/v1\"\n"))
            && main.contains("webhookv1.SetupBerthWebhookWithManager(mgr)"),
        "{main}"
    );
    // A webhook of a type whose path is not go/v4's imports it from its path (Kubebuilder
    // refuses: "non-matching Path").
    let hook = read(&d, "internal/webhook/legacy/v1/lighthouse_webhook.go");
    assert!(
        hook.contains(&format!("legacyv1 \"{repo}/pkg/apis/legacy/v1\"")),
        "{hook}"
    );
    // Its conversion: the hub is where the types are, and the spoke imports it from there.
    assert!(d
        .join("pkg/apis/legacy/v1/lighthouse_conversion.go")
        .is_file());
    assert!(!d.join("api/legacy/v1").exists());
    let spoke = read(&d, "api/legacy/v2/lighthouse_conversion.go");
    assert!(
        spoke.contains(&format!("legacyv1 \"{repo}/pkg/apis/legacy/v1\"")),
        "{spoke}"
    );
    // So does a second controller of it (Kubebuilder too).
    ok_np(
        &d,
        &[
            "create",
            "api",
            "--group=legacy",
            "--version",
            "v1",
            "--kind",
            "Lighthouse",
            "--resource=false",
            "--controller",
            "--controller-name",
            "beacon",
        ],
    );
    let c = read(&d, "internal/controller/legacy/beacon_controller.go");
    assert!(
        c.contains(&format!("legacyv1 \"{repo}/pkg/apis/legacy/v1\"")),
        "{c}"
    );
    // Scaffolding those types again where go/v4 puts them would leave two packages of them.
    refused(
        &d,
        &no_post(&[
            "create",
            "api",
            "--group=legacy",
            "--version",
            "v1",
            "--kind",
            "Lighthouse",
            "--resource",
            "--controller=false",
            "--force",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
        1,
        &[
            &format!("{repo}/pkg/apis/legacy/v1 (PROJECT's path)"),
            "api/legacy/v1",
        ],
    );
    // An entry without domain or path (project version 3-alpha): its types are this project's,
    // in its domain (Kubebuilder writes an empty import path for its controller and the group
    // without the domain in the webhook's markers).
    let hook = read(&d, "internal/webhook/pilot/v1/tug_webhook.go");
    assert!(
        hook.contains(&format!("pilotv1 \"{repo}/api/pilot/v1\"")),
        "{hook}"
    );
    assert!(hook.contains("groups=pilot.tugboat.io,"), "{hook}");
    let p: serde_yaml::Value = serde_yaml::from_str(&read(&d, "PROJECT")).unwrap();
    let tug = p["resources"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Tug" && r["version"] == "v1")
        .unwrap();
    assert_eq!(tug["domain"], "tugboat.io");
    assert_eq!(tug["path"], format!("{repo}/api/pilot/v1").as_str());
    // Groups named core and apps in this project's domain are this project's, not Kubernetes'.
    let hook = read(&d, "internal/webhook/core/v1/anchor_webhook.go");
    assert!(
        hook.contains(&format!("corev1 \"{repo}/api/core/v1\""))
            && hook.contains("groups=core.tugboat.io,"),
        "{hook}"
    );
    // A Go keyword group's controllers are a package of another name (Kubebuilder's is
    // `package import`, which does not compile).
    let c = read(&d, "internal/controller/import/manifest_controller.go");
    assert!(c.starts_with("package importcontroller\n"), "{c}");
    assert!(read(&d, "cmd/main.go").contains(&format!(
        "importcontroller \"{repo}/internal/controller/import\""
    )));
    keep(&d, "groups-extended");
}

#[test]
fn a_lower_case_kind_is_refused_naming_the_fix() {
    let (_t, d) = tree("lower-kind", |p| p.replace("kind: berth", "kind: Berth"));
    let fix = "write `kind: Berth` in PROJECT";
    // Kubebuilder: "no API found" and "invalid Kind"; both refuse, opbuilder says why.
    refused(
        &d,
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--defaulting",
        ],
        1,
        &["\"berth\"", fix],
    );
    refused(
        &d,
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "berth",
            "--defaulting",
        ],
        2,
        &["--kind", fix],
    );
    refused(
        &d,
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ],
        1,
        &[fix],
    );
    // What does not touch the kind works, as in Kubebuilder.
    ok(&d, &["edit", "--multigroup"]);
    // alpha generate refuses before it makes anything.
    let out = d.parent().unwrap().join("generated");
    let res = opbuilder(&d)
        .args(["alpha", "generate", "--output-dir"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(res.status.code(), Some(1), "{}", text(&res.stderr));
    assert!(text(&res.stderr).contains(fix), "{}", text(&res.stderr));
    assert!(!out.exists());
}

#[test]
fn a_repo_that_is_not_the_module_is_refused_before_anything_is_written() {
    let (_t, d) = tree("repo-git", str::to_string);
    // As a clone URL copied into PROJECT: go.mod names the module without `.git`.
    let gomod = read(&d, "go.mod").replace(
        "module github.com/tugboat/harbor.git\n",
        "module github.com/tugboat/harbor\n",
    );
    fs::write(d.join("go.mod"), gomod).unwrap();
    // Kubebuilder writes imports of github.com/tugboat/harbor.git/... that do not build.
    let fix = "Set `repo: github.com/tugboat/harbor` in PROJECT";
    for args in [
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v2",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ][..],
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--defaulting",
        ],
    ] {
        refused(&d, args, 1, &["github.com/tugboat/harbor.git", fix]);
    }
    ok(&d, &["edit", "--multigroup"]);
    // When go.mod's module ends in .git too, the imports build: the commands run.
    let gomod = read(&d, "go.mod").replace(
        "module github.com/tugboat/harbor\n",
        "module github.com/tugboat/harbor.git\n",
    );
    fs::write(d.join("go.mod"), gomod).unwrap();
    ok_np(
        &d,
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--defaulting",
        ],
    );
    assert!(read(&d, "internal/webhook/dock/v1/berth_webhook.go")
        .contains("\"github.com/tugboat/harbor.git/api/v1\""));
}

#[test]
fn helm_v1_alpha_is_not_run_and_one_warning_says_what_replaces_it() {
    let (_t, d) = tree("helm-v1", |p| {
        p.replace("- helm.kubebuilder.io/v1-alpha\n", "")
            .replace("plugins:\n  helm.kubebuilder.io/v1-alpha: {}\n", "")
    });
    let once = |err: &str| {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("helm.kubebuilder.io/v1-alpha"))
            .collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(
            lines[0].starts_with("warning: ")
                && lines[0].contains("`opbuilder edit --plugins=helm/v2-alpha` replaces it"),
            "{err}"
        );
    };
    // Kubebuilder v4.16 runs these (v1-alpha has edit only, and on edit it writes its chart).
    once(&ok_np(
        &d,
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v2",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ],
    ));
    once(&ok_np(
        &d,
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--defaulting",
        ],
    ));
    once(&ok(&d, &["edit", "--multigroup"]));
    assert!(
        !d.join("dist").exists(),
        "the v1-alpha chart is not written"
    );
    let p = crate::support::project_yaml(&d);
    assert_eq!(p["layout"][1], "helm.kubebuilder.io/v1-alpha", "kept");
    assert!(
        p["plugins"]["helm.kubebuilder.io/v1-alpha"].is_mapping(),
        "kept"
    );
    // alpha generate leaves it out, saying so.
    let (g, err) = generate(&d);
    assert!(
        err.contains("helm.kubebuilder.io/v1-alpha (deprecated) was not replayed"),
        "{err}"
    );
    assert!(!read(&g, "PROJECT").contains("helm"));
    // helm/v2-alpha replaces it: in the layout too (where Kubebuilder leaves it).
    let install = include_str!("fixtures/helm/install.yaml").replace("x-", "harbor-");
    fs::write(d.join("install.yaml"), install).unwrap();
    ok(
        &d,
        &[
            "edit",
            "--plugins=helm/v2-alpha",
            "--manifests=install.yaml",
            "--skip-build-installer",
        ],
    );
    let p = crate::support::project_yaml(&d);
    assert_eq!(
        p["layout"],
        serde_yaml::from_str::<serde_yaml::Value>("[go.kubebuilder.io/v4]").unwrap()
    );
    assert!(p["plugins"].get("helm.kubebuilder.io/v1-alpha").is_none());
    let err = ok_np(
        &d,
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v3",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ],
    );
    assert!(!err.contains("v1-alpha"), "{err}");
}

#[test]
fn the_operator_sdks_bundle_records_are_kept_and_warned_about_once() {
    let (_t, d) = tree("sdk-bundle", str::to_string);
    let keys = "the plugins manifests.sdk.operatorframework.io/v2 and scorecard.sdk.operatorframework.io/v2,";
    for args in [
        &[
            "create",
            "api",
            "--group",
            "dock",
            "--version",
            "v2",
            "--kind",
            "Berth",
            "--resource",
            "--controller=false",
        ][..],
        &[
            "create",
            "webhook",
            "--group",
            "dock",
            "--version",
            "v1",
            "--kind",
            "Berth",
            "--defaulting",
        ],
    ] {
        let err = ok_np(&d, args);
        assert_eq!(err.matches("sdk.operatorframework.io").count(), 2, "{err}");
        assert!(err.contains(keys) && err.contains("make bundle"), "{err}");
    }
    let err = ok(&d, &["edit", "--multigroup"]);
    assert!(err.contains(keys), "{err}");
    let p = crate::support::project_yaml(&d);
    assert!(p["plugins"]["manifests.sdk.operatorframework.io/v2"].is_mapping());
    assert!(p["plugins"]["scorecard.sdk.operatorframework.io/v2"].is_mapping());
    // alpha generate proceeds and keeps the records (Kubebuilder drops them), saying once that
    // their files are to be copied over.
    let (g, err) = generate(&d);
    assert_eq!(
        err.matches("manifests.sdk.operatorframework.io/v2").count(),
        1,
        "{err}"
    );
    assert!(err.contains("copy them over"), "{err}");
    let p = crate::support::project_yaml(&g);
    assert!(p["plugins"]["manifests.sdk.operatorframework.io/v2"].is_mapping());
    assert!(p["plugins"]["scorecard.sdk.operatorframework.io/v2"].is_mapping());
    assert!(g
        .join("internal/webhook/dock/v1/berth_webhook.go")
        .is_file());
}

#[test]
fn the_operator_sdks_helm_and_ansible_layouts_are_refused_before_anything_is_written() {
    for (name, what) in [("sdk-helm", "Helm chart"), ("sdk-ansible", "Ansible roles")] {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("nginx");
        fs::create_dir(&d).unwrap();
        fs::copy(fixture(name).join("PROJECT"), d.join("PROJECT")).unwrap();
        let layout = format!("{}.sdk.operatorframework.io/v1", &name[4..]);
        let needles = [layout.as_str(), what, "Go (go/v4"];
        for args in [
            &[
                "create",
                "api",
                "--group",
                "dock",
                "--version",
                "v1",
                "--kind",
                "Pier",
            ][..],
            &[
                "create",
                "api",
                "--group",
                "dock",
                "--version",
                "v1",
                "--kind",
                "Pier",
                "--plugins=go/v4",
            ],
            &[
                "create",
                "webhook",
                "--group",
                "dock",
                "--version",
                "v1alpha1",
                "--kind",
                "Berth",
                "--defaulting",
            ],
            &["edit", "--multigroup"],
            &["alpha", "generate", "--output-dir", "../out"],
        ] {
            refused(&d, args, 2, &needles);
        }
        assert!(!t.path().join("out").exists(), "{name}");
    }
}

/// The go-v3 fixture (main.go at the root, controllers/, apis/) with its layout set to `key`.
fn earlier_layout(key: &str) -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("harbor");
    fs::create_dir(&d).unwrap();
    crate::support::copy_tree(&fixture("go-v3"), &d);
    let p = read(&d, "PROJECT").replace("go.kubebuilder.io/v3", key);
    fs::write(d.join("PROJECT"), p).unwrap();
    (t, d)
}

#[test]
fn earlier_go_layouts_are_scaffolded_again_as_go_v4() {
    for key in [
        "go.kubebuilder.io/v2",
        "go.kubebuilder.io/v3",
        "go.kubebuilder.io/v3-alpha",
        "go.kubebuilder.io/v4-alpha",
    ] {
        let (_t, d) = earlier_layout(key);
        // Kubebuilder v4.16 knows none of them but in alpha generate.
        refused(
            &d,
            &[
                "create",
                "api",
                "--group",
                "crew",
                "--version",
                "v2",
                "--kind",
                "Captain",
            ],
            1,
            &[key, "opbuilder alpha generate --output-dir"],
        );
        refused(&d, &["edit", "--plugins", key], 2, &[key, "alpha generate"]);
        // alpha generate reads it as go/v4 (go/v4-alpha is not taken for an external plugin).
        let (g, err) = generate(&d);
        assert!(
            err.contains(&format!(
                "PROJECT's layout {key} is of earlier Kubebuilder releases"
            )),
            "{key}: {err}"
        );
        for moved in [
            "main.go -> cmd/main.go",
            "controllers/ -> internal/controller/",
            "apis/crew/v1/ -> api/crew/v1/ (github.com/tugboat/harbor/api/crew/v1)",
            "apis/crew/v1/captain_webhook.go -> internal/webhook/crew/v1/captain_webhook.go",
            "Copy your code into the new places",
        ] {
            assert!(err.contains(moved), "{key}: {moved}:\n{err}");
        }
        assert!(err.contains("componentConfig is not carried"), "{err}");
        let p = crate::support::project_yaml(&g);
        assert_eq!(
            p["layout"],
            serde_yaml::from_str::<serde_yaml::Value>("[go.kubebuilder.io/v4]").unwrap(),
            "{key}"
        );
        assert_eq!(
            p["resources"][0]["path"],
            "github.com/tugboat/harbor/api/crew/v1"
        );
        for f in [
            "cmd/main.go",
            "api/crew/v1/captain_types.go",
            "internal/controller/crew/captain_controller.go",
            "internal/webhook/crew/v1/captain_webhook.go",
        ] {
            assert!(g.join(f).is_file(), "{key}: {f}");
        }
    }
}

#[test]
fn a_refused_generate_leaves_no_directory_behind() {
    // The replay fails at its second command (the group is not a DNS subdomain), after `init`
    // wrote its files: what it made goes again.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("harbor");
    fs::create_dir(&d).unwrap();
    let bad = fixture_project("kubebuilder-header").replace("group: dock", "group: Dock_Yard");
    fs::write(d.join("PROJECT"), bad).unwrap();
    for out in [t.path().join("new"), t.path().join("empty")] {
        let existed = out.ends_with("empty");
        if existed {
            fs::create_dir(&out).unwrap();
        }
        let res = run(
            &d,
            &["alpha", "generate", "--output-dir", out.to_str().unwrap()],
        );
        assert!(!res.status.success());
        assert!(
            text(&res.stderr).contains("Dock_Yard"),
            "{}",
            text(&res.stderr)
        );
        assert_eq!(out.exists(), existed);
        if existed {
            assert!(
                full_snapshot(&out).is_empty(),
                "the empty directory stays empty"
            );
        }
    }
}
