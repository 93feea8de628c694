//! `create api --plugins=deploy-image/v1-alpha`: what it writes, what PROJECT records, and the
//! bad input it refuses without touching anything. The generated code is built, linted and
//! tested by the golden tree e2e/testdata/deployimage, and run on a live control plane by the
//! `deployimage` scenario of e2e/scripts/scenarios.sh.

use crate::support::{ok, read, refused};
use std::path::Path;

fn init(dir: &Path, extra: &[&str]) {
    let mut args = vec![
        "init",
        "--domain",
        "testproject.org",
        "--repo",
        "example.com/ops",
        "--project-name",
        "ops",
        "--skip-post-steps",
    ];
    args.extend_from_slice(extra);
    ok(dir, &args);
}

/// Kubebuilder's with-plugins script, Memcached line.
const MEMCACHED: &[&str] = &[
    "create",
    "api",
    "--group",
    "example.com",
    "--version",
    "v1alpha1",
    "--kind",
    "Memcached",
    "--image=memcached:1.6.26-alpine3.19",
    "--image-container-command=memcached,--memory-limit=64,-o,modern,-v",
    "--image-container-port=11211",
    "--run-as-user=1001",
    "--plugins=deploy-image/v1-alpha",
    "--skip-post-steps",
];

const BUSYBOX: &[&str] = &[
    "create",
    "api",
    "--group",
    "example.com",
    "--version",
    "v1alpha1",
    "--kind",
    "Busybox",
    "--image=busybox:1.36.1",
    "--plugins=deploy-image.go.kubebuilder.io/v1-alpha",
    "--skip-post-steps",
];

#[test]
fn scaffolds_the_operand_api_and_records_it_as_kubebuilder_does() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    ok(d, MEMCACHED);
    ok(d, BUSYBOX);

    // PROJECT: the resources as go/v4 records them, plus the plugin's section.
    let p: serde_yaml::Value = serde_yaml::from_str(&read(d, "PROJECT")).unwrap();
    let want: serde_yaml::Value = serde_yaml::from_str(
        r#"
resources:
- domain: testproject.org
  group: example.com
  kind: Memcached
  options:
    containerCommand: memcached,--memory-limit=64,-o,modern,-v
    containerPort: "11211"
    image: memcached:1.6.26-alpine3.19
    runAsUser: "1001"
  version: v1alpha1
- domain: testproject.org
  group: example.com
  kind: Busybox
  options:
    image: busybox:1.36.1
  version: v1alpha1
"#,
    )
    .unwrap();
    assert_eq!(
        p["plugins"]["deploy-image.go.kubebuilder.io/v1-alpha"],
        want
    );
    let res = p["resources"].as_sequence().unwrap();
    assert_eq!(res.len(), 2);
    for r in res {
        assert_eq!(r["controller"], serde_yaml::Value::Bool(true));
        assert_eq!(r["api"]["namespaced"], serde_yaml::Value::Bool(true));
    }
    assert_eq!(p["layout"][0], "go.kubebuilder.io/v4", "the layout is kept");

    // The types: size always, containerPort only with --image-container-port.
    let m = read(d, "api/v1alpha1/memcached_types.go");
    assert!(m.contains("Size *int32 `json:\"size,omitempty\"`"), "{m}");
    assert!(m.contains("ContainerPort int32 `json:\"containerPort\"`"));
    assert!(m.contains("+kubebuilder:validation:Minimum=0"));
    let b = read(d, "api/v1alpha1/busybox_types.go");
    assert!(b.contains("Size *int32") && !b.contains("ContainerPort"));

    // The controller: the container as the flags describe it.
    let c = read(d, "internal/controller/memcached_controller.go");
    for needle in [
        r#"Command: []string{"memcached", "--memory-limit=64", "-o", "modern", "-v"},"#,
        "ContainerPort: memcached.Spec.ContainerPort,",
        "RunAsUser:                new(int64(1001)),",
        r#"const memcachedFinalizer = "example.com.testproject.org/finalizer""#,
        "Recorder events.EventRecorder",
        "Owns(&appsv1.Deployment{}).",
        r#"const imageEnvVar = "MEMCACHED_IMAGE""#,
        "+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete",
        "+kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch",
    ] {
        assert!(c.contains(needle), "memcached_controller.go lacks {needle:?}");
    }
    let bc = read(d, "internal/controller/busybox_controller.go");
    assert!(!bc.contains("Command:") && !bc.contains("Ports:") && !bc.contains("RunAsUser"));
    assert!(read(d, "internal/controller/conditions.go").contains("reasonFinalizing"));
    assert!(read(d, "internal/controller/memcached_controller_test.go").contains("MEMCACHED_IMAGE"));

    // The sample, the recorder in main.go, the image in the manager's environment.
    let s = read(d, "config/samples/example.com_v1alpha1_memcached.yaml");
    assert!(
        s.contains("size: 1") && s.contains("containerPort: 11211"),
        "{s}"
    );
    let main = read(d, "cmd/main.go");
    assert!(main.contains(r#"Recorder: mgr.GetEventRecorder("memcached-controller"),"#));
    assert!(main.contains(r#"Recorder: mgr.GetEventRecorder("busybox-controller"),"#));
    let text = read(d, "config/manager/manager.yaml");
    let mgr = serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap())
        .find(|v: &serde_yaml::Value| v["kind"] == "Deployment")
        .expect("a Deployment in manager.yaml");
    let env = &mgr["spec"]["template"]["spec"]["containers"][0]["env"];
    let pairs: Vec<(String, String)> = env
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("BUSYBOX_IMAGE".into(), "busybox:1.36.1".into()),
            (
                "MEMCACHED_IMAGE".into(),
                "memcached:1.6.26-alpine3.19".into()
            )
        ]
    );

    // Again over an existing API: go/v4's rule, --force replaces it and its PROJECT entry.
    refused(d, MEMCACHED, 1, &["already exists", "--force"]);
    let mut again: Vec<&str> = MEMCACHED
        .iter()
        .filter(|a| !a.starts_with("--image="))
        .copied()
        .collect();
    again.extend(["--image=memcached:1.6.29", "--force"]);
    ok(d, &again);
    let p: serde_yaml::Value = serde_yaml::from_str(&read(d, "PROJECT")).unwrap();
    let entries = p["plugins"]["deploy-image.go.kubebuilder.io/v1-alpha"]["resources"]
        .as_sequence()
        .unwrap();
    assert_eq!(entries.len(), 2, "one entry per kind");
    assert_eq!(entries[0]["options"]["image"], "memcached:1.6.29");
    let m = read(d, "config/manager/manager.yaml");
    assert!(m.contains("value: memcached:1.6.29"), "{m}");
    assert_eq!(m.matches("MEMCACHED_IMAGE").count(), 1, "{m}");
}

#[test]
fn multigroup_and_namespaced_projects() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &["--multigroup", "--namespaced"]);
    ok(d, MEMCACHED);
    let c = read(d, "internal/controller/example.com/memcached_controller.go");
    assert!(c.starts_with("package examplecom") || c.contains("\npackage examplecom\n"));
    assert!(c.contains(
        "+kubebuilder:rbac:groups=apps,namespace=ops-system,resources=deployments,verbs=get;list;watch;create;update;patch;delete"
    ));
    assert!(c.contains(r#"Named("example.com-memcached")."#));
    assert!(d
        .join("internal/controller/example.com/conditions.go")
        .is_file());
    assert!(read(d, "cmd/main.go").contains("&examplecomcontroller.MemcachedReconciler{"));
    // The namespaced manager already has an env list: the image joins it.
    let m = read(d, "config/manager/manager.yaml");
    assert_eq!(m.matches("env:").count(), 1, "{m}");
    assert!(m.contains("- name: MEMCACHED_IMAGE") && m.contains("- name: WATCH_NAMESPACE"));
}

#[test]
fn edit_namespaced_force_keeps_the_image_variable() {
    // `edit --namespaced --force` changes only WATCH_NAMESPACE in manager.yaml (Kubebuilder
    // writes the file anew, losing MEMCACHED_IMAGE and the controller's image with it).
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    ok(d, MEMCACHED);
    let before = read(d, "config/manager/manager.yaml");
    ok(d, &["edit", "--namespaced", "--force"]);
    let m = read(d, "config/manager/manager.yaml");
    assert_eq!(m.matches("env:").count(), 1, "{m}");
    assert!(m.contains("- name: WATCH_NAMESPACE"), "{m}");
    assert!(
        m.contains("- name: MEMCACHED_IMAGE\n          value: memcached:1.6.26-alpine3.19\n"),
        "{m}"
    );
    ok(d, &["edit", "--namespaced=false", "--force"]);
    assert_eq!(read(d, "config/manager/manager.yaml"), before);
}

#[test]
fn bad_input_is_refused_naming_the_flag_and_nothing_is_written() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init(d, &[]);
    let with = |replace: &str, by: Option<&str>| -> Vec<String> {
        let mut v: Vec<String> = MEMCACHED
            .iter()
            .filter(|a| !a.starts_with(replace))
            .map(|s| s.to_string())
            .collect();
        if let Some(b) = by {
            v.push(b.to_string());
        }
        v
    };
    let cases: Vec<(Vec<String>, &[&str])> = vec![
        (
            with("--image=", None),
            &["needs --image", "--image=memcached"],
        ),
        (
            with("--image=", Some("--image=")),
            &["--image", "must not be empty"],
        ),
        (
            with("--image=", Some("--image=mem cached")),
            &["--image", "image reference"],
        ),
        (
            with("--image-container-port=", Some("--image-container-port=0")),
            &["--image-container-port", "1 to 65535", "11211"],
        ),
        (
            with(
                "--image-container-port=",
                Some("--image-container-port=70000"),
            ),
            &["--image-container-port", "1 to 65535"],
        ),
        (
            with(
                "--image-container-port=",
                Some("--image-container-port=http"),
            ),
            &["--image-container-port", "1 to 65535"],
        ),
        (
            with("--run-as-user=", Some("--run-as-user=-5")),
            &["--run-as-user", "non-negative", "1001"],
        ),
        (
            with(
                "--image-container-command=",
                Some("--image-container-command=memcached,,-v"),
            ),
            &["--image-container-command", "none of them empty"],
        ),
        (
            with("--plugins=", None),
            &["--image", "--plugins=deploy-image/v1-alpha"],
        ),
        (
            with("--skip-post-steps", Some("--resource=false")),
            &["--resource=false", "deploy-image"],
        ),
        (
            with("--skip-post-steps", Some("--namespaced=false")),
            &["--namespaced=false", "deploy-image"],
        ),
    ];
    for (args, needles) in &cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(d, &a, 2, needles);
    }
    // The plugin has `create api` only.
    refused(
        d,
        &["edit", "--plugins=deploy-image/v1-alpha"],
        2,
        &["deploy-image/v1-alpha", "create api"],
    );
    let t2 = tempfile::tempdir().unwrap();
    refused(
        t2.path(),
        &[
            "init",
            "--domain",
            "x.org",
            "--repo",
            "x.org/y",
            "--plugins=deploy-image/v1-alpha",
            "--skip-post-steps",
        ],
        2,
        &["deploy-image/v1-alpha", "create api"],
    );
}
