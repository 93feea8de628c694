//! `alpha generate`: scaffolding a project again from its PROJECT gives the same project. The
//! property is checked for every golden scenario (e2e/testdata/*/tree is exactly what its
//! `commands` script writes, as e2e/golden.rs checks) and for a project with plugins.

use crate::support::{full_snapshot, opbuilder, snapshot};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn generate(input: &Path, output: &Path) -> std::process::Output {
    opbuilder(input)
        .args(["alpha", "generate", "--output-dir"])
        .arg(output)
        .output()
        .unwrap()
}

/// Files that differ between `want` and `got`, by path.
fn differing(want: &BTreeMap<PathBuf, Vec<u8>>, got: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let mut keys: Vec<&PathBuf> = want.keys().chain(got.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| want.get(*k) != got.get(*k))
        .map(|k| k.display().to_string())
        .collect()
}

fn sorted_lines(b: &[u8]) -> Vec<&str> {
    let mut v: Vec<&str> = std::str::from_utf8(b).unwrap().lines().collect();
    v.sort();
    v
}

/// Scenarios whose scripts add webhooks in an order PROJECT cannot tell (it lists resources, not
/// commands): there the wiring blocks may come out in another order, and only in these files.
const ORDER_ONLY: &[(&str, &[&str])] = &[("multigroup", &["cmd/main.go", "test/e2e/e2e_test.go"])];

#[test]
fn generate_of_every_golden_tree_is_the_tree() {
    let scenarios = crate::support::script_dirs("testdata");
    assert!(scenarios.len() >= 4, "{scenarios:?}");
    for dir in scenarios {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let tree = dir.join("tree");
        let out = tempfile::tempdir().unwrap();
        let target = out.path().join(&name);
        let before = full_snapshot(&tree);
        let res = generate(&tree, &target);
        assert!(
            res.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&res.stderr)
        );
        assert_eq!(before, full_snapshot(&tree), "{name}: the input changed");
        let (want, got) = (snapshot(&tree), snapshot(&target));
        let diff = differing(&want, &got);
        let allowed: &[&str] = ORDER_ONLY
            .iter()
            .find(|(s, _)| *s == name)
            .map_or(&[], |(_, f)| f);
        for f in &diff {
            assert!(
                allowed.contains(&f.as_str()),
                "{name}: {f} differs after alpha generate"
            );
            let p = Path::new(f);
            assert_eq!(
                sorted_lines(&want[p]),
                sorted_lines(&got[p]),
                "{name}: {f} differs in more than the order of its lines"
            );
        }
    }
}

#[test]
fn generate_replays_plugins_and_the_users_grafana_config() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    fs::create_dir(&src).unwrap();
    let run = |args: &[&str]| {
        let o = opbuilder(&src).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(&[
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/x",
        "--project-name",
        "x",
        "--namespaced",
        "--license",
        "copyright",
        "--owner",
        "Acme",
        "--skip-post-steps",
    ]);
    run(&[
        "create",
        "api",
        "--group",
        "crew",
        "--version",
        "v1",
        "--kind",
        "Captain",
        "--plural",
        "captainz",
        "--resource",
        "--controller",
        "--skip-post-steps",
    ]);
    // (PROJECT does not record command order: named controllers are replayed after the others.)
    run(&[
        "create",
        "api",
        "--group",
        "cert-manager",
        "--version",
        "v1",
        "--kind",
        "Certificate",
        "--resource=false",
        "--controller",
        "--external-api-path",
        "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
        "--external-api-domain",
        "io",
        "--external-api-module",
        "github.com/cert-manager/cert-manager@v1.20.2",
        "--skip-post-steps",
    ]);
    run(&[
        "create",
        "api",
        "--group",
        "crew",
        "--version",
        "v1",
        "--kind",
        "Captain",
        "--resource=false",
        "--controller",
        "--controller-name",
        "captain-backup",
        "--skip-post-steps",
    ]);
    run(&[
        "create",
        "webhook",
        "--group",
        "crew",
        "--version",
        "v1",
        "--kind",
        "Captain",
        "--plural",
        "captainz",
        "--defaulting",
        "--programmatic-validation",
        "--validation-path",
        "/v-captain",
        "--skip-post-steps",
    ]);
    run(&["edit", "--plugins=grafana.kubebuilder.io/v1-alpha"]);
    fs::write(
        src.join("grafana/custom-metrics/config.yaml"),
        "customMetrics:\n  - metric: orders_total\n    type: counter\n",
    )
    .unwrap();
    run(&["edit", "--plugins=grafana.kubebuilder.io/v1-alpha"]);
    run(&["edit", "--plugins=autoupdate/v1-alpha"]);
    assert!(src
        .join("grafana/custom-metrics/custom-metrics-dashboard.json")
        .is_file());

    let out = t.path().join("out");
    let res = generate(&src, &out);
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let diff = differing(&snapshot(&src), &snapshot(&out));
    assert!(diff.is_empty(), "differ after alpha generate: {diff:?}");
}

#[test]
fn generate_never_writes_over_anything() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    fs::create_dir(&src).unwrap();
    let o = opbuilder(&src)
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
        .output()
        .unwrap();
    assert!(o.status.success());
    // No output directory and no --in-place: a usage error.
    let before = full_snapshot(t.path());
    let o = opbuilder(&src)
        .args(["alpha", "generate"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--output-dir") && err.contains("--in-place"),
        "{err}"
    );
    // An input directory without PROJECT: a usage error naming the flag.
    let o = opbuilder(t.path())
        .args(["alpha", "generate", "--input-dir", ".", "--output-dir", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--input-dir"));
    assert!(!t.path().join("x").exists());
    // A non-empty output directory is refused.
    let busy = t.path().join("busy");
    fs::create_dir(&busy).unwrap();
    fs::write(busy.join("keep.txt"), "mine").unwrap();
    let before_busy = full_snapshot(t.path());
    let o = generate(&src, &busy);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not empty"));
    assert_eq!(before_busy, full_snapshot(t.path()));
    drop(before);

    // In place: the new tree replaces the old one, which is kept whole as a backup.
    fs::write(src.join("notes.txt"), "user file").unwrap();
    fs::create_dir(src.join(".git")).unwrap();
    fs::write(src.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let old = snapshot(&src);
    let o = opbuilder(&src)
        .args(["alpha", "generate", "--in-place"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let backup = t.path().join("src.backup-1");
    let mut kept = snapshot(&backup);
    kept.extend(
        snapshot(&src)
            .into_iter()
            .filter(|(p, _)| p.starts_with(".git")),
    );
    assert_eq!(
        kept, old,
        "the backup plus the moved .git hold every old file"
    );
    assert!(!src.join("notes.txt").exists());
    assert!(
        src.join(".git/HEAD").is_file(),
        "history stays with the project"
    );
    assert!(src.join("PROJECT").is_file() && src.join("Makefile").is_file());
}

#[test]
fn generate_keeps_projects_resource_order() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    fs::create_dir(&src).unwrap();
    for args in [
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--multigroup",
            "--skip-post-steps",
        ][..],
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--defaulting",
            "--skip-post-steps",
        ],
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--resource",
            "--controller",
            "--skip-post-steps",
        ],
    ] {
        let o = opbuilder(&src).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let out = t.path().join("out");
    assert!(generate(&src, &out).status.success());
    let (want, got) = (snapshot(&src), snapshot(&out));
    // The webhook-only Pod stays first in PROJECT although webhooks are replayed after the
    // types, and cmd/main.go, which wires the webhook above the controller, tells the replay to
    // create the webhook first: the same tree.
    assert_eq!(
        String::from_utf8_lossy(&want[Path::new("PROJECT")]),
        String::from_utf8_lossy(&got[Path::new("PROJECT")])
    );
    assert_eq!(differing(&want, &got), Vec::<String>::new());
}

/// The replay creates each webhook where cmd/main.go shows it was created: a type's webhook
/// right after the type, before the next type, as a user often works.
#[test]
fn generate_replays_webhooks_in_the_order_main_go_wires_them() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    fs::create_dir(&src).unwrap();
    fn gvk(kind: &str) -> [&str; 6] {
        ["--group", "crew", "--version", "v1", "--kind", kind]
    }
    let run = |args: Vec<&str>| {
        let o = opbuilder(&src)
            .args(&args)
            .arg("--skip-post-steps")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(vec![
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/x",
        "--project-name",
        "x",
    ]);
    for kind in ["Captain", "Sailor"] {
        let mut api = vec!["create", "api"];
        api.extend(gvk(kind));
        api.extend(["--resource", "--controller"]);
        run(api);
        let mut webhook = vec!["create", "webhook"];
        webhook.extend(gvk(kind));
        webhook.push("--defaulting");
        run(webhook);
    }
    let out = t.path().join("out");
    assert!(generate(&src, &out).status.success());
    let (want, got) = (snapshot(&src), snapshot(&out));
    let main = Path::new("cmd/main.go");
    let text = String::from_utf8_lossy(&want[main]).to_string();
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(
        at("SetupCaptainWebhookWithManager(") < at("SailorReconciler{"),
        "the project wires the Captain webhook before the Sailor controller:\n{text}"
    );
    assert_eq!(differing(&want, &got), Vec::<String>::new());
}

/// The helm plugin replays from the input's manifests file, copied as it is (no make).
#[test]
fn generate_replays_the_helm_chart_from_the_manifests() {
    for (manifests, extra) in [
        ("dist/install.yaml", &["--skip-build-installer"][..]),
        ("m.yaml", &["--manifests=m.yaml", "--output-dir=charts"][..]),
    ] {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        fs::create_dir(&src).unwrap();
        let run = |args: &[&str]| {
            let o = opbuilder(&src).args(args).output().unwrap();
            assert!(
                o.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        run(&[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--skip-post-steps",
        ]);
        run(&[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1beta1",
            "--kind",
            "Frigate",
            "--resource",
            "--controller",
            "--skip-post-steps",
        ]);
        fs::create_dir_all(src.join(manifests).parent().unwrap()).unwrap();
        fs::write(
            src.join(manifests),
            include_str!("fixtures/helm/install-webhooks.yaml"),
        )
        .unwrap();
        let mut args = vec!["edit", "--plugins=helm.kubebuilder.io/v2-alpha"];
        args.extend_from_slice(extra);
        run(&args);
        let chart_dir = if manifests == "m.yaml" {
            "charts"
        } else {
            "dist"
        };
        assert!(src.join(chart_dir).join("chart/values.yaml").is_file());

        let out = t.path().join("out");
        let res = generate(&src, &out);
        assert!(
            res.status.success(),
            "{}",
            String::from_utf8_lossy(&res.stderr)
        );
        let diff = differing(&snapshot(&src), &snapshot(&out));
        assert!(
            diff.is_empty(),
            "{manifests}: differ after alpha generate: {diff:?}"
        );
    }
}
