//! `opbuilder init`: a new operator project (go/v4 + kustomize/v2 unless --plugins says more).

use crate::out::errln;
use crate::planning::init::{check_not_initialized, InitArgs};
use crate::planning::post::{self, Step};
use crate::plugins;
use anyhow::{bail, Result};
use std::path::Path;

pub fn run(root: &Path, args: &InitArgs) -> Result<()> {
    let (plan, project) = plugins::plan_init(root, args)?;
    let others = check_not_initialized(root)?;
    // Go's checks and post-steps, for a plan that writes Go (neither the Rust layout's nor
    // external plugins' alone do).
    let go = super::writes_go(&plan);
    if go && !args.dry_run && !args.skip_post_steps && !args.skip_go_version_check {
        if let Some(v) = post::go_version() {
            if v < (1, 23, 0) || v.0 >= 2 {
                bail!(
                    "the installed Go is go{}.{}.{}; generated projects need Go 1.23 or newer (they declare go {}).\n  \
                     Install a newer Go, or pass --skip-go-version-check to scaffold anyway",
                    v.0,
                    v.1,
                    v.2,
                    crate::versions::pins().scaffold.go_directive
                );
            }
        }
    }
    if !others.is_empty() {
        errln!(
            "{} {} is not empty ({}); existing files are kept unless opbuilder must own them",
            crate::term::label("warning"),
            root.display(),
            others.join(", ")
        );
    }
    let rust = project
        .layout
        .iter()
        .any(|k| crate::project::is_rust_layout(k));
    if !super::execute(
        root,
        &plan,
        args.dry_run,
        false,
        "init",
        &if rust {
            format!(
                "Scaffolded project {:?} (a Cargo package, Rust on kube-rs):",
                project.project_name
            )
        } else if !go {
            format!("Scaffolded the project with {}:", project.layout.join(", "))
        } else {
            format!(
                "Scaffolded project {:?} (module {}):",
                project.project_name, project.repo
            )
        },
    )? {
        return Ok(());
    }
    if go && !args.skip_post_steps {
        post::run(root, &[Step::GoModTidy], true)?;
    }
    if rust && !args.skip_post_steps {
        post::cargo_lockfile(root);
    }
    // What comes next, as the plugin that planned the files says it, with what did not run.
    let mut skipped: Vec<super::Skipped> = vec![];
    if args.skip_post_steps {
        if go {
            skipped.push(("go mod tidy".into(), "--skip-post-steps"));
        }
        if rust {
            skipped.push((post::CARGO_LOCKFILE.into(), "--skip-post-steps"));
        }
    }
    super::print_next(root, plan.next.as_ref(), &skipped);
    Ok(())
}
