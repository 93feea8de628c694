//! `delete api` and `delete webhook` take `create`'s flags (the round trips of e2e/delete.rs
//! run each `create` command line as a `delete` one); what a flag says that PROJECT does not
//! record is a usage error naming both, with nothing written.

use crate::support::{init_project, ok, refused};
use std::path::Path;

const FRIGATE: &str = "--group ship --version v1 --kind Frigate";

/// Run `line` (words, with `{F}` for Frigate's flags), which must succeed.
fn run_ok(d: &Path, line: &str) {
    let line = line.replace("{F}", FRIGATE);
    ok(d, &line.split_whitespace().collect::<Vec<_>>());
}

/// `line` is a usage error naming each needle, and writes nothing.
fn usage(d: &Path, line: &str, needles: &[&str]) {
    let line = line.replace("{F}", FRIGATE);
    refused(d, &line.split_whitespace().collect::<Vec<_>>(), 2, needles);
}

#[test]
fn create_flags_that_differ_from_project_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    init_project(d, &[]);
    run_ok(
        d,
        "create api {F} --resource --controller --plural frigatez --skip-post-steps",
    );
    run_ok(
        d,
        "create webhook {F} --defaulting --defaulting-path /default-frigate --skip-post-steps",
    );
    usage(
        d,
        "delete api {F} --plural frigates",
        &["--plural frigates: PROJECT records ship/v1 Frigate with the plural frigatez"],
    );
    usage(
        d,
        "delete api {F} --namespaced=false",
        &["--namespaced=false: PROJECT records ship/v1 Frigate with --namespaced=true"],
    );
    usage(
        d,
        "delete api {F} --ssa",
        &["--ssa=true: PROJECT records ship/v1 Frigate with --ssa=false"],
    );
    usage(
        d,
        "delete api {F} --image=memcached:1.6.26-alpine3.19",
        &["--image: ship/v1 Frigate was not made by deploy-image/v1-alpha"],
    );
    usage(
        d,
        "delete webhook {F} --external-api-domain io",
        &["ship/v1 Frigate is the project's own, not another project's API"],
    );
    usage(
        d,
        "delete webhook {F} --defaulting --defaulting-path /mutate-frigate",
        &["--defaulting-path /mutate-frigate: PROJECT records ship/v1 Frigate with the path /default-frigate"],
    );
    usage(
        d,
        "delete webhook {F} --spoke v2",
        &["--spoke lists the versions the conversion webhook converts: add --conversion"],
    );
    // As `create` was given them they are taken; those about running `create` change nothing.
    run_ok(
        d,
        "delete webhook {F} --defaulting --defaulting-path /default-frigate --plural frigatez \
         --make=false --skip-post-steps --allow-missing-markers",
    );
    assert!(!d.join("internal/webhook").exists());
}

#[test]
fn a_conversion_goes_whole_so_spoke_names_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    init_project(d, &[]);
    run_ok(
        d,
        "create api {F} --resource --controller --skip-post-steps",
    );
    for v in ["v2", "v3"] {
        run_ok(
            d,
            &format!("create api --group ship --version {v} --kind Frigate --resource --controller=false --skip-post-steps"),
        );
    }
    run_ok(
        d,
        "create webhook {F} --conversion --spoke v2,v3 --skip-post-steps",
    );
    usage(
        d,
        "delete webhook {F} --conversion --spoke v3",
        &[
            "--spoke v3: the conversion webhook of ship/v1 Frigate converts v2,v3",
            "opbuilder delete api --group ship --version v3 --kind Frigate",
        ],
    );
    run_ok(d, "delete webhook {F} --conversion --spoke v3,v2");
    assert!(!d.join("internal/webhook/v1/frigate_webhook.go").exists());
}
