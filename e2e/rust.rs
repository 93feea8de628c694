//! The Rust layout's commands beyond the golden tree: webhook types merged into a kind's files.

use crate::support::{ok, read, refused, snapshot};
use std::fs;
use std::path::Path;

/// The layout by name, so that its version follows the release.
const RUST: &str = "--plugins=rust.opbuilder.io";

/// A Rust project named fleet, namespace-scoped or not, with a namespaced kind ship/v1 Frigate
/// and its controller.
fn fleet(dir: &Path, namespaced: bool) {
    let mut init = vec![
        "init",
        RUST,
        "--domain",
        "example.com",
        "--project-name",
        "fleet",
        "--skip-post-steps",
    ];
    if namespaced {
        init.push("--namespaced");
    }
    ok(dir, &init);
    ok(
        dir,
        &words("create api --group ship --version v1 --kind Frigate --resource --controller"),
    );
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn rust_project(dir: &Path) {
    fleet(dir, false);
}

/// `create webhook` for ship/v1 Frigate with the webhook types' flags `types`.
fn webhook_args<'a>(types: &[&'a str]) -> Vec<&'a str> {
    let mut args = words("create webhook --group ship --version v1 --kind Frigate");
    args.extend_from_slice(types);
    args
}

fn webhook(dir: &Path, types: &[&str]) {
    let args = webhook_args(types);
    ok(dir, &args);
}

const MODULE: &str = "src/webhooks/ship_v1_frigate.rs";
const TEST: &str = "tests/ship_v1_frigate_webhook_test.rs";

#[test]
fn a_second_webhook_type_merges_into_the_kinds_files_keeping_the_users_code() {
    // Validation first; the user writes rules; then defaulting is added without --force.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    rust_project(d);
    webhook(d, &["--programmatic-validation"]);
    let text = read(d, MODULE);
    assert!(!text.contains("DEFAULTING_PATH"), "{text}");
    let rule = "        Some(\"x\") => Ok(vec![\"x is odd\".into()]), // the user's rule\n";
    let edited = text.replacen(
        "        _ => Ok(vec![]),\n",
        &format!("{rule}        _ => Ok(vec![]),\n"),
        1,
    );
    assert_ne!(edited, text);
    fs::write(d.join(MODULE), &edited).unwrap();
    let check = "    // the user's check\n}\n";
    let test = read(d, TEST).replacen("\n}\n", &format!("\n{check}"), 1);
    fs::write(d.join(TEST), &test).unwrap();

    webhook(d, &["--defaulting", "--defaulting-path", "/fill-frigate"]);
    let merged = read(d, MODULE);
    assert!(merged.contains(rule), "{merged}");
    for needle in [
        "pub const DEFAULTING_PATH: &str = \"/fill-frigate\";",
        "pub async fn default(obj: &mut Frigate, cluster: &Cluster)",
        "handler: |body, cluster| Box::pin(webhook::defaulting(body, cluster, default)),",
        "name: \"mfrigate-v1.kb.io\"",
        "fn defaulting_fills_in_the_example_field()",
        "pub async fn validate(",
        "fn validation_refuses_an_empty_foo()",
    ] {
        assert_eq!(merged.matches(needle).count(), 1, "{needle}:\n{merged}");
    }
    let merged_test = read(d, TEST);
    assert!(
        merged_test.contains("    // the user's check\n"),
        "{merged_test}"
    );
    assert!(
        merged_test.contains("the defaulting webhook was never called")
            && merged_test.contains("the API server never refused the invalid object"),
        "{merged_test}"
    );
    let project = read(d, "PROJECT");
    assert!(
        project.contains("    defaulting: true\n    defaultingPath: /fill-frigate\n")
            && project.contains("    validation: true\n"),
        "{project}"
    );
    // One module declaration, one entry in each list of src/webhooks/mod.rs.
    let mods = read(d, "src/webhooks/mod.rs");
    for needle in [
        "pub mod ship_v1_frigate;",
        "ship_v1_frigate::routes(),",
        "ship_v1_frigate::WEBHOOKS,",
    ] {
        assert_eq!(mods.matches(needle).count(), 1, "{needle}:\n{mods}");
    }
}

#[test]
fn merged_webhook_types_are_what_one_command_writes() {
    // Defaulting then validation (a conversion webhook between them) gives the files that
    // asking for both at once gives.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [a.path(), b.path()] {
        rust_project(d);
        ok(
            d,
            &words(
                "create api --group ship --version v2 --kind Frigate --resource --controller=false",
            ),
        );
    }
    webhook(a.path(), &["--defaulting", "--programmatic-validation"]);
    webhook(a.path(), &["--conversion", "--spoke", "v2"]);
    webhook(b.path(), &["--defaulting"]);
    webhook(b.path(), &["--conversion", "--spoke", "v2"]);
    webhook(b.path(), &["--programmatic-validation"]);
    assert_eq!(snapshot(a.path()), snapshot(b.path()));
}

#[test]
fn merging_into_webhook_files_without_markers_is_refused_untouched() {
    // A module as opbuilder 0.4.0 wrote it has no markers for the new sections (or the import
    // line was changed): refused, exit 1, naming --force; nothing written.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    rust_project(d);
    webhook(d, &["--defaulting"]);
    let scaffolded = read(d, MODULE);
    // The validation's import goes beside the module's import of the webhook server.
    let import = "use crate::webhook::{self, Cluster, Route, Webhook};";
    let text = scaffolded.replace(
        import,
        "use crate::webhook::{Cluster, Route, Webhook};\nuse crate::webhook;",
    );
    fs::write(d.join(MODULE), text).unwrap();
    refused(
        d,
        &webhook_args(&["--programmatic-validation"]),
        1,
        &[import, "FieldError", "--force"],
    );
    let text = scaffolded.replace("    // +kubebuilder:scaffold:webhook-routes\n", "");
    fs::write(d.join(MODULE), text).unwrap();
    refused(
        d,
        &webhook_args(&["--programmatic-validation"]),
        1,
        &[
            "ship/v1 Frigate already has webhooks",
            "// +kubebuilder:scaffold:webhook-routes",
            "--force",
        ],
    );
    // --force writes both files again with both types.
    webhook(d, &["--programmatic-validation", "--force"]);
    let text = read(d, MODULE);
    assert!(
        text.contains("pub async fn default(") && text.contains("pub async fn validate("),
        "{text}"
    );
}

/// [`fleet`] with a controller for the core type apps/v1 Deployment.
fn scoped_project(dir: &Path, namespaced: bool) {
    fleet(dir, namespaced);
    ok(
        dir,
        &words(
            "create api --group apps --version v1 --kind Deployment --resource=false --controller",
        ),
    );
}

#[test]
fn edit_namespaced_turns_one_scope_into_the_other() {
    // `edit --namespaced` on a cluster-scoped project gives what `init --namespaced` gives, and
    // `--namespaced=false` back; the manager's other settings and the user's code stay.
    let (cluster, namespaced) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    scoped_project(cluster.path(), false);
    scoped_project(namespaced.path(), true);
    let (c, n) = (cluster.path(), namespaced.path());
    assert!(read(n, "src/rbac.rs").contains("pub const NAMESPACED: bool = true;"));
    assert!(read(n, "config/rbac/role.yaml").contains("\nkind: Role\n"));
    assert!(read(c, "config/rbac/role.yaml").contains("\nkind: ClusterRole\n"));
    let before = snapshot(c);
    ok(c, &["edit", "--namespaced"]);
    assert_eq!(snapshot(c), snapshot(n));
    ok(c, &["edit", "--namespaced=false"]);
    assert_eq!(snapshot(c), before);
    // Again: nothing changes.
    ok(c, &["edit", "--namespaced=false"]);
    assert_eq!(snapshot(c), before);
}

#[test]
fn edit_namespaced_refuses_a_changed_rbac_constant_untouched() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    scoped_project(d, false);
    let text = read(d, "src/rbac.rs").replace("pub const NAMESPACED: bool = false;", "");
    fs::write(d.join("src/rbac.rs"), text).unwrap();
    refused(
        d,
        &["edit", "--namespaced"],
        1,
        &["src/rbac.rs has no line `pub const NAMESPACED: bool = false;`"],
    );
}

/// `create api --plugins=deploy-image/v1-alpha` of `kind` in group cache/v1alpha1, with `extra`.
fn deploy_image<'a>(kind: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args =
        words("create api --group cache --version v1alpha1 --plugins=deploy-image/v1-alpha");
    args.extend_from_slice(&["--kind", kind]);
    args.extend_from_slice(extra);
    args
}

/// deploy-image/v1-alpha joins the Rust layout: its controller, test and types are laid out as
/// rustfmt lays them out whatever the command (short, long, with quotes) and the options given,
/// and `--force` again rewrites them and the image variable in place.
#[test]
fn deploy_image_controllers_are_rustfmt_clean_for_every_option() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    rust_project(d);
    ok(d, &deploy_image("Busybox", &["--image=busybox:1.36.1"]));
    ok(
        d,
        &deploy_image(
            "Shell",
            &[
                "--image=registry.example.com:5000/tools/shell@sha256:0123abcd",
                "--image-container-command=sh,-c,echo \"a\\b\"; sleep 3600 && echo done-and-over,x,y,z",
                "--image-container-port=8080",
                "--run-as-user=0",
            ],
        ),
    );
    ok(
        d,
        &deploy_image(
            "Memcached",
            &[
                "--image=memcached:1.6",
                "--image-container-command=memcached,-v",
            ],
        ),
    );
    ok(
        d,
        &deploy_image(
            "Memcached",
            &[
                "--image=memcached:1.7",
                "--image-container-port=11211",
                "--force",
            ],
        ),
    );
    let manager = read(d, "config/manager/manager.yaml");
    assert_eq!(manager.matches("MEMCACHED_IMAGE").count(), 1, "{manager}");
    assert!(manager.contains("value: memcached:1.7"), "{manager}");
    let controller = read(d, "src/controllers/memcached.rs");
    assert!(!controller.contains("COMMAND") && controller.contains("container_port"));
    let files: Vec<String> = ["busybox", "shell", "memcached"]
        .iter()
        .flat_map(|k| {
            [
                format!("src/controllers/{k}.rs"),
                format!("tests/{k}_controller_test.rs"),
                format!("src/api/cache/v1alpha1/{k}.rs"),
            ]
        })
        .collect();
    let out = std::process::Command::new("rustfmt")
        .args(["--check", "--edition", "2024"])
        .args(&files)
        .current_dir(d)
        .output()
        .expect("rustfmt (rustup component add rustfmt)");
    assert!(
        out.status.success(),
        "rustfmt would change the generated code:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `alpha update --skip-post-steps` of a Rust project made by 0.4.0 (which wrote no Cargo.lock)
/// does not run `cargo generate-lockfile`, and says to run it; `--dry-run` says it would run.
/// (e2e/ui/rust-v1-alpha pins the post-step itself, offline.)
#[test]
fn alpha_update_of_a_rust_project_says_when_cargo_lock_is_left_to_the_user() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/ui/rust-v1-alpha/in");
    crate::support::copy_tree(&project, d);
    let stdout = |args: &[&str]| {
        let out = crate::support::run(d, args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    // The reason is the first that holds: the update changed Cargo.toml (the current templates'
    // pins differ from 0.4.0's), else the project has no Cargo.lock.
    let out = stdout(&["alpha", "update", "--dry-run"]);
    let reasons = [
        "the update changed Cargo.toml",
        "the project has no Cargo.lock",
    ];
    assert!(
        reasons
            .iter()
            .any(|r| out.contains(&format!("Then `cargo generate-lockfile` would run ({r})."))),
        "{out}"
    );
    let out = stdout(&["alpha", "update", "--skip-post-steps"]);
    assert!(
        reasons.iter().any(|r| out.contains(&format!(
            "Not running `cargo generate-lockfile` ({r}; --skip-post-steps): \
             run it before building with --locked (the image's build does)."
        ))),
        "{out}"
    );
    assert!(!d.join("Cargo.lock").exists());
    assert!(read(d, "PROJECT").contains("rust.opbuilder.io/v1-beta"));
}
