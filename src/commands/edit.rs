//! `opbuilder edit`: change project-wide settings after init.

use super::init::{boilerplate, License};
use crate::context::{ProjectCtx, BOILERPLATE_FILE};
use crate::error::usage;
use crate::out::outln;
use crate::plan::{IfExists, Plan};
use crate::plugins;
use crate::project::Project;
use crate::resource::{CtxInput, Gvk, ResourceCtx};
use crate::templates;
use anyhow::Result;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  opbuilder edit --multigroup
  opbuilder edit --namespaced --force
  opbuilder edit --license copyright --owner \"Acme Inc.\"
  opbuilder edit --license none
  opbuilder edit --plugins=helm/v2-alpha")]
pub struct EditArgs {
    /// Allow several API groups (api/<group>/<version> layout for new APIs); =false to turn off
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub multigroup: Option<bool>,
    /// Namespace-scoped manager (Role/RoleBinding); =false for cluster-scoped
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// With --namespaced: also rewrite config/manager/manager.yaml (WATCH_NAMESPACE); with the helm
    /// plugin: rewrite every chart file but Chart.yaml (values.yaml included)
    #[arg(long)]
    pub force: bool,
    /// With helm.kubebuilder.io/v2-alpha: the kustomize output to make the chart from
    /// [default: dist/install.yaml, refreshed by `make build-installer`]
    #[arg(long, value_name = "FILE")]
    pub manifests: Option<String>,
    /// With helm.kubebuilder.io/v2-alpha: the directory of the chart (DIR/chart) [default: dist]
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<String>,
    /// With helm.kubebuilder.io/v2-alpha: use dist/install.yaml as it is, without running
    /// `make build-installer` first
    #[arg(long)]
    pub skip_build_installer: bool,
    /// Rewrite hack/boilerplate.go.txt with this license (none deletes it)
    #[arg(long, value_enum)]
    pub license: Option<License>,
    /// Rewrite hack/boilerplate.go.txt from this file (a /* */ comment)
    #[arg(long, value_name = "FILE")]
    pub license_file: Option<std::path::PathBuf>,
    /// Copyright owner for a rewritten license header
    #[arg(long, value_name = "OWNER")]
    pub owner: Option<String>,
    /// Show what would be written, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Plugins to run instead of PROJECT's layout, e.g. grafana.kubebuilder.io/v1-alpha
    #[arg(long, value_name = "KEYS")]
    pub plugins: Option<String>,
    /// With autoupdate.kubebuilder.io/v1-alpha: add a GitHub Models summary to the update issue
    #[arg(long)]
    pub use_gh_models: bool,
}

impl EditArgs {
    /// Whether any of go/v4's own edit flags is given.
    fn go_flags(&self) -> bool {
        self.multigroup.is_some()
            || self.namespaced.is_some()
            || self.license.is_some()
            || self.license_file.is_some()
            || self.owner.is_some()
    }
}

pub fn plan(root: &Path, args: &EditArgs) -> Result<(Plan, Vec<String>)> {
    let flag = plugins::parse_flag(args.plugins.as_deref())?;
    let explicit = flag.is_some();
    let mut project = Project::load(root)?;
    let chain = plugins::Chain::for_command(Some(&project), flag, plugins::Command::Edit)?;
    if args.go_flags() && !chain.has_go {
        return Err(usage(
            "--multigroup, --namespaced, --license, --license-file and --owner belong to go/v4, which --plugins leaves out; \
             add it (for example --plugins=go/v4,grafana/v1-alpha) or run the two edits one after the other",
        ));
    }
    if args.use_gh_models && !chain.has(plugins::autoupdate::NAME) {
        return Err(usage(
            "--use-gh-models belongs to the autoupdate plugin; for example: opbuilder edit --plugins=autoupdate/v1-alpha --use-gh-models",
        ));
    }
    if (args.manifests.is_some() || args.output_dir.is_some() || args.skip_build_installer)
        && !chain.has(plugins::helm::NAME)
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
    let mut plan = Plan::default();
    let mut notes = vec![];
    chain.edit(
        &mut plugins::Cx {
            root,
            plan: &mut plan,
            project: &mut project,
            notes: &mut notes,
        },
        args,
    )?;
    plan.project = Some(project.to_yaml());
    Ok((plan, notes))
}

/// go/v4's part of `edit`: multigroup, namespaced and the license header.
pub fn plan_go(cx: &mut plugins::Cx, args: &EditArgs) -> Result<()> {
    let (root, plan, project, notes) = (cx.root, &mut *cx.plan, &mut *cx.project, &mut *cx.notes);
    if let Some(m) = args.multigroup {
        project.multigroup = m;
        if m {
            notes.push(
                "New APIs go to api/<group>/<version>; existing files stay where they are.".into(),
            );
        }
    }
    if args.license.is_some() || args.license_file.is_some() || args.owner.is_some() {
        let license = args.license.unwrap_or(License::Apache2);
        match boilerplate(license, args.owner.as_deref(), args.license_file.as_deref())? {
            Some(text) => plan.create(BOILERPLATE_FILE, text, IfExists::Overwrite),
            None => plan.remove(BOILERPLATE_FILE),
        }
        notes.push(
            "The new header applies to files scaffolded from now on and to `make generate` output."
                .into(),
        );
    }
    if let Some(ns) = args.namespaced {
        project.namespaced = ns;
        let ctx = ProjectCtx::load(root, project)?;
        let files = templates::render_tree("init", &ctx, |t| {
            matches!(t, "config/rbac/role.yaml" | "config/rbac/role_binding.yaml")
                || (args.force && t == "config/manager/manager.yaml")
        })?;
        for f in files {
            plan.create(f.path, f.content, IfExists::Overwrite);
        }
        for r in project.resources.iter().filter(|r| r.api.is_some()) {
            let gvk = Gvk {
                group: r.group.clone(),
                version: r.version.clone(),
                kind: r.kind.clone(),
                domain: r.domain.clone(),
            };
            let plural = if r.plural.is_empty() {
                crate::flect::pluralize(&r.kind.to_ascii_lowercase())
            } else {
                r.plural.clone()
            };
            let rctx = ResourceCtx::new(CtxInput {
                project,
                pctx: ctx.clone(),
                gvk: &gvk,
                plural: &plural,
                api_path: &r.path,
                cluster_scoped: !r.api.as_ref().is_some_and(|a| a.namespaced),
                core: r.core,
                external: r.external,
                controller_name: None,
                has_api: true,
            });
            for f in templates::render_tree("api", &rctx, |t| t.starts_with("config/rbac/"))? {
                plan.create(f.path, f.content, IfExists::Overwrite);
            }
        }
        if ns {
            notes.push(format!(
                "Next steps for a namespace-scoped manager:\n  - add namespace={}-system to the +kubebuilder:rbac markers of your controllers, then run make manifests\n  - make sure cmd/main.go restricts the cache to WATCH_NAMESPACE (projects made by `opbuilder init --namespaced` do)",
                project.project_name
            ));
            if !args.force {
                notes.push("config/manager/manager.yaml was kept; run again with --force to add the WATCH_NAMESPACE variable to it.".into());
            }
            if project.resources.iter().any(|r| r.webhooks.is_some()) {
                notes.push("warning: webhook configurations are cluster-wide even when the manager is namespace-scoped.".into());
            }
        } else {
            notes.push(format!(
                "Next steps for a cluster-scoped manager:\n  - remove namespace={}-system from the +kubebuilder:rbac markers of your controllers, then run make manifests\n  - remove the restriction of the cache to WATCH_NAMESPACE from cmd/main.go, if it has one{}",
                project.project_name,
                if args.force { "" } else { "\n  - config/manager/manager.yaml was kept; run again with --force to drop its WATCH_NAMESPACE variable" }
            ));
        }
    }
    Ok(())
}

pub fn run(root: &Path, args: &EditArgs) -> Result<()> {
    let (plan, notes) = plan(root, args)?;
    if !super::execute(root, &plan, args.dry_run, "edit", "Edited the project:")? {
        return Ok(());
    }
    for n in notes {
        outln!("\n{n}");
    }
    Ok(())
}
