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
    if !super::writes_go(&plan) {
        // External plugins alone (or the Rust layout, which has its own hint below).
        if !crate::project::Project::load(root)
            .is_ok_and(|p| p.layout.iter().any(|k| k == plugins::rust::KEY))
        {
            return Ok(());
        }
    }
    if crate::project::Project::load(root)
        .is_ok_and(|p| p.layout.iter().any(|k| k == plugins::rust::KEY))
    {
        outln!("\nNext: fill in default and validate in src/webhooks/, then run\n  make manifests test");
        return Ok(());
    }
    if let Some(before) = imports_before {
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
    outln!("\nNext: fill in the webhook logic, then run\n  make manifests");
    Ok(())
}
