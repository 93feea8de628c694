//! Plugin keys and chains: what `--plugins` accepts, what PROJECT records, and that a plugin
//! opbuilder cannot run is named, never ignored.

use crate::support::{full_snapshot, ok, opbuilder, project_yaml as project, refused, run};
use std::fs;
use std::path::Path;

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
    // What kubebuilder v4.16 records for the same --plugins values.
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

    // In PROJECT's layout: helm/v1-alpha is left out of the chain (Kubebuilder v4.16 runs
    // create api there: v1-alpha has no create api), and one warning says what replaces it.
    let text = fs::read_to_string(d.join("PROJECT")).unwrap();
    let with_helm = text.replace(
        "- go.kubebuilder.io/v4\n",
        "- go.kubebuilder.io/v4\n- helm.kubebuilder.io/v1-alpha\n",
    );
    assert_ne!(text, with_helm);
    fs::write(d.join("PROJECT"), &with_helm).unwrap();
    let err = ok(d, API);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("helm.kubebuilder.io/v1-alpha"))
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("edit --plugins=helm/v2-alpha"), "{err}");
    assert_eq!(
        layout(d),
        ["go.kubebuilder.io/v4", "helm.kubebuilder.io/v1-alpha"],
        "the layout is kept"
    );
    // In a layout, an unknown key still stops the command (exit 1), saying how to run go/v4 alone.
    let unknown = text.replace(
        "- go.kubebuilder.io/v4\n",
        "- go.kubebuilder.io/v4\n- my.example.com/v1\n",
    );
    fs::write(d.join("PROJECT"), &unknown).unwrap();
    let mut other = API.to_vec();
    other[5] = "v2";
    refused(d, &other, 1, &["my.example.com/v1", "--plugins=go/v4"]);
    fs::write(d.join("PROJECT"), &with_helm).unwrap();

    // In PROJECT's plugins section: kept, and a warning says it is not updated.
    let text = fs::read_to_string(d.join("PROJECT"))
        .unwrap()
        .replace("- helm.kubebuilder.io/v1-alpha\n", "");
    let with_section = text.replace(
        "projectName:",
        "plugins:\n  helm.kubebuilder.io/v1-alpha: {}\n  acme.example.com/v1:\n    x: 1\nprojectName:",
    );
    fs::write(d.join("PROJECT"), &with_section).unwrap();
    let err = ok(d, &["edit", "--multigroup"]);
    assert!(
        err.contains("warning") && err.contains("helm.kubebuilder.io/v1-alpha"),
        "{err}"
    );
    assert!(err.contains("acme.example.com/v1"), "{err}");
    let p = project(d);
    assert_eq!(
        p["plugins"]["acme.example.com/v1"]["x"],
        serde_yaml::Value::from(1)
    );
    assert!(p["plugins"]["helm.kubebuilder.io/v1-alpha"].is_mapping());
}

/// A strict JSON check (RFC 8259): one value, nothing after it. Returns the error position.
fn check_json(text: &str) -> Result<(), String> {
    struct P<'a> {
        b: &'a [u8],
        i: usize,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.b.len() && b" \t\r\n".contains(&self.b[self.i]) {
                self.i += 1;
            }
        }
        fn err<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("{what} at byte {}", self.i))
        }
        fn lit(&mut self, s: &str) -> Result<(), String> {
            if self.b[self.i..].starts_with(s.as_bytes()) {
                self.i += s.len();
                Ok(())
            } else {
                self.err("bad literal")
            }
        }
        fn string(&mut self) -> Result<(), String> {
            self.i += 1;
            while self.i < self.b.len() {
                match self.b[self.i] {
                    b'"' => {
                        self.i += 1;
                        return Ok(());
                    }
                    b'\\' => {
                        let c = *self.b.get(self.i + 1).unwrap_or(&0);
                        if c == b'u' {
                            let hex = self.b.get(self.i + 2..self.i + 6).unwrap_or(b"");
                            if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                                return self.err("bad \\u escape");
                            }
                            self.i += 6;
                        } else if b"\"\\/bfnrt".contains(&c) {
                            self.i += 2;
                        } else {
                            return self.err("bad escape");
                        }
                    }
                    c if c < 0x20 => return self.err("control character in string"),
                    _ => self.i += 1,
                }
            }
            self.err("unterminated string")
        }
        fn number(&mut self) -> Result<(), String> {
            let start = self.i;
            while self.i < self.b.len() && b"+-0123456789.eE".contains(&self.b[self.i]) {
                self.i += 1;
            }
            let s = std::str::from_utf8(&self.b[start..self.i]).unwrap();
            if s.parse::<f64>().is_err() || s.starts_with('+') || s.starts_with('.') {
                return self.err("bad number");
            }
            Ok(())
        }
        fn value(&mut self) -> Result<(), String> {
            self.ws();
            match self.b.get(self.i) {
                Some(b'{') => {
                    self.i += 1;
                    self.ws();
                    if self.b.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Ok(());
                    }
                    loop {
                        self.ws();
                        if self.b.get(self.i) != Some(&b'"') {
                            return self.err("expected a key");
                        }
                        self.string()?;
                        self.ws();
                        if self.b.get(self.i) != Some(&b':') {
                            return self.err("expected ':'");
                        }
                        self.i += 1;
                        self.value()?;
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                return Ok(());
                            }
                            _ => return self.err("expected ',' or '}'"),
                        }
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    self.ws();
                    if self.b.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Ok(());
                    }
                    loop {
                        self.value()?;
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                return Ok(());
                            }
                            _ => return self.err("expected ',' or ']'"),
                        }
                    }
                }
                Some(b'"') => self.string(),
                Some(b't') => self.lit("true"),
                Some(b'f') => self.lit("false"),
                Some(b'n') => self.lit("null"),
                Some(_) => self.number(),
                None => self.err("unexpected end"),
            }
        }
    }
    let mut p = P {
        b: text.as_bytes(),
        i: 0,
    };
    p.value()?;
    p.ws();
    if p.i != p.b.len() {
        return p.err("text after the value");
    }
    Ok(())
}

#[test]
fn the_json_check_rejects_what_is_not_json() {
    assert!(check_json(r#"{"a": [1, -2.5e3, true, null, "x\"\u00e9"], "b": {}}"#).is_ok());
    for bad in [
        r#"{"a": 1,}"#,
        "{'a': 1}",
        "[1] 2",
        r#"{"a" 1}"#,
        "[01x]",
        "\"\\q\"",
    ] {
        assert!(check_json(bad).is_err(), "{bad}");
    }
}

/// The files under `dir/sub`, relative to `dir`.
fn files_under(dir: &Path, sub: &str) -> Vec<String> {
    let mut out: Vec<String> = crate::support::snapshot(&dir.join(sub))
        .keys()
        .map(|p| format!("{sub}/{}", p.display()))
        .collect();
    out.sort();
    out
}

#[test]
fn grafana_writes_kubebuilders_file_set_as_valid_json() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    ok(d, &["edit", "--plugins=grafana.kubebuilder.io/v1-alpha"]);
    // The file set kubebuilder v4.16 writes for the same command.
    assert_eq!(
        files_under(d, "grafana"),
        [
            "grafana/controller-resources-metrics.json",
            "grafana/controller-runtime-metrics.json",
            "grafana/custom-metrics/config.yaml",
        ]
    );
    for f in [
        "grafana/controller-resources-metrics.json",
        "grafana/controller-runtime-metrics.json",
    ] {
        let text = fs::read_to_string(d.join(f)).unwrap();
        check_json(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(text.contains("controller_runtime_reconcile_total"), "{f}");
    }
    let p = project(d);
    assert_eq!(
        p["plugins"]["grafana.kubebuilder.io/v1-alpha"],
        serde_yaml::Value::Mapping(Default::default())
    );
    assert!(fs::read_to_string(d.join("PROJECT"))
        .unwrap()
        .contains("plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n"));
    assert_eq!(
        layout(d),
        ["go.kubebuilder.io/v4"],
        "edit does not change the layout"
    );

    // The user lists metrics; running the plugin again keeps the config and adds their dashboard.
    let cfg = "customMetrics:\n  - metric: orders_total\n    type: counter\n  - metric: wait_seconds\n    type: histogram\n  - expr: 'sum(up{job=\"x\"})'\n";
    fs::write(d.join("grafana/custom-metrics/config.yaml"), cfg).unwrap();
    ok(d, &["edit", "--plugins=grafana/v1-alpha"]);
    assert_eq!(
        fs::read_to_string(d.join("grafana/custom-metrics/config.yaml")).unwrap(),
        cfg
    );
    let dash =
        fs::read_to_string(d.join("grafana/custom-metrics/custom-metrics-dashboard.json")).unwrap();
    check_json(&dash).unwrap_or_else(|e| panic!("custom dashboard: {e}\n{dash}"));
    for needle in ["orders_total", "wait_seconds", r#"sum(up{job=\"x\"})"#] {
        assert!(dash.contains(needle), "{needle}");
    }
}

#[test]
fn autoupdate_writes_the_workflow_that_runs_opbuilder() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    // Kubebuilder v4.16 removed the GitHub Models summary, and 0.3.0 with it.
    for args in [
        &["edit", "--multigroup", "--use-gh-models"][..],
        &["edit", "--plugins=autoupdate/v1-alpha", "--use-gh-models"][..],
    ] {
        refused(
            d,
            args,
            2,
            &[
                "--use-gh-models",
                "removed in opbuilder 0.3.0",
                "opbuilder edit --plugins=autoupdate/v1-alpha",
            ],
        );
    }
    ok(d, &["edit", "--plugins=autoupdate.kubebuilder.io/v1-alpha"]);
    let wf = ".github/workflows/auto_update.yml";
    let text = fs::read_to_string(d.join(wf)).unwrap();
    let y: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let job = &y["jobs"]["auto-update"];
    let run_steps: Vec<&str> = job["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    let update = run_steps
        .iter()
        .find(|r| r.contains("alpha update"))
        .expect("an update step");
    for part in [
        "opbuilder alpha check",
        "opbuilder alpha update --force",
        "git checkout HEAD -- .github/workflows",
        "git push",
        "gh issue create",
    ] {
        assert!(update.contains(part), "{part}: {update}");
    }
    assert!(!update.contains("gh models run"));
    assert!(!text.contains("kubebuilder alpha"), "{text}");
    assert!(y["on"]["schedule"][0]["cron"].is_string());
    assert!(job["permissions"]["models"].is_null());
    assert!(project(d)["plugins"]["autoupdate.kubebuilder.io/v1-alpha"].is_mapping());

    // A project whose PROJECT turned the summary on (made by 0.2.0 or Kubebuilder v4.15) loses
    // the setting, with a note, and gets the workflow without it.
    let p = fs::read_to_string(d.join("PROJECT")).unwrap().replace(
        "autoupdate.kubebuilder.io/v1-alpha: {}",
        "autoupdate.kubebuilder.io/v1-alpha:\n    useGHModels: true",
    );
    assert!(p.contains("useGHModels: true"), "{p}");
    fs::write(d.join("PROJECT"), p).unwrap();
    let out = run(d, &["edit", "--plugins=autoupdate/v1-alpha"]);
    assert!(out.status.success());
    let notes = String::from_utf8_lossy(&out.stdout);
    assert!(notes.contains("useGHModels: true` is dropped"), "{notes}");
    assert!(!fs::read_to_string(d.join("PROJECT"))
        .unwrap()
        .contains("useGHModels"));
    assert!(!fs::read_to_string(d.join(wf)).unwrap().contains("models"));
}

/// The files that differ between two snapshots.
fn changed(
    a: &std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>,
    b: &std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>,
) -> Vec<String> {
    let mut keys: Vec<_> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| k.display().to_string())
        .collect()
}

#[test]
fn edit_namespaced_force_touches_the_files_kubebuilder_touches() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    ok(
        d,
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
    );
    // What kubebuilder v4.16 changes for `edit --namespaced --force` in the same project, and back.
    let want = [
        "PROJECT",
        "config/manager/manager.yaml",
        "config/rbac/captain_admin_role.yaml",
        "config/rbac/captain_editor_role.yaml",
        "config/rbac/captain_viewer_role.yaml",
        "config/rbac/role.yaml",
        "config/rbac/role_binding.yaml",
    ];
    let before = crate::support::snapshot(d);
    ok(d, &["edit", "--namespaced", "--force"]);
    let on = crate::support::snapshot(d);
    assert_eq!(changed(&before, &on), want);
    assert_eq!(project(d)["namespaced"], serde_yaml::Value::from(true));
    let manager = String::from_utf8(on[Path::new("config/manager/manager.yaml")].clone()).unwrap();
    assert!(manager.contains("WATCH_NAMESPACE"));
    let binding: serde_yaml::Value =
        serde_yaml::from_slice(&on[Path::new("config/rbac/role_binding.yaml")]).unwrap();
    assert_eq!(binding["kind"].as_str(), Some("RoleBinding"));
    // Again: nothing left to change, as with kubebuilder.
    ok(d, &["edit", "--namespaced", "--force"]);
    assert!(changed(&on, &crate::support::snapshot(d)).is_empty());
    // And back to cluster scope: the same files, as they were.
    let out = run(d, &["edit", "--namespaced=false", "--force"]);
    assert!(out.status.success());
    assert!(changed(&before, &crate::support::snapshot(d)).is_empty());
    // Like kubebuilder, say what is left to do by hand in the code.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("cluster-scoped") && said.contains("cmd/main.go"),
        "{said}"
    );
}

#[test]
fn plugins_in_the_layout_run_with_later_commands_as_in_kubebuilder() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &["--plugins=go/v4,grafana.kubebuilder.io/v1-alpha"]);
    assert_eq!(
        layout(d),
        ["go.kubebuilder.io/v4", "grafana.kubebuilder.io/v1-alpha"]
    );
    assert!(!d.join("grafana").exists(), "grafana has no init step");
    // kubebuilder v4.16 runs every plugin of the layout on `edit`: grafana writes its files.
    ok(d, &["edit", "--multigroup"]);
    assert!(d.join("grafana/controller-runtime-metrics.json").is_file());
    assert!(project(d)["plugins"]["grafana.kubebuilder.io/v1-alpha"].is_mapping());
    // ... and skips it where it has no step.
    ok(d, API);
    assert!(d.join("api/ship/v1/frigate_types.go").is_file());
}

const HELM_FIXTURE: &str = include_str!("fixtures/helm/install.yaml");
const HELM_FIXTURE_WEBHOOKS: &str = include_str!("fixtures/helm/install-webhooks.yaml");

#[test]
fn helm_refuses_bad_flags_naming_them_and_touches_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    fs::write(d.join("m.yaml"), HELM_FIXTURE).unwrap();
    for (args, code, needles) in [
        (
            &["edit", "--plugins=helm/v2-alpha", "--manifests=/etc/hosts"][..],
            2,
            &["--manifests", "/etc/hosts", "--manifests=dist/install.yaml"][..],
        ),
        (
            &[
                "edit",
                "--plugins=helm/v2-alpha",
                "--manifests=m.yaml",
                "--output-dir=../out",
            ],
            2,
            &["--output-dir", "../out", "--output-dir=dist"],
        ),
        (
            &[
                "edit",
                "--plugins=helm/v2-alpha",
                "--manifests=missing.yaml",
            ],
            2,
            &["missing.yaml", "--manifests=dist/install.yaml"],
        ),
        (
            &["edit", "--multigroup", "--manifests=m.yaml"],
            2,
            &["--manifests", "helm"],
        ),
        (
            &["edit", "--plugins=helm"],
            2,
            &[
                "helm.kubebuilder.io/v2-alpha",
                "helm.kubebuilder.io/v1-alpha",
            ],
        ),
    ] {
        refused(d, args, code, needles);
    }
    // Manifests without the manager's Deployment are not a project's kustomize output.
    fs::write(
        d.join("bad.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n",
    )
    .unwrap();
    refused(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=bad.yaml"],
        1,
        &["bad.yaml", "Deployment"],
    );
}

#[test]
fn helm_rerun_follows_the_manifests_and_keeps_the_users_values() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    fs::write(d.join("m.yaml"), HELM_FIXTURE).unwrap();
    ok(
        d,
        &[
            "edit",
            "--plugins=helm.kubebuilder.io/v2-alpha",
            "--manifests=m.yaml",
        ],
    );
    let chart = d.join("dist/chart");
    let mut got: Vec<String> = files_under(d, "dist/chart")
        .into_iter()
        .map(|f| f.strip_prefix("dist/chart/").unwrap().to_string())
        .collect();
    got.retain(|f| !f.starts_with("templates/crd/") && !f.starts_with("templates/rbac/"));
    assert_eq!(
        got,
        [
            ".helmignore",
            "Chart.yaml",
            "templates/NOTES.txt",
            "templates/_helpers.tpl",
            "templates/manager/manager.yaml",
            "templates/metrics/controller-manager-metrics-service.yaml",
            "templates/network-policy/allow-metrics-traffic.yaml",
            "templates/prometheus/controller-manager-metrics-monitor.yaml",
            "values.yaml",
        ]
    );
    assert!(chart.join("templates/rbac/manager-role.yaml").is_file());
    assert!(chart
        .join("templates/rbac/controller-manager.yaml")
        .is_file());
    assert!(d.join(".github/workflows/test-chart.yml").is_file());
    let p = project(d);
    let entry = &p["plugins"]["helm.kubebuilder.io/v2-alpha"];
    assert_eq!(entry["manifests"], serde_yaml::Value::from("m.yaml"));
    assert_eq!(entry["output"], serde_yaml::Value::from("dist"));
    let makefile = fs::read_to_string(d.join("Makefile")).unwrap();
    for t in [
        "helm-deploy:",
        "helm-uninstall:",
        "helm-status:",
        "helm-history:",
        "helm-rollback:",
    ] {
        assert_eq!(makefile.matches(t).count(), 1, "{t}");
    }
    let values: serde_yaml::Value =
        serde_yaml::from_str(&fs::read_to_string(chart.join("values.yaml")).unwrap()).unwrap();
    for key in [
        "manager",
        "rbac",
        "serviceAccount",
        "crd",
        "metrics",
        "certManager",
        "prometheus",
        "networkPolicy",
    ] {
        assert!(values.get(key).is_some(), "values.yaml lacks {key}");
    }
    // Present before the first webhook: the manager's template reads webhook.enabled.
    assert_eq!(values["webhook"]["enabled"], serde_yaml::Value::from(false));
    assert_eq!(values["webhook"]["port"], serde_yaml::Value::from(9443));
    assert_eq!(
        values["manager"]["healthProbe"]["port"],
        serde_yaml::Value::from(8081)
    );
    assert_eq!(
        values["manager"]["image"]["repository"],
        serde_yaml::Value::from("controller")
    );
    assert_eq!(
        values["certManager"]["enabled"],
        serde_yaml::Value::from(false)
    );
    // make's IMG reaches the shell that splits it into repository and tag.
    assert!(
        makefile.contains("\tIMG=\"$(IMG)\"; $(HELM) upgrade --install "),
        "{makefile}"
    );

    // The user edits values.yaml and Chart.yaml; the project gains webhooks. The values file is
    // an older release's: no manager.healthProbe, no webhook section.
    let first = fs::read_to_string(chart.join("values.yaml")).unwrap();
    let probe_at = first.find("  ## The port of the manager's health").unwrap();
    let probe_end = probe_at + first[probe_at..].find("\n\n").unwrap() + 2;
    let webhook_at = first.find("## The webhook server").unwrap();
    let webhook_end = webhook_at + first[webhook_at..].find("\n\n").unwrap() + 2;
    let edited = format!(
        "{}{}{}",
        &first[..probe_at],
        &first[probe_end..webhook_at],
        &first[webhook_end..]
    )
    .replace("  replicas: 1\n", "  replicas: 3 # mine\n");
    assert!(
        !edited.contains("healthProbe") && !edited.contains("\nwebhook:"),
        "{edited}"
    );
    fs::write(chart.join("values.yaml"), &edited).unwrap();
    let chart_yaml = fs::read_to_string(chart.join("Chart.yaml")).unwrap() + "# my chart\n";
    fs::write(chart.join("Chart.yaml"), &chart_yaml).unwrap();
    fs::write(d.join("m.yaml"), HELM_FIXTURE_WEBHOOKS).unwrap();
    ok(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=m.yaml"],
    );
    let values_text = fs::read_to_string(chart.join("values.yaml")).unwrap();
    // The user's file with the probe's port inserted under manager: and the webhook section
    // appended.
    let with_probe = edited.replacen(
        "manager:\n",
        "manager:\n  ## Added by `opbuilder edit --plugins=helm/v2-alpha`: the port of the manager's health endpoints\n  healthProbe:\n    port: 8081\n",
        1,
    );
    assert!(
        values_text.starts_with(&with_probe),
        "the user's values.yaml was rewritten:\n{values_text}"
    );
    let values: serde_yaml::Value = serde_yaml::from_str(&values_text).unwrap();
    assert_eq!(values["webhook"]["enabled"], serde_yaml::Value::from(true));
    assert_eq!(values["webhook"]["port"], serde_yaml::Value::from(9443));
    assert_eq!(values["manager"]["replicas"], serde_yaml::Value::from(3));
    assert_eq!(
        values["manager"]["healthProbe"]["port"],
        serde_yaml::Value::from(8081)
    );
    // A third run has nothing to add.
    ok(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=m.yaml"],
    );
    assert_eq!(
        fs::read_to_string(chart.join("values.yaml")).unwrap(),
        values_text
    );
    assert_eq!(
        fs::read_to_string(chart.join("Chart.yaml")).unwrap(),
        chart_yaml
    );
    for f in [
        "templates/webhook/validating-webhook-configuration.yaml",
        "templates/webhook/mutating-webhook-configuration.yaml",
        "templates/webhook/webhook-service.yaml",
        "templates/cert-manager/serving-cert.yaml",
        "templates/cert-manager/selfsigned-issuer.yaml",
        "templates/network-policy/allow-webhook-traffic.yaml",
    ] {
        assert!(chart.join(f).is_file(), "{f} missing after the rerun");
    }
    let manager = fs::read_to_string(chart.join("templates/manager/manager.yaml")).unwrap();
    assert!(manager.contains(".Values.webhook.port"), "{manager}");
    let workflow = fs::read_to_string(d.join(".github/workflows/test-chart.yml")).unwrap();
    assert!(
        workflow.contains("\n      - name: Install cert-manager via Helm (wait for readiness)\n"),
        "{workflow}"
    );
    let makefile2 = fs::read_to_string(d.join("Makefile")).unwrap();
    assert_eq!(makefile, makefile2, "the Makefile targets are added once");

    // --force writes values.yaml anew; Chart.yaml stays the user's.
    ok(
        d,
        &[
            "edit",
            "--plugins=helm/v2-alpha",
            "--manifests=m.yaml",
            "--force",
        ],
    );
    let values_text = fs::read_to_string(chart.join("values.yaml")).unwrap();
    assert!(!values_text.contains("# mine"), "{values_text}");
    assert!(
        values_text.contains("certManager:\n  enabled: true"),
        "{values_text}"
    );
    assert_eq!(
        fs::read_to_string(chart.join("Chart.yaml")).unwrap(),
        chart_yaml
    );
}

#[test]
fn helm_warns_when_kept_values_leave_new_webhooks_off() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    fs::write(d.join("m.yaml"), HELM_FIXTURE).unwrap();
    ok(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=m.yaml"],
    );
    let values_path = d.join("dist/chart/values.yaml");
    let before = fs::read_to_string(&values_path).unwrap();
    assert!(before.contains("webhook:\n  enabled: false\n"), "{before}");
    fs::write(d.join("m.yaml"), HELM_FIXTURE_WEBHOOKS).unwrap();
    let out = run(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=m.yaml"],
    );
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("warning: dist/chart/values.yaml keeps webhook.enabled: false"),
        "{said}"
    );
    assert!(said.contains("--set webhook.enabled=true"), "{said}");
    assert_eq!(
        fs::read_to_string(&values_path).unwrap(),
        before,
        "the user's values stay as they are"
    );
}

#[test]
fn helm_edit_drops_the_deprecated_v1_alpha_entry() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    fs::write(d.join("m.yaml"), HELM_FIXTURE).unwrap();
    let text = fs::read_to_string(d.join("PROJECT")).unwrap().replace(
        "projectName:",
        "plugins:\n  helm.kubebuilder.io/v1-alpha: {}\nprojectName:",
    );
    fs::write(d.join("PROJECT"), text).unwrap();
    ok(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=m.yaml"],
    );
    let p = project(d);
    assert!(
        p["plugins"].get("helm.kubebuilder.io/v1-alpha").is_none(),
        "{p:?}"
    );
    assert!(p["plugins"]["helm.kubebuilder.io/v2-alpha"].is_mapping());
}

#[test]
fn helm_without_make_says_what_to_do_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    let before = full_snapshot(d);
    let out = opbuilder(d)
        .args(["edit", "--plugins=helm/v2-alpha"])
        .env("PATH", d.join("no-such-dir"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in ["make", "not on PATH", "--manifests"] {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    assert_eq!(before, full_snapshot(d), "files changed");
}

#[test]
fn helm_and_grafana_join_the_rust_layout() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    ok(
        d,
        &[
            "init",
            "--plugins=rust.opbuilder.io/v1-beta,helm/v2-alpha",
            "--domain",
            "example.com",
            "--project-name",
            "x",
            "--skip-post-steps",
        ],
    );
    assert_eq!(
        layout(d),
        ["rust.opbuilder.io/v1-beta", "helm.kubebuilder.io/v2-alpha"]
    );
    assert!(!d.join("dist").exists(), "helm has no init step");
    ok(d, API);
    // The chart from the kustomize output (config/ is go/v4's tree in both layouts), with the
    // Rust manager's flags named above its arguments.
    fs::write(d.join("m.yaml"), HELM_FIXTURE).unwrap();
    refused(
        d,
        &[
            "edit",
            "--plugins=helm/v2-alpha",
            "--manifests=m.yaml",
            "--namespaced",
        ],
        2,
        &["--namespaced belongs to the Rust layout"],
    );
    ok(
        d,
        &["edit", "--plugins=helm/v2-alpha", "--manifests=m.yaml"],
    );
    let values = fs::read_to_string(d.join("dist/chart/values.yaml")).unwrap();
    assert!(
        values
            .contains("## The Rust manager (src/main.rs) also takes --leader-elect[=true|false],"),
        "{values}"
    );
    assert!(d
        .join("dist/chart/templates/manager/manager.yaml")
        .is_file());
    assert!(fs::read_to_string(d.join("Makefile"))
        .unwrap()
        .contains("\nhelm-deploy: "));
    assert_eq!(
        project(d)["plugins"]["helm.kubebuilder.io/v2-alpha"]["manifests"],
        serde_yaml::Value::from("m.yaml")
    );
    // The dashboards read only what the Rust manager exports (rust-live.sh scrapes it).
    ok(d, &["edit", "--plugins=grafana/v1-alpha"]);
    for f in files_under(d, "grafana") {
        let text = fs::read_to_string(d.join(&f)).unwrap();
        for gone in [
            "go_goroutines",
            "go_memstats",
            "workqueue_depth",
            "panics_total",
        ] {
            assert!(!text.contains(gone), "{f} reads {gone}");
        }
    }
    assert!(project(d)["plugins"]["grafana.kubebuilder.io/v1-alpha"].is_mapping());
    assert_eq!(
        layout(d),
        ["rust.opbuilder.io/v1-beta", "helm.kubebuilder.io/v2-alpha"]
    );
    // go/v4's own plugins stay out, with the tree untouched.
    refused(
        d,
        &["edit", "--plugins=typed-clients/v1-alpha"],
        2,
        &["cannot join the Rust layout"],
    );
}

const WEBHOOK: &[&str] = &[
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
];

/// certs/v1-alpha (docs/certs.md): `edit` turns it on in a project without webhooks (PROJECT's
/// `plugins:`, the code, the flags, the Role), and the next `create webhook` writes nothing of
/// cert-manager; in a project whose webhooks use cert-manager, `edit` says what to change by
/// hand; the Rust layout takes it too, except for a namespace-scoped manager.
#[test]
fn certs_takes_cert_manager_out_of_create_webhook() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    init(dir, &[]);
    ok(dir, API);
    ok(dir, &["edit", "--plugins=certs/v1-alpha"]);
    assert_eq!(layout(dir), ["go.kubebuilder.io/v4"]);
    assert!(project(dir)["plugins"]["certs.opbuilder.io/v1-alpha"].is_mapping());
    assert!(dir.join("internal/webhookcerts/cluster.go").is_file());
    let main = fs::read_to_string(dir.join("cmd/main.go")).unwrap();
    assert!(main.contains("webhookcerts.SetupCluster(mgr, webhookServer"));
    ok(dir, WEBHOOK);
    assert!(!dir.join("config/certmanager").exists());
    let default = fs::read_to_string(dir.join("config/default/kustomization.yaml")).unwrap();
    let on: Vec<&str> = default
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert!(on.contains(&"- ../webhook"), "{default}");
    assert!(
        !on.iter()
            .any(|l| l.contains("certmanager") || l.starts_with("replacements:")),
        "{default}"
    );
    let patch = fs::read_to_string(dir.join("config/default/manager_webhook_patch.yaml")).unwrap();
    assert!(patch.contains("--webhook-cert-secret=webhook-server-cert"));
    assert!(!patch.contains("volumes/"), "{patch}");

    // Webhooks that already use cert-manager: the steps to move them are printed.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    init(dir, &[]);
    ok(dir, API);
    ok(dir, WEBHOOK);
    let out = run(dir, &["edit", "--plugins=certs/v1-alpha"]);
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("the webhooks already use cert-manager"),
        "{said}"
    );

    // The Rust layout: `edit` in a project with an API adds src/webhook_certs.rs, its module,
    // the manager's flags and server, and its RBAC in the code and in role.yaml; the next
    // `create webhook` writes nothing of cert-manager either.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let rust_init = [
        "init",
        "--domain",
        "example.com",
        "--project-name",
        "x",
        "--skip-post-steps",
        "--plugins=rust.opbuilder.io/v1-beta",
    ];
    ok(dir, &rust_init);
    ok(dir, API);
    ok(dir, &["edit", "--plugins=certs/v1-alpha"]);
    assert!(project(dir)["plugins"]["certs.opbuilder.io/v1-alpha"].is_mapping());
    assert!(dir.join("src/webhook_certs.rs").is_file());
    let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains("webhook_certs::start(client.clone(), options, health.clone())?"));
    assert!(main.contains("webhook_cert_secret: Option<String>,"));
    let lib = fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.contains("pub mod webhook_certs;"));
    let controllers = fs::read_to_string(dir.join("src/controllers/mod.rs")).unwrap();
    assert!(controllers.contains("crate::webhook_certs::RBAC,"));
    let role = fs::read_to_string(dir.join("config/rbac/role.yaml")).unwrap();
    assert!(role.contains("- mutatingwebhookconfigurations"), "{role}");
    assert!(role.contains("- customresourcedefinitions"), "{role}");
    ok(dir, WEBHOOK);
    assert!(!dir.join("config/certmanager").exists());
    let patch = fs::read_to_string(dir.join("config/default/manager_webhook_patch.yaml")).unwrap();
    assert!(patch.contains("--webhook-cert-secret=webhook-server-cert"));
    assert!(patch.contains("src/webhook_certs.rs"), "{patch}");
    // Nor can such a manager become namespace-scoped later.
    refused(
        dir,
        &["edit", "--namespaced"],
        2,
        &["--namespaced", "certs.opbuilder.io/v1-alpha"],
    );

    // A namespace-scoped Rust manager has a Role, which cannot grant the caBundles' objects.
    let t = tempfile::tempdir().unwrap();
    refused(
        t.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "x",
            "--namespaced",
            "--plugins=rust.opbuilder.io/v1-beta,certs/v1-alpha",
        ],
        2,
        &["certs.opbuilder.io/v1-alpha", "--namespaced"],
    );
}

/// telemetry/v1-alpha (docs/commands.md, "Telemetry"): `edit` turns it on in a project that has a
/// controller already (PROJECT's `plugins:`, internal/telemetry, cmd/main.go wired, the
/// controller wrapped, go.mod's pins, the ClusterRole), a second `edit` changes nothing, a later
/// `create api` wraps its controller too; a cmd/main.go without the lines it wires into is
/// refused by name with every file untouched; the Rust layout refuses it (exit 2), writing nothing.
#[test]
fn telemetry_wraps_every_controller_and_wires_main() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    init(dir, &[]);
    ok(dir, API);
    ok(dir, &["edit", "--plugins=telemetry/v1-alpha"]);
    assert_eq!(layout(dir), ["go.kubebuilder.io/v4"]);
    assert!(project(dir)["plugins"]["telemetry.opbuilder.io/v1-alpha"].is_mapping());
    for f in ["reconcile.go", "telemetry.go", "webhook.go", "loglevel.go"] {
        assert!(dir.join("internal/telemetry").join(f).is_file(), "{f}");
    }
    let main = fs::read_to_string(dir.join("cmd/main.go")).unwrap();
    for wired in [
        "\t\"example.com/x/internal/telemetry\"\n",
        "logLevel := telemetry.LogLevel(&opts)\n",
        "ctrl.NewManager(telemetry.WrapConfig(ctrl.GetConfigOrDie()), ctrl.Options{",
        "telemetry.WebhookServer(webhookServer),",
        "if err := telemetry.Setup(mgr, \"x\", logLevel); err != nil {",
    ] {
        assert!(main.contains(wired), "cmd/main.go lacks {wired:?}:\n{main}");
    }
    let controller =
        fs::read_to_string(dir.join("internal/controller/frigate_controller.go")).unwrap();
    assert!(
        controller.contains("\t\tComplete(telemetry.Reconciler(\"frigate\", r))\n"),
        "{controller}"
    );
    let gomod = fs::read_to_string(dir.join("go.mod")).unwrap();
    assert!(
        gomod.contains("\tgo.opentelemetry.io/otel/sdk v"),
        "{gomod}"
    );
    let rbac = fs::read_to_string(dir.join("config/rbac/kustomization.yaml")).unwrap();
    assert!(rbac.contains("- loglevel_editor_role.yaml"), "{rbac}");

    let before = full_snapshot(dir);
    ok(dir, &["edit", "--plugins=telemetry/v1-alpha"]);
    assert_eq!(before, full_snapshot(dir), "a second edit changed files");

    let mut second = API.to_vec();
    second[7] = "Dock";
    ok(dir, &second);
    let dock = fs::read_to_string(dir.join("internal/controller/dock_controller.go")).unwrap();
    assert!(
        dock.contains("Complete(telemetry.Reconciler(\"dock\", r))"),
        "{dock}"
    );

    // A cmd/main.go changed past recognition: named, nothing written.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    init(dir, &[]);
    let main = dir.join("cmd/main.go");
    let text = fs::read_to_string(&main).unwrap();
    fs::write(
        &main,
        text.replace("ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))", ""),
    )
    .unwrap();
    refused(
        dir,
        &["edit", "--plugins=telemetry/v1-alpha"],
        1,
        &["cmd/main.go", "ctrl.SetLogger"],
    );
}

/// The Rust layout's part: `init` with the plugin writes src/telemetry.rs and wires the manager;
/// `create api` then puts the span on the controller's reconcile; `edit` in a project whose
/// main.rs no longer has the line it replaces is refused, naming the file and the line, with
/// nothing written (the golden tree `rust-telemetry` has the whole output).
#[test]
fn telemetry_in_the_rust_layout() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let rust_init = |dir: &Path, plugins: &str| {
        ok(
            dir,
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "x",
                plugins,
            ],
        )
    };
    rust_init(
        dir,
        "--plugins=rust.opbuilder.io/v1-beta,telemetry/v1-alpha",
    );
    assert!(project(dir)["plugins"]["telemetry.opbuilder.io/v1-alpha"].is_mapping());
    let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(
        main.contains("let _telemetry = telemetry::init(flags.zap_encoder"),
        "{main}"
    );
    assert!(!main.contains("manager::init_logging("), "{main}");
    assert!(dir.join("src/telemetry.rs").is_file());
    assert!(dir.join("config/rbac/loglevel_editor_role.yaml").is_file());
    ok(
        dir,
        &[
            "create",
            "api",
            "--group",
            "webapp",
            "--version",
            "v1",
            "--kind",
            "Guestbook",
            "--resource",
            "--controller",
        ],
    );
    let controller = fs::read_to_string(dir.join("src/controllers/guestbook.rs")).unwrap();
    assert!(
        controller.contains("#[tracing::instrument(name = \"reconcile\", skip_all")
            && controller.contains("k8s.object.name = kube::ResourceExt::name_any(obj.as_ref())"),
        "{controller}"
    );

    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    rust_init(dir, "--plugins=rust.opbuilder.io/v1-beta");
    let main = dir.join("src/main.rs");
    let text = fs::read_to_string(&main).unwrap();
    fs::write(
        &main,
        text.replace(
            "manager::init_logging(flags.zap_encoder",
            "manager::init_logging(my_format",
        ),
    )
    .unwrap();
    refused(
        dir,
        &["edit", "--plugins=telemetry/v1-alpha"],
        1,
        &["src/main.rs", "manager::init_logging(flags.zap_encoder"],
    );
}
