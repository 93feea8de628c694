//! The requests of `delete api` and `delete webhook` and what they resolve to: the `create`
//! commands PROJECT records (rebuilt from its entries, so that each plugin can plan again what
//! its `create` wrote), the PROJECT that is left, the refusals a deletion owes the project (a
//! version the CRD stores, a conversion's hub or spoke, webhooks still on the kind), and what a
//! plugin hands back beside the files its `create` wrote ([`Undo`]).

use super::api::ResolvedResource;
use super::webhook::ResolvedWebhook;
use crate::error::usage;
use crate::flect;
use crate::plan::undo::ByHand;
use crate::plan::{Op, Plan};
use crate::project::{Project, Resource, Webhooks};
use crate::resource::{self, Gvk};
use anyhow::{bail, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::delete_flags::{CreateApiFlags, CreateFlags, CreateWebhookFlags};
pub use super::uses::Uses;

/// The group, version and kind of what to delete, as `create` named them.
#[derive(Debug, Args)]
pub struct GvkFlags {
    /// API group, without the domain, as `create` was given it (`core` for Pods and Services)
    #[arg(
        long,
        default_value = "",
        hide_default_value = true,
        value_name = "GROUP"
    )]
    pub group: String,
    /// API version, such as v1, v1beta1, v2alpha1
    #[arg(long, value_name = "VERSION")]
    pub version: String,
    /// Kind, a CamelCase name such as App or MyCronJob
    #[arg(long, value_name = "KIND")]
    pub kind: String,
}

/// The flags of both `delete` commands about running them.
#[derive(Debug, Args)]
pub struct DeleteRunFlags {
    /// Remove the files `create` wrote even when they changed since, and delete even when other
    /// code still uses what is deleted
    #[arg(long)]
    pub force: bool,
    /// Show what would be removed and changed, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Plugins to plan the deletion with instead of PROJECT's (Kubebuilder's keys); a layout
    /// named must be the project's own
    #[arg(long, value_name = "KEYS")]
    pub plugins: Option<String>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  opbuilder delete api --group ingress --version v1beta1 --kind App
  opbuilder delete api --group ingress --version v1beta1 --kind App --dry-run
  opbuilder delete api --group ingress --version v1beta1 --kind App \\
      --resource=false --controller-name app-audit
  opbuilder delete api --group apps --version v1 --kind Deployment

What `create api` wrote goes again: its files, when they are as it wrote them (a file changed
since is kept and named, unless --force), and what it inserted into other files (cmd/main.go,
the suite, kustomizations, PROJECT). A kind with webhooks keeps its types until
`opbuilder delete webhook` has taken them away.")]
pub struct DeleteApiArgs {
    #[command(flatten)]
    pub res: GvkFlags,
    /// Delete the API types; --resource=false deletes the controller alone [default: true]
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub resource: Option<bool>,
    /// Delete the kind's controllers too [default: true]
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub controller: Option<bool>,
    /// Delete this controller of the kind alone (made with `create api --controller-name`)
    #[arg(long, value_name = "NAME")]
    pub controller_name: Option<String>,
    #[command(flatten)]
    pub run: DeleteRunFlags,
    #[command(flatten)]
    pub create: CreateFlags,
    #[command(flatten)]
    pub create_api: CreateApiFlags,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  opbuilder delete webhook --group ingress --version v1beta1 --kind App
  opbuilder delete webhook --group ingress --version v1beta1 --kind App --defaulting
  opbuilder delete webhook --group batch --version v1 --kind MyCronJob --conversion

Without a type flag, every webhook of the kind goes. The wiring that the last webhook of the
project needed (config/webhook, the cert-manager entries, the manager's webhook patch) goes
with it, unless the metrics certificate still uses cert-manager.")]
pub struct DeleteWebhookArgs {
    #[command(flatten)]
    pub res: GvkFlags,
    /// Delete the defaulting webhook
    #[arg(long)]
    pub defaulting: bool,
    /// Delete the validating webhook
    #[arg(long)]
    pub programmatic_validation: bool,
    /// Delete the conversion webhook (with every spoke it converts)
    #[arg(long)]
    pub conversion: bool,
    #[command(flatten)]
    pub run: DeleteRunFlags,
    #[command(flatten)]
    pub create: CreateFlags,
    #[command(flatten)]
    pub create_webhook: CreateWebhookFlags,
}

/// One `create` command PROJECT records, as it resolved.
#[derive(Debug, Clone)]
pub enum Create {
    Api(Box<ResolvedResource>),
    Webhook(Box<ResolvedWebhook>),
}

/// A resource as `create api` resolved it, rebuilt from PROJECT's entry `r`: its types when
/// `types`, its unnamed controller when `controller`, or the controller `named`.
pub fn api_of(
    project: &Project,
    r: &Resource,
    types: bool,
    controller: bool,
    named: Option<&str>,
) -> ResolvedResource {
    let (domain, path) = resource::recorded_domain_and_path(project, r);
    let default_plural = flect::pluralize(&r.kind.to_ascii_lowercase());
    let api = r.api.as_ref().filter(|_| types);
    ResolvedResource {
        gvk: Gvk {
            group: r.group.to_string(),
            version: r.version.to_string(),
            kind: r.kind.clone(),
            domain,
        },
        plural: if r.plural.is_empty() {
            default_plural.clone()
        } else {
            r.plural.clone()
        },
        default_plural,
        api_path: path,
        do_resource: api.is_some(),
        do_controller: controller || named.is_some(),
        in_project_api: r.api.is_some() && api.is_none(),
        core: r.core,
        external: r.external,
        external_module: (!r.module.is_empty()).then(|| r.module.clone()),
        controller_name: named.map(str::to_string),
        namespaced: r.api.as_ref().is_none_or(|a| a.namespaced),
        ssa: api.is_some_and(|a| a.ssa),
        force: false,
        deploy_image: None,
        undo: true,
    }
}

/// The webhooks `types` of PROJECT's entry `r` as `create webhook` resolved them, after the
/// webhooks `had` (for a kind whose entry `create webhook` made, no other entry).
pub fn webhook_of(
    project: &Project,
    r: &Resource,
    types: &Webhooks,
    had: &Webhooks,
) -> ResolvedWebhook {
    let (domain, path) = resource::recorded_domain_and_path(project, r);
    let mut existing = r.clone();
    existing.webhooks = None;
    let only_webhooks =
        r.api.is_none() && !r.controller && r.controllers.is_empty() && r.webhooks.is_some();
    let default_plural = flect::pluralize(&r.kind.to_ascii_lowercase());
    let path_of = |p: &str| (!p.is_empty()).then(|| p.to_string());
    ResolvedWebhook {
        gvk: Gvk {
            group: r.group.to_string(),
            version: r.version.to_string(),
            kind: r.kind.clone(),
            domain,
        },
        plural: if r.plural.is_empty() {
            default_plural
        } else {
            r.plural.clone()
        },
        api_path: path,
        core: r.core,
        external: r.external,
        external_api_module: (!r.module.is_empty()).then(|| r.module.clone()),
        existing: (!only_webhooks || had.any()).then_some(existing),
        had: had.clone(),
        defaulting: types.defaulting,
        programmatic_validation: types.validation,
        conversion: types.conversion,
        spoke: if types.conversion {
            types.spoke.clone()
        } else {
            vec![]
        },
        defaulting_path: path_of(&types.defaulting_path).filter(|_| types.defaulting),
        validation_path: path_of(&types.validation_path).filter(|_| types.validation),
        force: false,
        undo: true,
    }
}

/// The name of the controller in `<kind>_controller.go` in a list of named controllers.
fn own_controller(r: &Resource) -> String {
    r.kind.to_ascii_lowercase()
}

/// The `create` commands that made what PROJECT's entry `r` records: the types with the
/// kind's own controller, each named controller, the webhooks.
pub fn creates_of_entry(project: &Project, r: &Resource) -> Vec<Create> {
    let own = own_controller(r);
    let unnamed = r.controller || r.controllers.iter().any(|c| c.name == own);
    let mut out = vec![];
    if r.api.is_some() || unnamed {
        out.push(Create::Api(Box::new(api_of(
            project, r, true, unnamed, None,
        ))));
    }
    for c in r.controllers.iter().filter(|c| c.name != own) {
        let named = api_of(project, r, false, false, Some(&c.name));
        out.push(Create::Api(Box::new(named)));
    }
    if let Some(w) = r.webhooks.as_ref().filter(|w| w.any()) {
        let hook = webhook_of(project, r, w, &Webhooks::default());
        out.push(Create::Webhook(Box::new(hook)));
    }
    out
}

/// Every `create` command PROJECT records.
pub fn creates_of(project: &Project) -> Vec<Create> {
    project
        .resources
        .iter()
        .flat_map(|r| creates_of_entry(project, r))
        .collect()
}

/// The flags' group, version and kind, checked, and PROJECT's entry for them.
fn entry_for<'p>(project: &'p Project, f: &GvkFlags, command: &str) -> Result<&'p Resource> {
    let (group, version, kind) = (f.group.trim(), f.version.trim(), f.kind.trim());
    resource::validate_gvk(group, version, kind, &project.domain)?;
    match project.find(group, version, kind) {
        Some(r) => Ok(r),
        None => {
            let others: Vec<String> = project
                .resources
                .iter()
                .filter(|r| r.kind.eq_ignore_ascii_case(kind))
                .map(|r| format!("--group {} --version {}", shown_group(&r.group), r.version))
                .collect();
            let hint = if others.is_empty() {
                String::new()
            } else {
                format!("; PROJECT has {kind} with {}", others.join(" and with "))
            };
            bail!(
                "PROJECT records no {}/{version} {kind}, so there is nothing for `{command}` to delete{hint}",
                shown_group(group)
            )
        }
    }
}

/// A resource as messages name it: `ship/v1 Frigate`.
fn named(r: &Resource) -> String {
    format!("{}/{} {}", shown_group(&r.group), r.version, r.kind)
}

/// A group as the flag gives it (`""`, the domain's own group, shown as such).
fn shown_group(group: &str) -> String {
    if group.is_empty() {
        "\"\"".into()
    } else {
        group.to_string()
    }
}

/// The flags of the command that deletes `r`'s webhooks of `types`.
pub fn delete_webhook_command(r: &Resource, types: &Webhooks) -> String {
    let mut c = format!(
        "opbuilder delete webhook --group {} --version {} --kind {}",
        shown_group(&r.group),
        r.version,
        r.kind
    );
    for (on, flag) in [
        (types.defaulting, " --defaulting"),
        (types.validation, " --programmatic-validation"),
        (types.conversion, " --conversion"),
    ] {
        if on {
            c.push_str(flag);
        }
    }
    c
}

/// What `delete api` takes away.
#[derive(Debug)]
pub struct ApiTarget {
    /// The `create api` commands whose work goes.
    pub creates: Vec<ResolvedResource>,
    /// PROJECT as it is after the deletion.
    pub before: Project,
    /// When the version is a spoke of a conversion webhook: that conversion, of this spoke
    /// alone, as `create webhook` resolved it (the hub keeps converting the others).
    pub spoke_of: Option<ResolvedWebhook>,
}

/// Decide what `delete api` takes away: check the flags against PROJECT, refuse what would
/// break the project (webhooks on the kind, the storage version); a conversion's spoke goes
/// from its hub's list.
pub fn resolve_api(root: &Path, project: &Project, args: &DeleteApiArgs) -> Result<ApiTarget> {
    let r = entry_for(project, &args.res, "delete api")?.clone();
    super::delete_flags::check(project, &r, &args.create)?;
    let own = own_controller(&r);
    if let Some(n) = &args.controller_name {
        if args.resource == Some(true) {
            return Err(usage(format!(
                "--controller-name deletes one controller of the kind, and --resource deletes its types: give one of \
                 them, for example: opbuilder delete api --group {} --version {} --kind {} --controller-name {n}",
                shown_group(&r.group),
                r.version,
                r.kind
            )));
        }
        if args.controller == Some(false) {
            return Err(usage(
                "--controller-name names a controller to delete, and --controller=false keeps the controllers: drop one",
            ));
        }
        if !r.controllers.iter().any(|c| &c.name == n) || *n == own && r.controller {
            let names: Vec<&str> = r.controllers.iter().map(|c| c.name.as_str()).collect();
            bail!(
                "{} has no controller named {n:?}{}",
                named(&r),
                if names.is_empty() {
                    String::new()
                } else {
                    format!(" (PROJECT names {})", names.join(", "))
                }
            );
        }
    }
    let types = args.controller_name.is_none() && args.resource != Some(false);
    let controllers = args.controller_name.is_none() && args.controller != Some(false);
    if !types && !controllers && args.controller_name.is_none() {
        return Err(usage(
            "nothing to delete: both --resource and --controller are false",
        ));
    }
    let unnamed = r.controller || r.controllers.iter().any(|c| c.name == own);
    if types
        && r.api.is_none()
        && !args.resource.is_some_and(|v| v)
        && !unnamed
        && r.controllers.is_empty()
    {
        bail!(
            "{} has neither types nor a controller in PROJECT: nothing to delete",
            named(&r)
        );
    }
    if types && args.resource == Some(true) && r.api.is_none() {
        bail!(
            "{} has no API types in this project (PROJECT records no `api` for it); drop --resource to delete \
             what it has",
            named(&r)
        );
    }
    if types && !controllers && (unnamed || !r.controllers.is_empty()) && r.api.is_some() {
        return Err(usage(format!(
            "--controller=false would keep the kind's controller, which uses the types deleted; delete both (leave \
             --controller out), or the controller alone with --resource=false: opbuilder delete api --group {} \
             --version {} --kind {} --resource=false",
            shown_group(&r.group),
            r.version,
            r.kind
        )));
    }
    if !types && controllers && !unnamed {
        bail!(
            "{} has no controller of its own to delete{}",
            named(&r),
            if r.controllers.is_empty() {
                String::new()
            } else {
                " (pass --controller-name to delete a named one)".to_string()
            }
        );
    }
    let types = types && (r.api.is_some() || unnamed || !r.controllers.is_empty());
    if types {
        if let Some(w) = r.webhooks.as_ref().filter(|w| w.any()) {
            bail!(
                "{} has webhooks, which use its types: delete them first with\n  {}",
                named(&r),
                delete_webhook_command(&r, w)
            );
        }
    }
    let hub = if types && r.api.is_some() {
        check_version_goes(root, project, &r)?.cloned()
    } else {
        None
    };
    let mut before = project.clone();
    let mut creates = vec![];
    // A spoke: its conversion goes from the hub, which keeps converting the others.
    let spoke_of = hub.map(|hub| {
        let had = hub.webhooks.clone().unwrap_or_default();
        let mut left = had.clone();
        left.spoke.retain(|s| *s != r.version);
        let going = Webhooks {
            conversion: true,
            spoke: vec![r.version.to_string()],
            webhook_version: had.webhook_version.clone(),
            ..Default::default()
        };
        if let Some(h) = before.find_mut(&hub.group, &hub.version, &hub.kind) {
            h.webhooks = Some(left.clone());
        }
        webhook_of(project, &hub, &going, &left)
    });
    if types {
        before
            .resources
            .retain(|e| !e.is_gvk(&r.group, &r.version, &r.kind));
        creates.push(api_of(project, &r, true, unnamed, None));
        for c in r.controllers.iter().filter(|c| c.name != own) {
            creates.push(api_of(project, &r, false, false, Some(&c.name)));
        }
    } else {
        let e = before
            .find_mut(&r.group, &r.version, &r.kind)
            .expect("found above");
        let gone = args.controller_name.clone().unwrap_or_else(|| own.clone());
        if gone == own && e.controller {
            e.controller = false;
            creates.push(api_of(project, &r, false, true, None));
        } else {
            e.controllers.retain(|c| c.name != gone);
            if e.controllers.len() == 1 && e.controllers[0].name == own {
                e.controllers.clear();
                e.controller = true;
            }
            let named = (gone != own).then_some(gone.as_str());
            creates.push(api_of(project, &r, false, named.is_none(), named));
        }
        let left = e.api.is_some()
            || e.controller
            || !e.controllers.is_empty()
            || e.webhooks.as_ref().is_some_and(|w| w.any());
        if !left {
            before
                .resources
                .retain(|x| !x.is_gvk(&r.group, &r.version, &r.kind));
        }
    }
    Ok(ApiTarget {
        creates,
        before,
        spoke_of,
    })
}

/// Refuse to delete a version of a kind that other versions need: the version the CRD stores
/// them in. The hub of the conversion webhook that converts the version, if one does.
fn check_version_goes<'p>(
    root: &Path,
    project: &'p Project,
    r: &Resource,
) -> Result<Option<&'p Resource>> {
    let others: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|o| {
            o.group.eq_ignore_ascii_case(&r.group)
                && o.kind == r.kind
                && o.version != r.version
                && o.api.is_some()
        })
        .collect();
    if others.is_empty() {
        return Ok(None);
    }
    let versions: Vec<&str> = others.iter().map(|o| o.version.as_str()).collect();
    let storage = if project.rust_layout().is_some() {
        // The Rust layout stores a kind in the first version created (PROJECT's order).
        project
            .resources
            .iter()
            .find(|o| o.group.eq_ignore_ascii_case(&r.group) && o.kind == r.kind && o.api.is_some())
            .is_some_and(|o| o.version == r.version)
    } else {
        let (_, path) = resource::recorded_domain_and_path(project, r);
        let dir = resource::dir_in_module(project, &path)
            .unwrap_or_else(|| resource::layout(project, &r.group, &r.version).api_dir);
        let file = format!("{dir}/{}_types.go", r.kind.to_ascii_lowercase());
        std::fs::read_to_string(root.join(&file)).is_ok_and(|t| {
            t.lines()
                .any(|l| l.trim() == "// +kubebuilder:storageversion")
        })
    };
    if storage {
        bail!(
            "{} is the storage version of {} (the version the API server stores its objects in), and {} {} {}: \
             their CRD needs a storage version. Make another version the storage version first (and migrate the \
             stored objects), or delete the other versions first",
            named(r),
            r.kind,
            if versions.len() == 1 { "version" } else { "versions" },
            versions.join(", "),
            if versions.len() == 1 { "stays" } else { "stay" },
        );
    }
    // A spoke of a conversion webhook goes from its hub's list (and its conversion with it).
    Ok(others.into_iter().find(|o| {
        o.webhooks
            .as_ref()
            .is_some_and(|w| w.conversion && w.spoke.iter().any(|s| *s == r.version))
    }))
}

/// Every series of `create webhook` commands that could have made the types of `all`: each
/// ordering of each split of them into commands (13 for three types).
pub fn histories(all: &Webhooks) -> Vec<Vec<Webhooks>> {
    let types: Vec<Webhooks> = [
        (all.defaulting, 0),
        (all.validation, 1),
        (all.conversion, 2),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, i)| {
        let mut one = Webhooks {
            webhook_version: all.webhook_version.clone(),
            ..Default::default()
        };
        match i {
            0 => {
                one.defaulting = true;
                one.defaulting_path = all.defaulting_path.clone();
            }
            1 => {
                one.validation = true;
                one.validation_path = all.validation_path.clone();
            }
            _ => {
                one.conversion = true;
                one.spoke = all.spoke.clone();
            }
        }
        one
    })
    .collect();
    fn split(rest: &[Webhooks]) -> Vec<Vec<Webhooks>> {
        if rest.is_empty() {
            return vec![vec![]];
        }
        let mut out = vec![];
        // The first command takes a non-empty subset; the rest follow in any split.
        for mask in 1..(1u32 << rest.len()) {
            let mut first = Webhooks::default();
            let mut others = vec![];
            for (i, t) in rest.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    first = first.union(t);
                } else {
                    others.push(t.clone());
                }
            }
            for mut tail in split(&others) {
                tail.insert(0, first.clone());
                out.push(tail);
            }
        }
        out
    }
    let mut out = split(&types);
    // All at once first: the most common history.
    out.sort_by_key(Vec::len);
    out
}

/// What `delete webhook` takes away.
#[derive(Debug)]
pub struct WebhookTarget {
    /// The webhooks that go, as their `create webhook` resolved (after those that stay).
    pub hook: ResolvedWebhook,
    /// PROJECT as it is after the deletion.
    pub before: Project,
}

/// Decide what `delete webhook` takes away: the types given (every one the kind has without
/// one), each of which PROJECT must record.
pub fn resolve_webhook(project: &Project, args: &DeleteWebhookArgs) -> Result<WebhookTarget> {
    let r = entry_for(project, &args.res, "delete webhook")?.clone();
    super::delete_flags::check(project, &r, &args.create)?;
    let had = r.webhooks.clone().unwrap_or_default();
    if !had.any() {
        bail!(
            "{} has no webhooks in PROJECT: nothing to delete",
            named(&r)
        );
    }
    let all = !(args.defaulting || args.programmatic_validation || args.conversion);
    let mut gone = Webhooks::default();
    for (asked, has, name) in [
        (args.defaulting, had.defaulting, "defaulting"),
        (args.programmatic_validation, had.validation, "validating"),
        (args.conversion, had.conversion, "conversion"),
    ] {
        if asked && !has {
            bail!(
                "{} has no {name} webhook; it has: {}",
                named(&r),
                had.names().join(", ")
            );
        }
    }
    gone.defaulting = had.defaulting && (all || args.defaulting);
    gone.validation = had.validation && (all || args.programmatic_validation);
    gone.conversion = had.conversion && (all || args.conversion);
    super::delete_flags::check_webhook(
        &r,
        &args.create_webhook,
        gone.defaulting,
        gone.validation,
        gone.conversion,
    )?;
    gone.defaulting_path = had.defaulting_path.clone();
    gone.validation_path = had.validation_path.clone();
    gone.spoke = had.spoke.clone();
    let stays = Webhooks {
        defaulting: had.defaulting && !gone.defaulting,
        validation: had.validation && !gone.validation,
        conversion: had.conversion && !gone.conversion,
        defaulting_path: if gone.defaulting {
            String::new()
        } else {
            had.defaulting_path.clone()
        },
        validation_path: if gone.validation {
            String::new()
        } else {
            had.validation_path.clone()
        },
        spoke: if gone.conversion {
            vec![]
        } else {
            had.spoke.clone()
        },
        webhook_version: had.webhook_version.clone(),
    };
    let mut before = project.clone();
    let e = before
        .find_mut(&r.group, &r.version, &r.kind)
        .expect("found above");
    e.webhooks = stays.any().then(|| stays.clone());
    let left = e.api.is_some() || e.controller || !e.controllers.is_empty() || stays.any();
    if !left {
        before
            .resources
            .retain(|x| !x.is_gvk(&r.group, &r.version, &r.kind));
    }
    Ok(WebhookTarget {
        hook: webhook_of(project, &r, &gone, &stays),
        before,
    })
}

/// A generated file that names what is deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub path: String,
    /// Removed with the rest (it is about what goes alone), else listed.
    pub remove: bool,
    /// The command that writes it again.
    pub by: &'static str,
}

/// What a plugin's deletion hook hands back beside what its `create` wrote (the hook's
/// `cx.plan`), for the command's one plan and report.
#[derive(Debug, Default)]
pub struct Undo {
    /// Other plans `create` may have made for some files (other templates, another order of
    /// commands): a file that matches one of them is as `create` wrote it.
    pub variants: Vec<Plan>,
    /// Files as their templates write them, before any command switched a part on.
    pub base: BTreeMap<PathBuf, String>,
    /// Changes of its own, beside taking `create`'s out: whole files written or removed.
    pub ops: Vec<Op>,
    pub kept: Vec<PathBuf>,
    pub forced: Vec<PathBuf>,
    pub by_hand: Vec<ByHand>,
    pub generated: Vec<Generated>,
    pub uses: Vec<Uses>,
    /// Said after the plan is applied.
    pub notes: Vec<String>,
    /// The commands that follow (`make generate manifests`).
    pub next: Vec<String>,
    /// Remove files changed since `create` all the same.
    pub force: bool,
    /// PROJECT as the deletion leaves it, whole (a hook's `cx.project` is PROJECT as the
    /// `create` command found it, without what came later): what stays.
    pub after: Project,
}

impl Undo {
    /// Add `op` unless an op of the same path is there (the first plugin to plan a file wins).
    pub fn op(&mut self, op: Op) {
        if !self.ops.iter().any(|o| o.path() == op.path()) {
            self.ops.push(op);
        }
    }

    /// List a generated file (once).
    pub fn generated(&mut self, path: impl Into<String>, remove: bool, by: &'static str) {
        let g = Generated {
            path: path.into(),
            remove,
            by,
        };
        if let Some(old) = self.generated.iter_mut().find(|o| o.path == g.path) {
            old.remove &= g.remove;
        } else {
            self.generated.push(g);
        }
    }

    /// A command to run next (once; the targets of `make` commands together, in order).
    pub fn next(&mut self, command: &str) {
        if let Some(targets) = command.strip_prefix("make ") {
            if let Some(make) = self.next.iter_mut().find(|c| c.starts_with("make ")) {
                for t in targets.split_whitespace() {
                    if !make.split_whitespace().any(|w| w == t) {
                        make.push(' ');
                        make.push_str(t);
                    }
                }
                return;
            }
        }
        if !self.next.iter().any(|c| c == command) {
            self.next.push(command.to_string());
        }
    }
}
