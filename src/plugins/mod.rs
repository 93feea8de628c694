//! The plugin chain. Kubebuilder composes a command from plugins named by key
//! (`go.kubebuilder.io/v4`, `grafana.kubebuilder.io/v1-alpha`, ...); opbuilder does the same,
//! so that PROJECT files move freely between the two tools.
//!
//! Every plugin adds to the one [`Plan`] and the one [`Project`] of a command, through the hooks
//! of [`Plugin`]; the command applies that plan as a single transaction. A chain is all or
//! nothing: if it names a plugin opbuilder cannot run, the command refuses before planning
//! anything (unlike Kubebuilder, which may have written part of the files by then).
//!
//! The registry ([`KNOWN`]) lists every plugin Kubebuilder v4.15 ships, with the short forms it
//! accepts, so a key is either run, or refused with a message naming it and saying what to do.

pub mod autoupdate;
pub mod chain;
pub mod deployimage;
pub mod golang;
pub mod grafana;
pub mod helm;
pub mod registry;
pub mod rust;
pub mod typed_clients;

use crate::error::usage;
use crate::plan::Plan;
use crate::planning::api::{self as api_request, ApiArgs};
use crate::planning::edit::EditArgs;
use crate::planning::init::InitArgs;
use crate::planning::plugin::Cx;
use crate::planning::webhook::{self as webhook_request, WebhookArgs};
use crate::project::Project;
use anyhow::Result;
use chain::{Chain, Command};
use registry::parse_flag;
use std::path::Path;

/// Run one hook of a chain on a new plan: the plan and the notes the plugins left.
fn run_hook(
    root: &Path,
    project: &mut Project,
    hook: impl FnOnce(&mut Cx) -> Result<()>,
) -> Result<(Plan, Vec<String>)> {
    let mut plan = Plan::default();
    let mut notes = vec![];
    hook(&mut Cx {
        root,
        plan: &mut plan,
        project,
        notes: &mut notes,
    })?;
    Ok((plan, notes))
}

/// Plan `init`: the chain (from `--plugins`, else go/v4), the checked flags and the new PROJECT,
/// then every plugin's files.
pub fn plan_init(root: &Path, args: &InitArgs) -> Result<(Plan, Project)> {
    let chain = Chain::for_command(None, parse_flag(args.plugins.as_deref())?, Command::Init)?;
    let (mut project, boilerplate_file) =
        crate::planning::init::new_project(root, args, chain.keys(), !chain.has_rust)?;
    let (mut plan, _notes) = run_hook(root, &mut project, |cx| {
        chain.init(cx, boilerplate_file.as_deref())
    })?;
    plan.project = Some(project.to_yaml());
    Ok((plan, project))
}

/// What planning `create api` gives the command: the plan, whether it scaffolds the types and
/// whether they are external, and the notes to print after it is applied.
pub type ApiPlan = (Plan, bool, bool, Vec<String>);

/// Plan `create api`: decide what the resource is, then let the plugin chain plan its files and
/// record it in PROJECT.
pub fn plan_create_api(root: &Path, args: &ApiArgs) -> Result<ApiPlan> {
    Ok(plan_create_api_keeping_project(root, args)?.0)
}

/// [`plan_create_api`], also handing back the project read (so that the command can skip
/// freeing it).
pub fn plan_create_api_keeping_project(root: &Path, args: &ApiArgs) -> Result<(ApiPlan, Project)> {
    let flag = parse_flag(args.run.plugins.as_deref())?;
    let (mut project, text) = Project::load_with_text(root)?;
    // The top-level keys as read (cheap: without the resources), to tell whether PROJECT can be
    // written by appending the new resource to its text.
    let resources = std::mem::take(&mut project.resources);
    let before = project.clone();
    project.resources = resources;
    let existing = project.resources.len();
    let chain = Chain::for_command(Some(&project), flag, Command::CreateApi)?;
    let image = deployimage::check_flags(chain.has(deployimage::NAME), args)?;
    let mut res = api_request::resolve(&project, args)?;
    res.deploy_image = image;
    // `record` appends a new group/version/kind and changes no other entry; an existing one is
    // updated in place, and then the whole file is written.
    let appended = project
        .find(&res.gvk.group, &res.gvk.version, &res.gvk.kind)
        .is_none();
    let (mut plan, notes) = run_hook(root, &mut project, |cx| chain.create_api(cx, &res))?;
    plan.project = Some(if appended {
        project.to_yaml_appended(&before, existing, &text)
    } else {
        project.to_yaml()
    });
    Ok(((plan, res.do_resource, res.external, notes), project))
}

/// Plan `create webhook`: decide what the webhooks are, then let the plugin chain plan their
/// files and record them in PROJECT.
pub fn plan_create_webhook(root: &Path, args: &WebhookArgs) -> Result<(Plan, Vec<String>)> {
    let flag = parse_flag(args.run.plugins.as_deref())?;
    let mut project = Project::load(root)?;
    let chain = Chain::for_command(Some(&project), flag, Command::CreateWebhook)?;
    let hook = webhook_request::resolve(&project, args)?;
    let (mut plan, notes) = run_hook(root, &mut project, |cx| chain.create_webhook(cx, &hook))?;
    plan.project = Some(project.to_yaml());
    Ok((plan, notes))
}

/// Plan `edit`: check which plugin each flag belongs to, then let the chain plan.
pub fn plan_edit(root: &Path, args: &EditArgs) -> Result<(Plan, Vec<String>)> {
    let flag = parse_flag(args.plugins.as_deref())?;
    let explicit = flag.is_some();
    let mut project = Project::load(root)?;
    if project.layout.iter().any(|k| k == rust::KEY) {
        // Its hook says why there is nothing to edit; no other plugin may join the layout.
        let chain = Chain::for_command(Some(&project), None, Command::Edit)?;
        run_hook(root, &mut project, |cx| chain.edit(cx, args))?;
    }
    let chain = Chain::for_command(Some(&project), flag, Command::Edit)?;
    if args.go_flags() && !chain.has_go {
        return Err(usage(
            "--multigroup, --namespaced, --license, --license-file and --owner belong to go/v4, which --plugins leaves out; \
             add it (for example --plugins=go/v4,grafana/v1-alpha) or run the two edits one after the other",
        ));
    }
    if args.use_gh_models && !autoupdate::gh_models_offered() {
        return Err(usage(
            "--use-gh-models was removed in opbuilder 0.3.0, as in Kubebuilder v4.16: the update workflow opens its \
             issue without a GitHub Models summary. Leave the flag out, for example: opbuilder edit --plugins=autoupdate/v1-alpha",
        ));
    }
    if args.use_gh_models && !chain.has(autoupdate::NAME) {
        return Err(usage(
            "--use-gh-models belongs to the autoupdate plugin; for example: opbuilder edit --plugins=autoupdate/v1-alpha --use-gh-models",
        ));
    }
    if (args.manifests.is_some() || args.output_dir.is_some() || args.skip_build_installer)
        && !chain.has(helm::NAME)
    {
        return Err(usage(
            "--manifests, --output-dir and --skip-build-installer belong to the helm plugin; for example: opbuilder edit --plugins=helm/v2-alpha --output-dir=dist",
        ));
    }
    if !args.go_flags() && (!explicit || chain.only_go()) {
        return Err(usage(
            "nothing to edit: pass --multigroup, --namespaced, --license, --license-file, --owner or --plugins; for example: opbuilder edit --multigroup",
        ));
    }
    let (mut plan, notes) = run_hook(root, &mut project, |cx| chain.edit(cx, args))?;
    plan.project = Some(project.to_yaml());
    Ok((plan, notes))
}
