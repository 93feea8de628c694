//! typed-clients.opbuilder.io/v1-alpha: how it is turned on (init chain, `edit --plugins`), what
//! it records in PROJECT, that later `create api` runs it, and what it adds to API packages.
//! Building the clients with k8s.io/code-generator is checked by e2e/scripts/check-typed-clients.sh
//! on the golden trees typed-clients and typed-clients-multigroup.

use crate::support::{full_snapshot, opbuilder, project_yaml as project, read};
use std::fs;
use std::path::Path;

const KEY: &str = "typed-clients.opbuilder.io/v1-alpha";

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = opbuilder(dir).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{args:?} failed:\n{text}");
    text
}

fn api(dir: &Path, group: &str, version: &str, kind: &str, extra: &[&str]) {
    let mut args = vec![
        "create",
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
        "--skip-post-steps",
    ];
    args.extend_from_slice(extra);
    ok(dir, &args);
}

/// The comment lines right above `type <kind> struct`, up to the previous declaration.
fn tags_of(types: &str, kind: &str) -> Vec<String> {
    let lines: Vec<&str> = types.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == format!("type {kind} struct {{"))
        .unwrap_or_else(|| panic!("no type {kind}"));
    let mut out = vec![];
    for l in lines[..at].iter().rev() {
        if l.starts_with("//") {
            out.push(l.to_string());
        } else if !l.is_empty() {
            break;
        }
    }
    out
}

#[test]
fn init_chain_records_the_plugin_outside_the_layout_and_later_apis_get_clients() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(
        dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/shipyard",
            "--project-name",
            "shipyard",
            "--plugins=go/v4,typed-clients/v1-alpha",
            "--skip-post-steps",
        ],
    );
    let p = project(dir);
    let layout: Vec<String> = serde_yaml::from_value(p["layout"].clone()).unwrap();
    assert_eq!(
        layout,
        ["go.kubebuilder.io/v4"],
        "Kubebuilder refuses unknown layout keys"
    );
    assert!(p["plugins"][KEY].is_mapping(), "{p:?}");
    for f in ["hack/update-codegen.sh", "hack/verify-codegen.sh"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let make = read(dir, "Makefile");
    assert!(make.contains("\ngenerate-client: ## "), "{make}");
    assert!(make.contains("\tbash hack/update-codegen.sh\n"));
    assert!(make.contains("\nverify-client: ## "));
    assert!(make.contains("\tbash hack/verify-codegen.sh\n"));
    // `make generate` runs generate-client after the DeepCopy methods.
    let gen = make.split("\ngenerate: ").nth(1).unwrap();
    let recipe: Vec<&str> = gen
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('\t'))
        .collect();
    assert_eq!(recipe.len(), 2, "{recipe:?}");
    assert!(recipe[0].contains("CONTROLLER_GEN"));
    assert_eq!(
        recipe[1],
        "\t\"$(MAKE)\" --no-print-directory generate-client"
    );

    // No --plugins: the chain comes from PROJECT's layout plus the recorded plugin.
    api(
        dir,
        "ship",
        "v1",
        "Frigate",
        &["--resource", "--controller"],
    );
    api(
        dir,
        "ship",
        "v1",
        "Harbor",
        &["--resource", "--controller", "--namespaced=false"],
    );
    api(
        dir,
        "apps",
        "v1",
        "Deployment",
        &["--resource=false", "--controller"],
    );
    let frigate = tags_of(&read(dir, "api/v1/frigate_types.go"), "Frigate");
    assert!(
        frigate.contains(&"// +genclient".to_string()),
        "{frigate:?}"
    );
    assert!(!frigate.contains(&"// +genclient:nonNamespaced".to_string()));
    let harbor = tags_of(&read(dir, "api/v1/harbor_types.go"), "Harbor");
    assert!(harbor.contains(&"// +genclient".to_string()), "{harbor:?}");
    assert!(harbor.contains(&"// +genclient:nonNamespaced".to_string()));
    // The list types stay untagged.
    assert!(
        !tags_of(&read(dir, "api/v1/frigate_types.go"), "FrigateList")
            .iter()
            .any(|t| t.starts_with("// +genclient"))
    );
    let doc = read(dir, "api/v1/doc.go");
    assert!(
        doc.contains("// +groupName=ship.example.com\n\npackage v1\n"),
        "{doc}"
    );
    assert!(!doc.contains("+groupGoName"));
    let helpers = read(dir, "api/v1/client_helpers.go");
    assert!(helpers.contains("func Resource(resource string) schema.GroupResource {"));
    assert!(
        !helpers.contains("var SchemeGroupVersion"),
        "opbuilder's groupversion_info.go defines it"
    );
    // The core type has no package in the project, so nothing was written for it.
    assert!(!dir.join("api/apps").exists());
    assert_eq!(fs::read_dir(dir.join("api")).unwrap().count(), 1);
}

#[test]
fn edit_adds_clients_to_existing_apis_of_every_group_shape_once() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(
        dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/fleet",
            "--project-name",
            "fleet",
            "--multigroup",
            "--skip-post-steps",
        ],
    );
    api(
        dir,
        "foo.policy",
        "v1",
        "HealthCheckPolicy",
        &["--resource", "--controller"],
    );
    api(
        dir,
        "sea-creatures",
        "v1beta1",
        "Kraken",
        &["--resource", "--controller"],
    );
    api(
        dir,
        "sea-creatures",
        "v1beta2",
        "Leviathan",
        &["--resource", "--controller=false", "--namespaced=false"],
    );
    api(
        dir,
        "apps",
        "v1",
        "Deployment",
        &["--resource=false", "--controller"],
    );
    let before = full_snapshot(dir);

    let out = ok(dir, &["edit", "--plugins=typed-clients/v1-alpha"]);
    assert!(out.contains("3 API kind(s)"), "{out}");
    assert!(project(dir)["plugins"][KEY].is_mapping());
    for (dir_, kind, cluster, go_name) in [
        (
            "api/foo.policy/v1",
            "HealthCheckPolicy",
            false,
            Some("FooPolicy"),
        ),
        (
            "api/sea-creatures/v1beta1",
            "Kraken",
            false,
            Some("SeaCreatures"),
        ),
        (
            "api/sea-creatures/v1beta2",
            "Leviathan",
            true,
            Some("SeaCreatures"),
        ),
    ] {
        let types = read(
            dir,
            &format!("{dir_}/{}_types.go", kind.to_ascii_lowercase()),
        );
        let tags = tags_of(&types, kind);
        assert!(
            tags.contains(&"// +genclient".to_string()),
            "{kind}: {tags:?}"
        );
        assert_eq!(
            tags.contains(&"// +genclient:nonNamespaced".to_string()),
            cluster,
            "{kind}: {tags:?}"
        );
        let doc = read(dir, &format!("{dir_}/doc.go"));
        let group = dir_.split('/').nth(1).unwrap();
        assert!(
            doc.contains(&format!("// +groupName={group}.example.com\n")),
            "{doc}"
        );
        match go_name {
            Some(n) => assert!(doc.contains(&format!("// +groupGoName={n}\n")), "{doc}"),
            None => assert!(!doc.contains("+groupGoName"), "{doc}"),
        }
        assert!(dir.join(dir_).join("client_helpers.go").is_file());
    }
    // Only API packages, Makefile, hack scripts and PROJECT changed.
    let after = full_snapshot(dir);
    for (path, content) in &after {
        if before.get(path) != Some(content) {
            let p = path.to_string_lossy();
            assert!(
                p.starts_with("api/")
                    || p == "Makefile"
                    || p == "PROJECT"
                    || p.starts_with("hack/"),
                "{p} changed"
            );
        }
    }
    // Again: nothing changes.
    ok(dir, &["edit", "--plugins=typed-clients/v1-alpha"]);
    assert_eq!(after, full_snapshot(dir), "a second edit changed files");

    // Kept on: a later API gets its client without --plugins.
    api(
        dir,
        "ship",
        "v1",
        "Frigate",
        &["--resource", "--controller"],
    );
    let tags = tags_of(&read(dir, "api/ship/v1/frigate_types.go"), "Frigate");
    assert!(tags.contains(&"// +genclient".to_string()), "{tags:?}");
    assert!(!read(dir, "api/ship/v1/doc.go").contains("+groupGoName"));
}

#[test]
fn edit_refuses_a_types_file_without_its_kind_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(
        dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--skip-post-steps",
        ],
    );
    api(
        dir,
        "ship",
        "v1",
        "Frigate",
        &["--resource", "--controller"],
    );
    let f = dir.join("api/v1/frigate_types.go");
    let text = fs::read_to_string(&f)
        .unwrap()
        .replace("type Frigate struct", "type Boat struct");
    fs::write(&f, text).unwrap();
    let before = full_snapshot(dir);
    let out = opbuilder(dir)
        .args(["edit", "--plugins=typed-clients/v1-alpha"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("api/v1/frigate_types.go") && err.contains("type Frigate struct"),
        "{err}"
    );
    assert_eq!(before, full_snapshot(dir), "files changed");
}

#[test]
fn the_plugin_runs_after_go_v4_whatever_the_order_of_plugins() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(
        dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--plugins=typed-clients/v1-alpha,go/v4",
            "--skip-post-steps",
        ],
    );
    assert!(read(dir, "Makefile").contains("\ngenerate-client: ## "));
    api(
        dir,
        "ship",
        "v1",
        "Frigate",
        &[
            "--resource",
            "--controller",
            "--plugins=typed-clients/v1-alpha,go/v4",
        ],
    );
    let tags = tags_of(&read(dir, "api/v1/frigate_types.go"), "Frigate");
    assert!(tags.contains(&"// +genclient".to_string()), "{tags:?}");
}

#[test]
fn the_plugin_needs_go_v4_to_init_and_is_named_in_the_unknown_key_message() {
    let d = tempfile::tempdir().unwrap();
    let out = opbuilder(d.path())
        .args([
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--plugins=typed-clients/v1-alpha",
            "--skip-post-steps",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("go/v4"));
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    let out = opbuilder(d.path())
        .args([
            "init",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--plugins=typed/v1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("typed-clients/v1-alpha"));
}
