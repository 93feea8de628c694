//! The Rust layout's `create webhook`: a kind's defaulting and validating webhooks
//! (src/webhooks/<group>_<version>_<kind>.rs) with an integration test, their wiring above the
//! markers of src/webhooks/mod.rs, and go/v4's webhook and cert-manager kustomize trees.

use super::api::{context, Kind, RustResourceCtx};
use super::context::module_name;
use crate::error::usage;
use crate::plan::{Edit, IfExists};
use crate::planning::parts;
use crate::planning::plugin::Cx;
use crate::planning::webhook::ResolvedWebhook;
use crate::plugins::golang::webhook as golang;
use crate::templates;
use anyhow::{bail, Result};
use serde::Serialize;
use std::path::Path;

/// Refuse what the Rust layout's webhooks cannot do yet.
fn check_supported(hook: &ResolvedWebhook, project: &crate::project::Project) -> Result<()> {
    let g = &hook.gvk;
    // The hub is the storage version: the first version of the kind created.
    let storage = project
        .resources
        .iter()
        .find(|r| r.group == g.group && r.kind == g.kind && r.api.is_some())
        .map(|r| r.version.clone())
        .unwrap_or_default();
    let what = if hook.conversion && storage != g.version {
        Some(format!(
            "--conversion with {} as the hub: the hub is the storage version, {storage} (the first version \
             created); run it with --version {storage}",
            g.version
        ))
    } else if hook.external {
        Some(format!(
            "webhooks for another project's kind ({} {}, --external-api-path) yet",
            g.qgroup(),
            g.kind
        ))
    } else {
        None
    };
    match what {
        Some(w) => Err(usage(format!(
            "the Rust layout (rust.opbuilder.io/v1-beta) does not support {w}.\n  Example of what it does: \
             opbuilder create webhook --group webapp --version v1 --kind Guestbook --defaulting --programmatic-validation"
        ))),
        None => Ok(()),
    }
}

/// The Rust layout's webhook files for a resolved request; records them in PROJECT.
pub fn plan_files(cx: &mut Cx, hook: &ResolvedWebhook) -> Result<()> {
    plan_files_in_order(cx, hook, false)
}

/// [`plan_files`], the validating webhook's sections before the defaulting one's when
/// `validation_first` (as a kind's files read when `create webhook` added its validation first
/// and its defaulting later: `delete webhook` compares them with both).
pub fn plan_files_in_order(
    cx: &mut Cx,
    hook: &ResolvedWebhook,
    validation_first: bool,
) -> Result<()> {
    check_supported(hook, cx.project)?;
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
            external: None,
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
    let test = format!("tests/{}_webhook_test.rs", ctx.webhook_mod);
    // Admission webhooks asked for now: added to the kind's module, or the module is written.
    let admission = hook.defaulting || hook.programmatic_validation;
    let had = hook.had.defaulting || hook.had.validation;
    // A kind with webhooks already: the new types are merged into its module and test above
    // their markers, and the user's code stays (go/v4 merges likewise). With --force, or for a
    // kind's first webhooks, both files are written with every type, now and before.
    // (`delete webhook` plans as the command made them: merged when the kind had admission
    // webhooks before.)
    let exists = if hook.undo {
        had
    } else {
        cx.root.join(&module).exists()
    };
    // Release 0.4.0's templates (a v1-alpha project, or `alpha update`'s ancestor) write the
    // module whole, with every type, and have no markers to merge above: planned as 0.4.0 did.
    let whole =
        crate::releases::active_version() == Some(crate::project::RUST_LAYOUT_V1_ALPHA_RELEASE);
    if whole && admission && had && !hook.force && exists {
        bail!(
            "{}/{} {} already has webhooks in {module}, whose layout ({}) cannot merge a second type into it; \
             carry the project to {} with `opbuilder alpha update` first (it keeps your code), or pass --force \
             to write the file again with every webhook type asked for now and before (it is replaced: move \
             your code aside first)",
            g.group,
            g.version,
            g.kind,
            crate::project::RUST_LAYOUT_V1_ALPHA,
            crate::project::RUST_LAYOUT
        );
    }
    let merge = admission && had && !hook.force && exists && !whole;
    if merge && !hook.undo {
        check_mergeable(cx.root, g, &module, &test)?;
        if hook.programmatic_validation {
            check_import_line(cx.root, &module, hook.core)?;
        }
    }
    ctx.res.conversion = hook.conversion || hook.had.conversion;
    let plan = &mut *cx.plan;
    let policy = if hook.force {
        IfExists::Overwrite
    } else {
        IfExists::Error
    };
    if admission {
        if !merge {
            for f in templates::render_tree("rust/webhook", &ctx, |_| true)? {
                plan.create(f.path, f.content, policy);
            }
        }
        // The sections of each webhook type the files gain, defaulting first (0.4.0's module
        // template has them all).
        let (defaulting, validation) = if whole {
            (false, false)
        } else if merge {
            (hook.defaulting, hook.programmatic_validation)
        } else {
            (ctx.res.defaulting, ctx.res.validation)
        };
        let mut order = [(defaulting, true), (validation, false)];
        if validation_first {
            order.reverse();
        }
        for (wanted, is_defaulting) in order {
            if wanted {
                webhook_type(plan, &ctx, is_defaulting, &module, &test)?;
            }
        }
        plan.part(parts::MANAGER_SETUP, |plan| -> Result<()> {
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
                let text = templates::render(&format!("rust/fragments/{fragment}.rs"), &ctx)?;
                plan.above_marker("src/webhooks/mod.rs", marker, vec![text]);
            }
            Ok(())
        })?;
    }
    if hook.conversion {
        conversion(plan, &ctx, hook, policy)?;
    }
    // go/v4's kustomize trees for webhooks; config/webhook/manifests.yaml is written by
    // `make manifests` from src/webhooks.
    for f in templates::render_tree("webhook", &ctx.res, |t| t.starts_with("config/"))? {
        if f.template == golang::NETWORK_POLICY_FILE {
            golang::network_policy(plan, f.content);
        } else {
            plan.create(f.path, f.content, IfExists::Skip);
        }
    }
    golang::enable_default_kustomize(plan, &ctx.res)?;
    golang::network_policy_entry(plan);
    hook.record(cx.project);
    Ok(())
}

/// The markers a webhook type's sections go above, by file: the kind's module and its test.
const MODULE_MARKERS: [&str; 5] = [
    "webhook-paths",
    "webhook-configurations",
    "webhook-routes",
    "webhook-handlers",
    "webhook-tests",
];
const TEST_MARKERS: [&str; 1] = ["webhook-checks"];

/// Refuse to merge into a kind's webhook files that lack the markers new sections go above
/// (written by opbuilder 0.4.0, or the markers removed), before anything is written.
fn check_mergeable(root: &Path, g: &crate::resource::Gvk, module: &str, test: &str) -> Result<()> {
    for (file, markers) in [(module, &MODULE_MARKERS[..]), (test, &TEST_MARKERS[..])] {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        if let Some(m) = markers
            .iter()
            .find(|m| !crate::markers::scaffold::has_marker(&text, "//", m))
        {
            bail!(
                "{}/{} {} already has webhooks, and {file} has no line `// +kubebuilder:scaffold:{m}` \
                 to add the new webhook type above (files written by opbuilder 0.4.0 have none); \
                 put the markers back as a new project has them, or pass --force to write the kind's \
                 webhook files again with every type asked for now and before (they are replaced: \
                 move your code aside first)",
                g.group,
                g.version,
                g.kind
            );
        }
    }
    Ok(())
}

/// The module's import of the webhook server, as its template writes it.
const WEBHOOK_IMPORT: &str = "use crate::webhook::{self, Cluster, Route, Webhook};";

/// The import a validating webhook adds to its module, and where: after [`WEBHOOK_IMPORT`], or
/// before it for a core kind (whose validation names no `FieldError`), as rustfmt orders them.
fn validation_import(core: bool) -> (fn(String, String) -> Edit, &'static str) {
    if core {
        (
            |anchor, text| Edit::BeforeLine { anchor, text },
            "use crate::webhook::Validation;",
        )
    } else {
        (
            |anchor, text| Edit::AfterLine { anchor, text },
            "use crate::webhook::{FieldError, Validation};",
        )
    }
}

/// Refuse to merge a validating webhook into a module without the line its import goes beside.
fn check_import_line(root: &Path, module: &str, core: bool) -> Result<()> {
    let text = std::fs::read_to_string(root.join(module)).unwrap_or_default();
    let import = validation_import(core).1;
    if text
        .lines()
        .any(|l| l.trim() == import || l.trim() == WEBHOOK_IMPORT)
    {
        return Ok(());
    }
    bail!(
        "{module} has no line `{WEBHOOK_IMPORT}` to add the validation's `{import}` beside; put the line \
         back as a new project has it, or pass --force to write the kind's webhook files again with every \
         type asked for now and before (they are replaced: move your code aside first)"
    )
}

/// One admission webhook type's sections in the kind's module (its configuration, route,
/// handler and unit tests) and in its test (the check on an API server), each above its marker.
fn webhook_type(
    plan: &mut crate::plan::Plan,
    ctx: &RustResourceCtx,
    defaulting: bool,
    module: &str,
    test: &str,
) -> Result<()> {
    let mut one = ctx.clone();
    one.res.defaulting = defaulting;
    one.res.validation = !defaulting;
    if !defaulting {
        // The names the validation uses, beside the module's import of the webhook server (in
        // rustfmt's order), as 0.4.0 imported them: its modules merge with these.
        let (edit, text) = validation_import(ctx.res.core);
        plan.update(module, edit(WEBHOOK_IMPORT.to_string(), text.to_string()));
    }
    for (file, marker, fragment) in [
        (module, "webhook-paths", "path"),
        (module, "webhook-configurations", "configuration"),
        (module, "webhook-routes", "route"),
        (module, "webhook-handlers", "handler"),
        (module, "webhook-tests", "tests"),
        (test, "webhook-checks", "check"),
    ] {
        let text = templates::render(&format!("rust/fragments/webhook/{fragment}.rs"), &one)?;
        plan.above_marker(file, marker, vec![text]);
    }
    Ok(())
}

/// A spoke version in the conversion templates.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spoke {
    version: String,
    version_mod: String,
}

/// What the conversion templates see.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConversionCtx<'a> {
    #[serde(flatten)]
    ctx: &'a RustResourceCtx,
    /// `src/webhooks/<group>_<kind>_conversion.rs`.
    conversion_mod: String,
    spokes: Vec<Spoke>,
}

/// The conversion webhook of a kind: its module and test, its registration, and go/v4's CRD
/// patch that makes the API server call it.
fn conversion(
    plan: &mut crate::plan::Plan,
    ctx: &RustResourceCtx,
    hook: &ResolvedWebhook,
    policy: IfExists,
) -> Result<()> {
    let mut spokes: Vec<String> = hook.had.spoke.clone();
    for s in &hook.spoke {
        if !spokes.contains(s) {
            spokes.push(s.clone());
        }
    }
    let cctx = ConversionCtx {
        ctx,
        conversion_mod: format!("{}_{}_conversion", ctx.group_mod, ctx.kind_mod),
        spokes: spokes
            .iter()
            .map(|v| Spoke {
                version: v.clone(),
                version_mod: module_name(v),
            })
            .collect(),
    };
    for f in templates::render_tree("rust/conversion", &cctx, |_| true)? {
        plan.create(f.path, f.content, policy);
    }
    let text = templates::render("rust/fragments/conversion.rs", &cctx)?;
    plan.part(parts::MANAGER_SETUP, |plan| {
        plan.update(
            "src/webhooks/mod.rs",
            Edit::SortedAboveMarker {
                marker: "webhook-modules".into(),
                line: format!("pub mod {};", cctx.conversion_mod),
            },
        );
        plan.above_marker("src/webhooks/mod.rs", "conversions", vec![text]);
    });
    // go/v4's CRD patch (strategy Webhook, the Service's /convert) and CA injection.
    for f in templates::render_tree("webhook-conversion", &ctx.res, |t| t.starts_with("config/"))? {
        plan.create(f.path, f.content, IfExists::Skip);
    }
    golang::plan_crd_conversion_patch(plan, &ctx.res)
}
