//! `create api --ssa` (server-side apply, as Kubebuilder's main branch defines it after v4.15):
//! the flag's rules, the markers and Makefile generator it adds, what PROJECT records, and the
//! warnings (not failures) when a user's files have no place for an edit. The whole tree is the
//! golden scenario e2e/testdata/ssa; `alpha generate` replays it (e2e/generate.rs); the e2e
//! golden stage builds and lints it with the apply configurations generated.

use crate::support::{full_snapshot, init_project, opbuilder, read};
use std::fs;
use std::path::Path;

fn api(dir: &Path, args: &str) -> std::process::Output {
    let mut a = vec!["create", "api", "--skip-post-steps"];
    a.extend(args.split_whitespace());
    opbuilder(dir).args(&a).output().unwrap()
}

fn ok(out: std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "stderr: {err}\nstdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    err
}

/// The lines of `text` from the one holding `from`, `n` of them.
fn lines_from<'a>(text: &'a str, from: &str, n: usize) -> Vec<&'a str> {
    let all: Vec<&str> = text.lines().collect();
    let i = all
        .iter()
        .position(|l| *l == from)
        .unwrap_or_else(|| panic!("no line {from:?} in:\n{text}"));
    all[i..(i + n).min(all.len())].to_vec()
}

fn ssa_in_project(d: &Path, kind: &str) -> bool {
    let p: serde_yaml::Value = serde_yaml::from_str(&read(d, "PROJECT")).unwrap();
    let r = p["resources"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|r| r["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("{kind} not in PROJECT"));
    r["api"]["ssa"].as_bool().unwrap_or(false)
}

#[test]
fn ssa_without_types_is_a_usage_error_and_touches_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    for args in [
        "--group ship --version v1 --kind Frigate --resource=false --controller --ssa",
        "--group ship --version v1 --kind Frigate --controller --ssa --external-api-path example.org/fleet/api/v1",
    ] {
        let before = full_snapshot(d);
        let out = api(d, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert!(err.contains("--ssa"), "{args}: {err}");
        assert!(err.contains("Example: opbuilder create api"), "{args}: {err}");
        assert_eq!(before, full_snapshot(d), "{args} changed the project");
    }
    // A value that is not a boolean is refused by the parser.
    let before = full_snapshot(d);
    let out = api(d, "--group ship --version v1 --kind Frigate --ssa=maybe");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(before, full_snapshot(d));
}

#[test]
fn ssa_marks_the_package_opts_other_kinds_out_and_generates_in_make_manifests() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    ok(api(
        d,
        "--group ship --version v1 --kind Frigate --resource --controller",
    ));
    // A project without --ssa has none of it.
    assert!(!read(d, "Makefile").contains("applyconfiguration"));
    assert!(!read(d, "api/v1/groupversion_info.go").contains("ac:generate"));
    assert!(!read(d, "api/v1/frigate_types.go").contains("ac:generate"));

    ok(api(
        d,
        "--group ship --version v1 --kind Cruiser --resource --controller --ssa",
    ));
    assert!(ssa_in_project(d, "Cruiser"));
    assert!(!ssa_in_project(d, "Frigate"));
    assert_eq!(
        lines_from(
            &read(d, "api/v1/groupversion_info.go"),
            "// +kubebuilder:object:generate=true",
            2
        ),
        [
            "// +kubebuilder:object:generate=true",
            "// +kubebuilder:ac:generate=true"
        ]
    );
    assert_eq!(
        lines_from(&read(d, "api/v1/cruiser_types.go"), "// +genclient", 5),
        [
            "// +genclient",
            "// +kubebuilder:ac:generate=true",
            "// +kubebuilder:object:root=true",
            "// +kubebuilder:subresource:status",
            ""
        ]
    );
    // The kind made earlier opts out, right below its root marker (where Kubebuilder puts it).
    assert_eq!(
        lines_from(
            &read(d, "api/v1/frigate_types.go"),
            "// +kubebuilder:object:root=true",
            2
        ),
        [
            "// +kubebuilder:object:root=true",
            "// +kubebuilder:ac:generate=false"
        ]
    );
    let makefile = read(d, "Makefile");
    assert!(
        makefile.contains("\t\"$(CONTROLLER_GEN)\" rbac:roleName=manager-role crd webhook applyconfiguration:headerFile=\"hack/boilerplate.go.txt\" paths=\"./...\""),
        "{makefile}"
    );
    assert!(
        makefile.contains("manifests: controller-gen ## ")
            && makefile.contains("apply configurations")
    );

    // A later kind without --ssa in that package opts out from the start; the other package is untouched.
    ok(api(
        d,
        "--group ship --version v1 --kind Dinghy --resource --controller",
    ));
    assert_eq!(
        lines_from(
            &read(d, "api/v1/dinghy_types.go"),
            "// +kubebuilder:ac:generate=false",
            2
        ),
        [
            "// +kubebuilder:ac:generate=false",
            "// +kubebuilder:object:root=true"
        ]
    );
    ok(api(
        d,
        "--group ship --version v2 --kind Frigate --resource --controller=false",
    ));
    assert!(!read(d, "api/v2/groupversion_info.go").contains("ac:generate"));
    assert!(!read(d, "api/v2/frigate_types.go").contains("ac:generate"));

    // A cluster-scoped kind: not namespaced for the generated clients either.
    ok(api(d, "--group ship --version v2 --kind Fleet --resource --controller=false --namespaced=false --ssa"));
    assert_eq!(
        lines_from(&read(d, "api/v2/fleet_types.go"), "// +genclient", 6),
        [
            "// +genclient",
            "// +genclient:nonNamespaced",
            "// +kubebuilder:ac:generate=true",
            "// +kubebuilder:object:root=true",
            "// +kubebuilder:subresource:status",
            "// +kubebuilder:resource:scope=Cluster"
        ]
    );
    assert!(read(d, "api/v2/frigate_types.go")
        .contains("// +kubebuilder:object:root=true\n// +kubebuilder:ac:generate=false\n"));
    // The Makefile is edited once.
    assert_eq!(read(d, "Makefile"), makefile);

    // Server-side apply cannot be switched off: --force without --ssa keeps it.
    ok(api(
        d,
        "--group ship --version v1 --kind Cruiser --resource --controller --force",
    ));
    assert!(ssa_in_project(d, "Cruiser"));
    assert!(read(d, "api/v1/cruiser_types.go").contains("// +genclient\n"));
    // Running --ssa again on an SSA kind adds nothing twice.
    ok(api(
        d,
        "--group ship --version v1 --kind Cruiser --resource --controller=false --force --ssa",
    ));
    let gv = read(d, "api/v1/groupversion_info.go");
    assert_eq!(
        gv.matches("+kubebuilder:ac:generate=true").count(),
        1,
        "{gv}"
    );
    let frigate = read(d, "api/v1/frigate_types.go");
    assert_eq!(
        frigate.matches("+kubebuilder:ac:generate").count(),
        1,
        "{frigate}"
    );
}

#[test]
fn without_a_license_header_the_generator_has_no_header_file() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &["--license", "none"]);
    ok(api(
        d,
        "--group ship --version v1 --kind Cruiser --resource --controller --ssa",
    ));
    let makefile = read(d, "Makefile");
    assert!(
        makefile.contains("crd webhook applyconfiguration paths=\"./...\""),
        "{makefile}"
    );
}

#[test]
fn edited_files_without_a_place_for_an_edit_get_a_warning_not_a_failure() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    ok(api(
        d,
        "--group ship --version v1 --kind Frigate --resource --controller",
    ));
    // The user rewrote the manifests recipe, dropped the root marker of Frigate and the package
    // marker, and added types of their own that PROJECT does not list.
    let makefile = read(d, "Makefile").replace(
        "rbac:roleName=manager-role crd webhook",
        "crd rbac:roleName=manager-role webhook",
    );
    fs::write(d.join("Makefile"), &makefile).unwrap();
    let frigate = read(d, "api/v1/frigate_types.go")
        .replacen(
            "// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status",
            "// +kubebuilder:subresource:status",
            1,
        )
        .replace(
            "// +kubebuilder:object:root=true",
            "//+kubebuilder:object:root=true",
        );
    fs::write(d.join("api/v1/frigate_types.go"), &frigate).unwrap();
    let gv = read(d, "api/v1/groupversion_info.go")
        .replace("// +kubebuilder:object:generate=true\n", "");
    fs::write(d.join("api/v1/groupversion_info.go"), &gv).unwrap();
    fs::write(d.join("api/v1/handmade_types.go"), "package v1\n").unwrap();

    let err = ok(api(
        d,
        "--group ship --version v1 --kind Cruiser --resource --controller --ssa",
    ));
    for needle in [
        "warning: the Makefile's manifests recipe",
        "warning: api/v1/groupversion_info.go has no `// +kubebuilder:object:generate=true` line",
        "warning: api/v1/frigate_types.go has no `// +kubebuilder:object:root=true` line",
        "warning: api/v1/handmade_types.go holds types PROJECT does not list",
    ] {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    // Those files are as the user left them; the kind itself was scaffolded and recorded.
    assert_eq!(read(d, "Makefile"), makefile);
    assert_eq!(read(d, "api/v1/frigate_types.go"), frigate);
    assert_eq!(read(d, "api/v1/groupversion_info.go"), gv);
    assert!(ssa_in_project(d, "Cruiser"));
    assert!(d.join("api/v1/cruiser_types.go").is_file());
}
