//! `opbuilder create api`: API types and/or a controller, wired into main.go, kustomize and PROJECT.

use crate::out::errln;
use crate::planning::api::ApiArgs;
use crate::planning::post::{self, Step};
use crate::plugins;
use anyhow::Result;
use std::path::Path;

pub fn run(root: &Path, args: &ApiArgs) -> Result<()> {
    let ((plan, did_resource, _external, notes), project) =
        plugins::plan_create_api_keeping_project(root, args)?;
    // The process ends after this command, and the system takes its memory back at once;
    // freeing every string of a large PROJECT one by one first (a tenth of `create api` in a
    // project of 200 kinds) would be work for nothing. Only here: `alpha generate` plans many
    // commands in one process and drops each project.
    std::mem::forget(project);
    let Some(imports_before) = super::execute_create(
        root,
        &plan,
        &args.run,
        "create api",
        &args.res,
        "Scaffolded",
    )?
    else {
        return Ok(());
    };
    for n in &notes {
        errln!("{n}");
    }
    // Go's post-steps, for a plan that writes Go (neither the Rust layout's nor external
    // plugins' alone do).
    let go = super::writes_go(&plan);
    if let Some(before) = imports_before.filter(|_| go) {
        let (mut steps, packages) = post::create_steps(
            root,
            &before,
            &plan,
            args.res.external_api_module.as_deref(),
            did_resource && args.run.make,
        );
        let generate = !packages.is_empty();
        if generate {
            steps.push(Step::Generate(packages));
            if args.image.image.is_some() {
                // As Kubebuilder's deploy-image plugin: the CRD and RBAC follow at once.
                steps.push(Step::Make("manifests"));
            }
        }
        post::run(root, &steps, generate)?;
    }
    // What comes next, as the plugin that planned the files says it, with what did not run.
    super::print_create_next(root, &plan, &args.run, &args.res, || did_resource);
    Ok(())
}
