//! `opbuilder create webhook`: defaulting, validating and conversion webhooks for a kind.

use crate::out::outln;
use crate::planning::post::{self, Step};
use crate::planning::webhook::WebhookArgs;
use crate::plugins;
use anyhow::Result;
use std::path::Path;

pub fn run(root: &Path, args: &WebhookArgs) -> Result<()> {
    let (plan, notes) = plugins::plan_create_webhook(root, args)?;
    let Some(imports_before) = super::execute_create(
        root,
        &plan,
        &args.run,
        "create webhook",
        &args.res,
        "Scaffolded webhooks for",
    )?
    else {
        return Ok(());
    };
    for n in &notes {
        outln!("\n{n}");
    }
    // Go's post-steps, for a plan that writes Go (neither the Rust layout's nor external
    // plugins' alone do).
    let go = super::writes_go(&plan);
    if let Some(before) = imports_before.filter(|_| go) {
        // Webhooks live in their own packages; only a change to an API package (conversion's
        // hub and spokes) can change the DeepCopy methods.
        let (mut steps, packages) = post::create_steps(
            root,
            &before,
            &plan,
            args.res.external_api_module.as_deref(),
            args.run.make,
        );
        let generate = !packages.is_empty();
        if generate {
            steps.push(Step::Generate(packages));
        } else if args.run.make {
            post::skipped(
                &Step::Make("generate"),
                "no API package changed, so the DeepCopy methods stay as they are",
            );
        }
        post::run(root, &steps, generate)?;
    }
    // What comes next, with what did not run: `make generate` applies when an API package
    // changed (conversion's hub and spokes).
    super::print_create_next(root, &plan, &args.run, &args.res, || {
        !post::generate_packages(root, &post::written_go_files(&plan)).is_empty()
    });
    Ok(())
}
