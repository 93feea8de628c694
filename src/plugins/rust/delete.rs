//! The Rust layout's part of `delete api` and `delete webhook`: what its `create` wrote,
//! planned again by api.rs and webhook.rs as they would write it into the project without
//! what goes, and what else goes or is listed: config/rbac/role.yaml without the rules of a
//! controller that goes (as `make manifests` would write it), the CRD `make manifests` wrote
//! for a kind that goes, and the code that would still use the kind's modules.

use super::api::{self, Kind, RustResourceCtx};
use super::context::module_name;
use super::rbac::{self, Rule};
use super::webhook;
use crate::plan::{IfExists, Op};
use crate::planning::api::ResolvedResource;
use crate::planning::delete::{Undo, Uses};
use crate::planning::plugin::Cx;
use crate::planning::webhook::ResolvedWebhook;
use crate::plugins::golang::delete as golang;
use crate::project::{Project, Resource};
use crate::resource::{self, Gvk};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

const ROLE: &str = "config/rbac/role.yaml";

/// The Rust layout's `delete api`: what `create api` wrote (api.rs), and what else goes.
pub fn delete_api(cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
    api::plan_files(cx, res)?;
    extras_of_api(cx, res, undo, false)
}

/// The context `create api` rendered `res` with.
fn context_of(cx: &Cx, res: &ResolvedResource) -> Result<RustResourceCtx> {
    api::context(
        cx,
        Kind {
            gvk: &res.gvk,
            plural: &res.plural,
            core: res.core,
            namespaced: res.namespaced,
            has_api: res.do_resource || res.in_project_api,
            storage: api::is_storage(cx.project, res),
            external: None,
        },
    )
}

/// The API group of `r`'s rules: `""` for the core group.
fn api_group(project: &Project, r: &Resource) -> String {
    if r.core && r.group == "core" {
        return String::new();
    }
    let (domain, _) = resource::recorded_domain_and_path(project, r);
    Gvk {
        group: r.group.to_string(),
        version: r.version.to_string(),
        kind: r.kind.clone(),
        domain,
    }
    .qgroup()
}

/// The rules every controller of `project` declares (deploy-image's own for its APIs).
fn controllers_rules(project: &Project) -> Vec<Rule> {
    let deploy = crate::plugins::deployimage::recorded(project).unwrap_or_default();
    let mut out = vec![];
    for r in &project.resources {
        if !r.controller && r.controllers.is_empty() {
            continue;
        }
        let plural = if r.plural.is_empty() {
            crate::flect::pluralize(&r.kind.to_ascii_lowercase())
        } else {
            r.plural.clone()
        };
        let group = api_group(project, r);
        let image = deploy
            .iter()
            .any(|d| d.group == r.group && d.version == r.version && d.kind == r.kind);
        if image {
            out.extend(rbac::deploy_image_rules(&group, &plural));
        } else {
            out.extend(rbac::controller_rules(&group, &plural, r.core));
        }
    }
    out
}

/// config/rbac/role.yaml without the rules `gone` (verb by verb), keeping every rule the
/// manager and the controllers that stay declare: as `make manifests` writes it once the
/// controller has gone. A role that is not `make manifests`' is listed instead.
fn role_without(cx: &Cx, gone: &[Rule], undo: &mut Undo) {
    let Some(text) = golang::read(cx.root, ROLE) else {
        return;
    };
    let Some(rules) = rbac::read_rules(&text) else {
        undo.generated(ROLE, false, "make manifests");
        return;
    };
    let mut verbs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for r in &rules {
        for res in &r.resources {
            verbs
                .entry((r.group.clone(), res.clone()))
                .or_default()
                .extend(r.verbs.iter().cloned());
        }
    }
    for r in gone {
        for res in &r.resources {
            if let Some(v) = verbs.get_mut(&(r.group.clone(), res.clone())) {
                for verb in &r.verbs {
                    v.remove(verb);
                }
            }
        }
    }
    let mut stays = rbac::manager_rules();
    stays.extend(controllers_rules(&undo.after));
    for r in &stays {
        for res in &r.resources {
            if let Some(v) = verbs.get_mut(&(r.group.clone(), res.clone())) {
                v.extend(r.verbs.iter().cloned());
            }
        }
    }
    let left: Vec<Rule> = verbs
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|((group, res), v)| Rule {
            group,
            resources: vec![res],
            verbs: v.into_iter().collect(),
        })
        .collect();
    let new = rbac::role_yaml(&left, cx.project.namespaced);
    if new != text {
        undo.op(Op::Create {
            path: ROLE.into(),
            content: new,
            if_exists: IfExists::Overwrite,
            part: None,
        });
    }
}

/// What goes with a kind's types and controller beside the files `create api` wrote: its CRD,
/// its rules in the role, and the code that would still use its modules. `deploy_image`: the
/// controller is deploy-image's.
pub(crate) fn extras_of_api(
    cx: &mut Cx,
    res: &ResolvedResource,
    undo: &mut Undo,
    deploy_image: bool,
) -> Result<()> {
    let ctx = context_of(cx, res)?;
    golang::kustomize_bases(&ctx.res, undo);
    let project = undo.after.clone();
    if res.do_resource {
        let crd = format!(
            "config/crd/bases/{}_{}.yaml",
            ctx.res.qgroup, ctx.res.plural
        );
        let versions_stay = project
            .resources
            .iter()
            .any(|r| r.group == res.gvk.group && r.kind == res.gvk.kind && r.api.is_some());
        if cx.root.join(&crd).is_file() {
            undo.generated(crd, !versions_stay, "make manifests");
        }
        let package_stays = project
            .resources
            .iter()
            .any(|r| r.group == res.gvk.group && r.version == res.gvk.version && r.api.is_some());
        undo.uses.push(Uses::Rust {
            module: format!("api::{}::{}", ctx.group_mod, ctx.version_mod),
            idents: ["", "Spec", "Status"]
                .iter()
                .map(|s| format!("{}{s}", ctx.type_name))
                .collect(),
            whole: !package_stays,
        });
    }
    if res.do_controller {
        let gone = if deploy_image {
            rbac::deploy_image_rules(&ctx.api_group, &ctx.res.plural)
        } else {
            rbac::controller_rules(&ctx.api_group, &ctx.res.plural, res.core)
        };
        role_without(cx, &gone, undo);
        undo.uses.push(Uses::Rust {
            module: format!("controllers::{}", ctx.controller_mod),
            idents: vec![],
            whole: true,
        });
    }
    undo.next("make manifests");
    Ok(())
}

/// The Rust layout's `delete webhook`: what `create webhook` wrote (webhook.rs: the kind's
/// module and test, their registration, the conversion's, go/v4's kustomize wiring), and what
/// else goes or is listed.
pub fn delete_webhook(cx: &mut Cx, hook: &ResolvedWebhook, undo: &mut Undo) -> Result<()> {
    webhook::plan_files(cx, hook)?;
    if hook.defaulting && hook.programmatic_validation {
        // Validation created first, defaulting merged in later: the other order of sections.
        let mut other = crate::plan::Plan::default();
        let mut project = cx.project.clone();
        let mut notes = vec![];
        let mut vcx = Cx {
            root: cx.root,
            plan: &mut other,
            project: &mut project,
            notes: &mut notes,
            plugin_args: &[],
        };
        if webhook::plan_files_in_order(&mut vcx, hook, true).is_ok() {
            undo.variants.push(other);
        }
    }
    if golang::metrics_certificate_on(cx.root) {
        golang::keep_for_metrics_certificate(cx.plan);
    }
    let api = hook.existing.as_ref().and_then(|r| r.api.as_ref());
    let ctx = api::context(
        cx,
        Kind {
            gvk: &hook.gvk,
            plural: &hook.plural,
            core: hook.core,
            namespaced: api.is_none_or(|a| a.namespaced),
            has_api: api.is_some(),
            storage: false,
            external: None,
        },
    )?;
    golang::kustomize_bases(&ctx.res, undo);
    if golang::spoke_only(hook) {
        return spoke_goes(cx, hook, undo);
    }
    let admission_stays = hook.had.defaulting || hook.had.validation;
    if (hook.defaulting || hook.programmatic_validation) && !admission_stays {
        undo.uses.push(Uses::Rust {
            module: format!("webhooks::{}", ctx.webhook_mod),
            idents: vec![],
            whole: true,
        });
    }
    if hook.conversion {
        undo.uses.push(Uses::Rust {
            module: format!(
                "webhooks::{}_{}_conversion",
                ctx.group_mod,
                module_name(&hook.gvk.kind)
            ),
            idents: vec![],
            whole: true,
        });
    }
    golang::generated_of_webhooks(cx.root, &ctx.res, undo);
    undo.next("make manifests");
    Ok(())
}

/// A spoke of a conversion webhook goes (its version is deleted): the conversion's module and
/// test, which `create webhook` wrote with every spoke, are written with those that stay, when
/// they are as it wrote them (else kept and named, or with `--force` written all the same).
fn spoke_goes(cx: &mut Cx, hook: &ResolvedWebhook, undo: &mut Undo) -> Result<()> {
    let files_of =
        |cx: &mut Cx, spokes: Vec<String>| -> Result<Vec<(std::path::PathBuf, String)>> {
            let mut h = hook.clone();
            h.defaulting = false;
            h.programmatic_validation = false;
            h.had = crate::project::Webhooks::default();
            h.spoke = spokes;
            let mut plan = crate::plan::Plan::default();
            let mut project = cx.project.clone();
            let mut notes = vec![];
            webhook::plan_files(
                &mut Cx {
                    root: cx.root,
                    plan: &mut plan,
                    project: &mut project,
                    notes: &mut notes,
                    plugin_args: &[],
                },
                &h,
            )?;
            Ok(plan
                .ops
                .into_iter()
                .filter_map(|op| match op {
                    Op::Create { path, content, .. }
                        if path.to_string_lossy().contains("_conversion") =>
                    {
                        Some((path, content))
                    }
                    _ => None,
                })
                .collect())
        };
    let mut all = hook.had.spoke.clone();
    all.extend(hook.spoke.iter().cloned());
    let with_all = files_of(cx, all)?;
    let with_left = files_of(cx, hook.had.spoke.clone())?;
    for (path, old) in with_all {
        let Some(now) = golang::read(cx.root, &path.to_string_lossy()) else {
            continue;
        };
        let Some((_, new)) = with_left.iter().find(|(p, _)| *p == path) else {
            continue;
        };
        if now != old {
            if undo.force {
                undo.forced.push(path.clone());
            } else {
                undo.kept.push(path.clone());
                continue;
            }
        }
        undo.op(Op::Create {
            path,
            content: new.clone(),
            if_exists: IfExists::Overwrite,
            part: None,
        });
    }
    Ok(())
}
