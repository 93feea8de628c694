//! The Rust layout's `create webhook`: a kind's defaulting and validating webhooks
//! (src/webhooks/<group>_<version>_<kind>.rs) with an integration test, their wiring above the
//! markers of src/webhooks/mod.rs, and go/v4's webhook and cert-manager kustomize trees.

use super::api::{context, Kind};
use crate::error::usage;
use crate::plan::{Edit, IfExists};
use crate::planning::plugin::Cx;
use crate::planning::webhook::ResolvedWebhook;
use crate::templates;
use anyhow::{bail, Result};

/// Refuse what the Rust layout's webhooks cannot do yet.
fn check_supported(hook: &ResolvedWebhook) -> Result<()> {
    let what = if hook.conversion {
        Some("--conversion (conversion webhooks come later; until then, several versions of a kind share one schema)")
    } else if hook.external {
        Some("--external-api-path")
    } else {
        None
    };
    match what {
        Some(w) => Err(usage(format!(
            "the Rust layout (rust.opbuilder.io/v1-alpha) does not support {w}.\n  Example of what it does: \
             opbuilder create webhook --group webapp --version v1 --kind Guestbook --defaulting --programmatic-validation"
        ))),
        None => Ok(()),
    }
}

/// The Rust layout's webhook files for a resolved request; records them in PROJECT.
pub fn plan_files(cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
    check_supported(hook)?;
    let g = &hook.gvk;
    let api = hook.existing.as_ref().and_then(|r| r.api.as_ref());
    let mut ctx = context(
        cx,
        Kind {
            gvk: g,
            plural: &hook.plural,
            core: hook.core,
            namespaced: api.is_none_or(|a| a.namespaced),
            has_api: api.is_some(),
            storage: false,
        },
    )?;
    // What the files hold once this command is done: the webhooks asked for and those before.
    ctx.res.defaulting = hook.defaulting || hook.had.defaulting;
    ctx.res.validation = hook.programmatic_validation || hook.had.validation;
    for (given, had, path) in [
        (
            &hook.defaulting_path,
            &hook.had.defaulting_path,
            &mut ctx.res.mutating_path,
        ),
        (
            &hook.validation_path,
            &hook.had.validation_path,
            &mut ctx.res.validating_path,
        ),
    ] {
        match given {
            Some(p) => *path = p.clone(),
            None if !had.is_empty() => *path = had.clone(),
            None => {}
        }
    }
    let module = format!("src/webhooks/{}.rs", ctx.webhook_mod);
    if (hook.had.defaulting || hook.had.validation) && !hook.force && cx.root.join(&module).exists()
    {
        bail!(
            "{}/{} {} already has webhooks in {module}; pass --force to write it again with every webhook \
             type asked for now and before (the file is replaced: move your code aside first)",
            g.group,
            g.version,
            g.kind
        );
    }
    let plan = &mut *cx.plan;
    let policy = if hook.force {
        IfExists::Overwrite
    } else {
        IfExists::Error
    };
    for f in templates::render_tree("rust-webhook", &ctx, |_| true)? {
        plan.create(f.path, f.content, policy);
    }
    // go/v4's kustomize trees for webhooks; config/webhook/manifests.yaml is written by
    // `make manifests` from src/webhooks.
    for f in templates::render_tree("webhook", &ctx.res, |t| t.starts_with("config/"))? {
        plan.create(f.path, f.content, IfExists::Skip);
    }
    crate::plugins::golang::webhook::enable_default_kustomize(plan, &ctx.res)?;
    plan.update(
        "src/webhooks/mod.rs",
        Edit::SortedAboveMarker {
            marker: "webhook-modules".into(),
            line: format!("pub mod {};", ctx.webhook_mod),
        },
    );
    for (marker, fragment) in [
        ("webhook-routes", "webhook_routes"),
        ("webhook-configurations", "webhook_configurations"),
    ] {
        let text = templates::render(&format!("fragments/rust/{fragment}.rs"), &ctx)?;
        plan.above_marker("src/webhooks/mod.rs", marker, vec![text]);
    }
    hook.record(cx.project);
    Ok(())
}
