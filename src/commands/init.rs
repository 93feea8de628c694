//! `opbuilder init`: a new operator project (go/v4 + kustomize/v2 unless --plugins says more).

use crate::out::{errln, outln};
use crate::planning::init::{check_not_initialized, InitArgs};
use crate::planning::post::{self, Step};
use crate::plugins;
use anyhow::{bail, Result};
use std::path::Path;

pub fn run(root: &Path, args: &InitArgs) -> Result<()> {
    let (plan, project) = plugins::plan_init(root, args)?;
    let others = check_not_initialized(root)?;
    let rust = project.layout.iter().any(|k| k == plugins::rust::KEY);
    let go = project
        .layout
        .iter()
        .any(|k| k == crate::project::LAYOUT || k == crate::project::BASE_GO);
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
    if !super::execute(
        root,
        &plan,
        args.dry_run,
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
    if rust {
        outln!(
            "\nNext: add an API with\n  opbuilder create api --group <group> --version v1 --kind <Kind>\n\
             then build and test with\n  make test"
        );
        return Ok(());
    }
    if !go {
        outln!(
            "\nLater commands run the plugins of PROJECT's layout ({}).",
            project.layout.join(", ")
        );
        return Ok(());
    }
    if !args.skip_post_steps {
        post::run(root, &[Step::GoModTidy], true)?;
    }
    outln!("\nNext: add an API with\n  opbuilder create api --group <group> --version v1 --kind <Kind>");
    Ok(())
}
