//! `opbuilder create api`: API types and/or a controller, wired into main.go, kustomize and PROJECT.

use crate::out::{errln, outln};
use crate::planning::api::ApiArgs;
use crate::planning::post::{self, Step};
use crate::plugins;
use anyhow::Result;
use std::path::Path;

pub fn run(root: &Path, args: &ApiArgs) -> Result<()> {
    let ((plan, did_resource, _external, notes), project) =
        plugins::plan_create_api_keeping_project(root, args)?;
    let rust = project.layout.iter().any(|k| k == plugins::rust::KEY);
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
    if !rust && !super::writes_go(&plan) {
        // External plugins alone: no Go to tidy or generate.
        return Ok(());
    }
    if rust {
        outln!(
            "\nNext: fill in the Spec and Status of the types and the reconcile of the controller under src/, then run\n  make manifests test"
        );
        return Ok(());
    }
    if let Some(before) = imports_before {
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
    if let Some(image) = &args.image.image {
        outln!(
            "\nThe controller deploys {image} for each {} object (the image is the {}_IMAGE variable in \
             config/manager/manager.yaml).\nNext: after changing the *_types.go file, run\n  make manifests",
            args.res.kind,
            args.res.kind.to_ascii_uppercase()
        );
    } else if did_resource {
        outln!("\nNext: fill in the Spec and Status in the *_types.go file, then run\n  make manifests");
    } else if let Some(controller) = plan.ops.iter().find_map(|op| match op {
        crate::plan::Op::Create { path, .. }
            if path.to_string_lossy().ends_with("_controller.go") =>
        {
            Some(path.display().to_string())
        }
        _ => None,
    }) {
        outln!(
            "\nNext: write the reconcile logic in {controller} (its +kubebuilder:rbac markers grant \
             the access it needs), then run\n  make manifests"
        );
    }
    Ok(())
}
