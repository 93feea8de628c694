//! `opbuilder create api`: API types and/or a controller, wired into main.go, kustomize and PROJECT.

use crate::context::ProjectCtx;
use crate::error::{bad_flag, usage};
use crate::flect;
use crate::out::{errln, outln};
use crate::plan::{Edit, IfExists, Plan};
use crate::plugins;
use crate::post::{self, Step};
use crate::project::{Api, Controller, Project, Resource};
use crate::resource::{self, CtxInput, Gvk, ResourceCtx};
use crate::templates;
use crate::validate;
use anyhow::{bail, Result};
use clap::Args;
use std::io::IsTerminal;
use std::path::Path;

pub const MAIN_GO: &str = "cmd/main.go";

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  opbuilder create api --group ingress --version v1beta1 --kind App
  opbuilder create api --group batch --version v1 --kind MyCronJob \\
      --resource --controller
  opbuilder create api --group infra --version v1 --kind Cluster \\
      --namespaced=false
  opbuilder create api --group apps --version v1 --kind Deployment \\
      --resource=false --controller
  opbuilder create api --group ingress --version v1beta1 --kind App \\
      --resource=false --controller-name app-audit
  opbuilder create api --group ingress --version v1 --kind Ticket --ssa
  opbuilder create api --group cache --version v1alpha1 --kind Memcached \\
      --image=memcached:1.6.26-alpine3.19 --image-container-port=11211 \\
      --plugins=deploy-image/v1-alpha")]
pub struct ApiArgs {
    #[command(flatten)]
    pub res: super::ResourceFlags,
    /// Scaffold the API types (asked interactively when omitted on a terminal) [default: true]
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub resource: Option<bool>,
    /// Scaffold a controller (asked interactively when omitted on a terminal) [default: true]
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub controller: Option<bool>,
    /// Name of an additional controller for the kind (a DNS-1035 label)
    #[arg(long, value_name = "NAME")]
    pub controller_name: Option<String>,
    /// Namespace-scoped resource; --namespaced=false makes a cluster-scoped CRD
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "true", value_name = "BOOL")]
    pub namespaced: bool,
    /// (alpha, beyond Kubebuilder v4.15) Scaffold the types for server-side apply: `make
    /// manifests` also generates their apply configurations (needs --resource)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", value_name = "BOOL")]
    pub ssa: bool,
    /// Scaffold again over an existing API or controller (replaces its generated files)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub image: plugins::deployimage::ImageFlags,
    #[command(flatten)]
    pub run: super::RunFlags,
}

/// Ask a yes/no question on a terminal; elsewhere take the default and say so.
fn decide(flag: Option<bool>, question: &str, flag_name: &str) -> Result<bool> {
    if let Some(v) = flag {
        return Ok(v);
    }
    if std::io::stdin().is_terminal() {
        return crate::term::confirm(question, flag_name, true);
    }
    errln!("note: {flag_name} not given and stdin is not a terminal: assuming {flag_name}=true");
    Ok(true)
}

/// Validate an external API import path.
fn check_external_path(p: &str) -> Result<()> {
    let rule = if p.contains('@') {
        Some("a version belongs in --external-api-module, not in the path")
    } else if validate::go_module_path(p).is_err() {
        Some("must be a Go import path")
    } else if !p.split('/').next().is_some_and(|f| f.contains('.')) {
        Some("must be fully qualified: its first element is a domain")
    } else if !p.contains('/') {
        Some("must name a package inside a module (a sub-path)")
    } else {
        None
    };
    match rule {
        Some(r) => Err(bad_flag(
            "--external-api-path",
            p,
            r,
            "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
        )),
        None => Ok(()),
    }
}

fn check_controller_name(name: &str, kind_lower: &str, existing: Option<&Resource>) -> Result<()> {
    validate::dns1035_label(name).map_err(|r| {
        bad_flag(
            "--controller-name",
            name,
            &r,
            &format!("{kind_lower}-backup"),
        )
    })?;
    if let Some(r) = existing {
        let norm = |s: &str| {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        };
        for c in &r.controllers {
            if c.name == name {
                bail!("a controller named {name:?} already exists for {}/{}/{}; pick another --controller-name", r.group, r.version, r.kind);
            }
            if norm(&c.name) == norm(name) {
                bail!(
                    "--controller-name {name:?} and the existing controller {:?} would both become the reconciler type {}Reconciler; pick another name",
                    c.name,
                    resource::pascal(name)
                );
            }
        }
    }
    Ok(())
}

/// What `create api` will make, decided from the flags, the names and PROJECT's rules, before
/// any file is planned.
#[derive(Debug, Clone)]
pub struct ResolvedResource {
    pub gvk: Gvk,
    /// The plural used in file names and the CRD.
    pub plural: String,
    /// The plural Kubebuilder computes for the kind (PROJECT records `plural` only when it differs).
    pub default_plural: String,
    /// Go import path of the types.
    pub api_path: String,
    pub do_resource: bool,
    pub do_controller: bool,
    /// The types already exist in this project (PROJECT has an `api` for the GVK).
    pub in_project_api: bool,
    pub core: bool,
    pub external: bool,
    pub external_module: Option<String>,
    pub controller_name: Option<String>,
    pub namespaced: bool,
    /// Server-side apply: the types get apply configurations (`--ssa`, or recorded in PROJECT).
    pub ssa: bool,
    pub force: bool,
    /// The deploy-image plugin's options, when the chain runs it.
    pub deploy_image: Option<plugins::deployimage::Options>,
}

/// Decide what the resource is: check the flags, derive names, apply PROJECT's rules. Nothing is
/// planned or written; usage errors exit 2, rule violations 1.
pub fn resolve(project: &Project, args: &ApiArgs) -> Result<ResolvedResource> {
    let group = args.res.group.trim().to_string();
    let version = args.res.version.trim().to_string();
    let kind = args.res.kind.trim().to_string();
    resource::validate_gvk(&group, &version, &kind, &project.domain)?;
    if let Some(p) = &args.res.plural {
        resource::validate_plural(p, true)?;
    }
    let external = args.res.external_api_path.is_some();
    if args.res.external_api_module.is_some() && !external {
        return Err(usage("--external-api-module needs --external-api-path (the package to import from that module)"));
    }
    if args.res.external_api_domain.is_some() && !external {
        return Err(usage("--external-api-domain needs --external-api-path"));
    }
    if let Some(p) = &args.res.external_api_path {
        check_external_path(p)?;
        if args.resource == Some(true) {
            return Err(usage(
                "--external-api-path refers to types that already exist elsewhere: use it with --resource=false",
            ));
        }
        if args.ssa {
            return Err(usage(
                "--ssa scaffolds apply configurations for types created in this project; it cannot be used with \
                 --external-api-path.\n  Example: opbuilder create api --group ship --version v1 --kind Frigate --ssa",
            ));
        }
        if let Some(d) = &args.res.external_api_domain {
            validate::dns1123_subdomain(d)
                .map_err(|r| bad_flag("--external-api-domain", d, &r, "cert-manager.io"))?;
        }
    }
    let kind_lower = kind.to_ascii_lowercase();
    let existing = project.find(&group, &version, &kind).cloned();
    if let Some(n) = &args.controller_name {
        check_controller_name(n, &kind_lower, existing.as_ref())?;
    }

    if args.ssa && args.resource == Some(false) {
        return Err(usage(
            "--ssa applies to the API types, so it needs --resource (got --resource=false).\n  \
             Example: opbuilder create api --group ship --version v1 --kind Frigate --resource --ssa",
        ));
    }
    // deploy-image always scaffolds both (plugins::deployimage::check_flags ran first).
    let both = args.image.image.is_some();
    let do_resource = if external {
        false
    } else {
        both || decide(args.resource, "Create Resource", "--resource")?
    };
    if args.ssa && !do_resource {
        return Err(usage(
            "--ssa applies to the API types, so it needs --resource.\n  \
             Example: opbuilder create api --group ship --version v1 --kind Frigate --resource --ssa",
        ));
    }
    let do_controller = both || decide(args.controller, "Create Controller", "--controller")?;
    if !do_resource && !do_controller {
        return Err(usage(
            "nothing to do: both --resource and --controller are false",
        ));
    }

    // Project-state rules.
    if do_resource && existing.as_ref().is_some_and(|r| r.api.is_some()) && !args.force {
        bail!(
            "the API {group}/{version} {kind} already exists (see PROJECT); pass --force to scaffold its types, \
             sample and controller again (their files are replaced)"
        );
    }
    // Like Kubebuilder, the one-group rule applies to APIs created in the project only: a controller
    // for a core or external type may name any group.
    if do_resource
        && !project.multigroup
        && !project.resources.is_empty()
        && !project.has_group(&group)
    {
        let groups: Vec<&str> = project.resources.iter().map(|r| r.group.as_str()).collect();
        bail!(
            "this project holds group {:?} already and is single-group; run `opbuilder edit --multigroup` \
             first to add group {group:?}",
            groups[0]
        );
    }
    if do_controller && !do_resource && args.controller_name.is_none() && !args.force {
        if let Some(r) = &existing {
            if r.controller || !r.controllers.is_empty() {
                bail!(
                    "{group}/{version} {kind} already has a controller; pass --controller-name to add another one, \
                     or --force to scaffold the existing one again"
                );
            }
        }
    }

    if do_controller && args.controller_name.is_none() && !args.force {
        if let Some(other) = project.kind_controller(&group, &kind, &version) {
            bail!(
                "{kind} already has a controller (scaffolded with version {other}); a kind has one controller \
                 for all its versions.\n  Add version {version} without one: --controller=false \
                 (or add a second controller with --controller-name <name>)"
            );
        }
    }

    // Where the types come from.
    let in_project_api = existing.as_ref().is_some_and(|r| r.api.is_some());
    let core_domain = if !do_resource && !in_project_api && !external {
        resource::core_domain(&group)
    } else {
        None
    };
    let core = core_domain.is_some() || existing.as_ref().is_some_and(|r| r.core);
    let domain = if let Some(d) = core_domain {
        d.to_string()
    } else if let Some(d) = &args.res.external_api_domain {
        d.clone()
    } else if let Some(r) = &existing {
        r.domain.clone()
    } else {
        project.domain.clone()
    };
    let gvk = Gvk {
        group: group.clone(),
        version: version.clone(),
        kind: kind.clone(),
        domain,
    };
    let lay = resource::layout(project, &group, &version);
    let api_path = if let Some(p) = &args.res.external_api_path {
        p.clone()
    } else if core {
        format!("k8s.io/api/{group}/{version}")
    } else if do_resource || in_project_api {
        lay.api_path.clone()
    } else {
        existing
            .as_ref()
            .map(|r| r.path.clone())
            .unwrap_or_default()
    };

    let default_plural = flect::pluralize(&kind_lower);
    let plural = match (&args.res.plural, &existing) {
        (Some(p), _) => p.clone(),
        (None, Some(r)) if !r.plural.is_empty() => r.plural.clone(),
        _ => default_plural.clone(),
    };
    if let (Some(r), Some(p)) = (&existing, &args.res.plural) {
        let recorded = if r.plural.is_empty() {
            default_plural.clone()
        } else {
            r.plural.clone()
        };
        if r.api.is_some() && *p != recorded {
            bail!("--plural {p:?} differs from the plural {recorded:?} recorded for {kind} in PROJECT; drop --plural or use {recorded:?}");
        }
    }
    let plural = if do_resource
        && args.res.plural.is_none()
        && resource::validate_plural(&plural, false).is_err()
    {
        // flect turns some acronym kinds into invalid plurals (`Dns` → `dnsDNSes`): pick a valid one.
        let fallback = if kind_lower.ends_with('s') {
            format!("{kind_lower}es")
        } else {
            format!("{kind_lower}s")
        };
        resource::validate_plural(&fallback, false)?;
        fallback
    } else {
        plural
    };
    if do_resource {
        resource::check_type_collisions(
            project,
            |g, v| resource::layout(project, g, v).api_dir,
            &gvk,
        )?;
    }
    Ok(ResolvedResource {
        gvk,
        plural,
        default_plural,
        api_path,
        do_resource,
        do_controller,
        in_project_api,
        core,
        external,
        external_module: args.res.external_api_module.clone(),
        controller_name: args.controller_name.clone(),
        namespaced: args.namespaced,
        // Like Kubebuilder, server-side apply cannot be switched off again: scaffolding existing
        // types again (--force) keeps what PROJECT records.
        ssa: do_resource
            && (args.ssa
                || existing
                    .as_ref()
                    .and_then(|r| r.api.as_ref())
                    .is_some_and(|a| a.ssa)),
        force: args.force,
        deploy_image: None,
    })
}

/// go/v4's files for a resolved resource: types, samples, kustomize entries, controller and
/// the wiring in cmd/main.go and the suite test. Adds to `plan`; PROJECT is not touched.
pub fn plan_files(
    root: &Path,
    project: &Project,
    res: &ResolvedResource,
    plan: &mut Plan,
    notes: &mut Vec<String>,
) -> Result<()> {
    let ResolvedResource {
        gvk,
        plural,
        api_path,
        do_resource,
        do_controller,
        in_project_api,
        core,
        external,
        ..
    } = res;
    let (do_resource, do_controller, in_project_api, core, external) = (
        *do_resource,
        *do_controller,
        *in_project_api,
        *core,
        *external,
    );
    let pctx = ProjectCtx::load(root, project)?;
    let mut ctx = ResourceCtx::new(CtxInput {
        project,
        pctx,
        gvk,
        plural,
        api_path,
        cluster_scoped: !res.namespaced,
        core,
        external,
        controller_name: res.controller_name.as_deref(),
        has_api: do_resource || in_project_api,
    });
    ctx.ssa = res.ssa;
    ctx.ac_opt_out = !res.ssa && ssa_kinds_beside(project, gvk).next().is_some();

    let repo = project.repo.clone();
    let replace = |normal: IfExists| {
        if res.force {
            IfExists::Overwrite
        } else {
            normal
        }
    };

    if do_resource {
        for f in templates::render_tree("api", &ctx, |_| true)? {
            let policy = match f.template.as_str() {
                t if t.ends_with("_types.go") => replace(IfExists::Error),
                t if t.starts_with("config/samples/") && !t.ends_with("kustomization.yaml") => {
                    replace(IfExists::Error)
                }
                t if t.starts_with("config/rbac/") => IfExists::Overwrite,
                _ => IfExists::Skip,
            };
            plan.create(f.path, f.content, policy);
        }
        if res.ssa {
            plan_ssa(root, project, &ctx, plan, notes)?;
        }
        plan.above_marker(
            "config/crd/kustomization.yaml",
            "crdkustomizeresource",
            vec![format!("- bases/{}_{}.yaml", ctx.qgroup, plural)],
        );
        plan.above_marker(
            "config/samples/kustomization.yaml",
            "manifestskustomizesamples",
            vec![format!("- {}", ctx.sample_file)],
        );
        plan.update(
            "config/default/kustomization.yaml",
            Edit::Uncomment {
                block: "- ../crd".into(),
                required: false,
            },
        );
        let anchor = templates::render("fragments/api/rbac_kustomization_comment.yaml", &ctx)?;
        plan.update(
            "config/rbac/kustomization.yaml",
            Edit::Append {
                text: anchor.clone(),
            },
        );
        let last = anchor
            .trim_end()
            .lines()
            .last()
            .unwrap_or_default()
            .to_string();
        let roles = ["admin", "editor", "viewer"]
            .map(|r| format!("- {}{}_{r}_role.yaml", ctx.role_file_prefix, ctx.kind_lower))
            .join("\n");
        plan.update(
            "config/rbac/kustomization.yaml",
            Edit::AfterLine {
                anchor: last,
                text: roles,
            },
        );
        plan.go_import(MAIN_GO, Some(&ctx.import_alias), api_path, &repo);
        plan.above_marker(
            MAIN_GO,
            "scheme",
            vec![templates::render("fragments/main_scheme.go", &ctx)?],
        );
    } else if external {
        plan.go_import(MAIN_GO, Some(&ctx.import_alias), api_path, &repo);
        plan.above_marker(
            MAIN_GO,
            "scheme",
            vec![templates::render("fragments/main_scheme.go", &ctx)?],
        );
    }

    if do_controller {
        // The kind's controller test is written once, for the first controller created; like
        // Kubebuilder, later (named) controllers do not replace it.
        for f in templates::render_tree("controller", &ctx, |_| true)? {
            let policy = match f.template.as_str() {
                t if t.ends_with("suite_test.go") => IfExists::Skip,
                t if t.ends_with("_controller_test.go") => replace(IfExists::Skip),
                _ => replace(IfExists::Error),
            };
            plan.create(f.path, f.content, policy);
        }
        let suite = format!("{}/suite_test.go", ctx.controller_dir);
        if (do_resource || in_project_api || external) && !api_path.is_empty() {
            plan.go_import(&suite, Some(&ctx.import_alias), api_path, &repo);
            plan.above_marker(
                &suite,
                "scheme",
                vec![templates::render("fragments/suite_scheme.go", &ctx)?],
            );
        }
        let (name, import) = if ctx.controller_pkg == "controller" {
            (None, format!("{repo}/internal/controller"))
        } else {
            (
                Some(format!("{}controller", ctx.controller_pkg)),
                format!("{repo}/{}", ctx.controller_dir),
            )
        };
        plan.go_import(MAIN_GO, name.as_deref(), &import, &repo);
        let mut c = ctx.clone();
        if let Some(n) = &name {
            c.controller_pkg = n.clone();
        }
        plan.above_marker(
            MAIN_GO,
            "builder",
            vec![templates::render("fragments/main_controller.go", &c)?],
        );
    }
    Ok(())
}

/// The other kinds of `gvk`'s group/version that PROJECT records with server-side apply.
fn ssa_kinds_beside<'a>(project: &'a Project, gvk: &'a Gvk) -> impl Iterator<Item = &'a Resource> {
    project.resources.iter().filter(move |r| {
        r.group == gvk.group
            && r.version == gvk.version
            && r.kind != gvk.kind
            && r.api.as_ref().is_some_and(|a| a.ssa)
    })
}

const AC_ENABLE: &str = "// +kubebuilder:ac:generate=true";
const AC_DISABLE: &str = "// +kubebuilder:ac:generate=false";
const OBJECT_GENERATE: &str = "// +kubebuilder:object:generate=true";
const OBJECT_ROOT: &str = "// +kubebuilder:object:root=true";
/// The generators of the Makefile's manifests recipe, and what server-side apply adds to them.
const MANIFESTS_GENERATORS: &str = "rbac:roleName=manager-role crd webhook";
const MANIFESTS_HELP: &str =
    "## Regenerate CRDs, RBAC (config/rbac/role.yaml) and webhook configurations from the code markers.";
const MANIFESTS_HELP_SSA: &str =
    "## Regenerate CRDs, RBAC (config/rbac/role.yaml), webhook configurations and apply \
     configurations from the code markers.";

fn read_project_file(root: &Path, rel: &str) -> Option<String> {
    crate::fsx::read_text(&root.join(rel), 4 << 20)
        .ok()
        .flatten()
}

/// Server-side apply (`--ssa`), beyond the types template: turn on apply-configuration
/// generation for the group/version package, keep the package's other kinds out of it, and make
/// `make manifests` generate the apply configurations. As in Kubebuilder, a file that has been
/// changed so that the edit has no place is reported with the change to make by hand; the
/// command goes on.
fn plan_ssa(
    root: &Path,
    project: &Project,
    ctx: &ResourceCtx,
    plan: &mut Plan,
    notes: &mut Vec<String>,
) -> Result<()> {
    // The package marker. A new package gets it from the template.
    let gv_file = format!("{}/groupversion_info.go", ctx.api_dir);
    if let Some(text) = read_project_file(root, &gv_file) {
        if !text.contains("+kubebuilder:ac:generate=true") {
            if text.lines().any(|l| l == OBJECT_GENERATE) {
                plan.update(
                    &gv_file,
                    Edit::AfterLine {
                        anchor: OBJECT_GENERATE.into(),
                        text: AC_ENABLE.into(),
                    },
                );
            } else {
                notes.push(format!(
                    "warning: {gv_file} has no `{OBJECT_GENERATE}` line; add `{AC_ENABLE}` to its package comment \
                     by hand to generate apply configurations for {}/{}",
                    ctx.group, ctx.version
                ));
            }
        }
    }
    // The package marker covers every kind in it: the kinds made without --ssa opt out.
    let mut known = vec![format!("{}_types.go", ctx.kind_lower)];
    for r in project
        .resources
        .iter()
        .filter(|r| r.group == ctx.group && r.version == ctx.version)
    {
        let file = format!("{}_types.go", r.kind.to_ascii_lowercase());
        known.push(file.clone());
        if r.kind == ctx.kind || r.api.as_ref().is_none_or(|a| a.ssa) {
            continue;
        }
        let path = format!("{}/{file}", ctx.api_dir);
        let manual = |why: &str| {
            format!(
                "warning: {path} {why}; add `{AC_DISABLE}` above the {} type by hand to keep it out of \
                 apply-configuration generation",
                r.kind
            )
        };
        match read_project_file(root, &path) {
            None => notes.push(manual("cannot be read")),
            Some(t) if t.contains("+kubebuilder:ac:generate") => {}
            Some(t) if t.lines().any(|l| l == OBJECT_ROOT) => plan.update(
                &path,
                Edit::AfterLine {
                    anchor: OBJECT_ROOT.into(),
                    text: AC_DISABLE.into(),
                },
            ),
            Some(_) => notes.push(manual(&format!("has no `{OBJECT_ROOT}` line"))),
        }
    }
    if let Ok(rd) = std::fs::read_dir(root.join(&ctx.api_dir)) {
        let mut untracked: Vec<String> = rd
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with("_types.go") && !known.contains(n))
            .collect();
        untracked.sort();
        for n in untracked {
            notes.push(format!(
                "warning: {}/{n} holds types PROJECT does not list; if they should not get apply configurations, \
                 add `{AC_DISABLE}` above each of them",
                ctx.api_dir
            ));
        }
    }
    // The Makefile: the first kind with server-side apply adds the generator.
    let header = if root.join(crate::context::BOILERPLATE_FILE).is_file() {
        ":headerFile=\"hack/boilerplate.go.txt\""
    } else {
        ""
    };
    let generators = format!("{MANIFESTS_GENERATORS} applyconfiguration{header}");
    match read_project_file(root, "Makefile") {
        Some(text) if text.contains("applyconfiguration") => {}
        Some(text) => match makefile_with_applyconfiguration(&text, &generators) {
            Some(new) => plan.create("Makefile", new, IfExists::Overwrite),
            None => notes.push(format!(
                "warning: the Makefile's manifests recipe has no `{MANIFESTS_GENERATORS}`; add \
                 `applyconfiguration{header}` to its controller-gen generators by hand"
            )),
        },
        None => notes.push(format!(
            "warning: no Makefile; run controller-gen with `applyconfiguration{header}` to generate the apply configurations"
        )),
    }
    Ok(())
}

/// The Makefile with the apply-configuration generator in the `manifests` recipe (and its help
/// text updated when it is still ours), or None when the recipe is not recognised.
fn makefile_with_applyconfiguration(text: &str, generators: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let target = lines.iter().position(|l| l.starts_with("manifests:"))?;
    let recipe = target + 1;
    let line = lines.get(recipe)?;
    if !line.starts_with('\t') || !line.contains(MANIFESTS_GENERATORS) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 80);
    for (i, l) in lines.iter().enumerate() {
        if i == target {
            out.push_str(&l.replacen(MANIFESTS_HELP, MANIFESTS_HELP_SSA, 1));
        } else if i == recipe {
            out.push_str(&l.replacen(MANIFESTS_GENERATORS, generators, 1));
        } else {
            out.push_str(l);
        }
    }
    Some(out)
}

impl ResolvedResource {
    /// Record the resource in PROJECT as Kubebuilder does: one entry per group/version/kind.
    pub fn record(&self, project: &mut Project) {
        let ResolvedResource {
            gvk,
            plural,
            default_plural,
            api_path,
            ..
        } = self;
        let (group, version, kind) = (&gvk.group, &gvk.version, &gvk.kind);
        let kind_lower = kind.to_ascii_lowercase();
        let entry = match project.find_mut(group, version, kind) {
            Some(r) => r,
            None => {
                project.resources.push(Resource {
                    group: group.clone(),
                    version: version.clone(),
                    kind: kind.clone(),
                    ..Default::default()
                });
                project.resources.last_mut().expect("just pushed")
            }
        };
        entry.domain = gvk.domain.clone();
        entry.path = api_path.clone();
        if self.do_resource {
            entry.api = Some(Api {
                crd_version: "v1".into(),
                namespaced: self.namespaced,
                ssa: self.ssa || entry.api.as_ref().is_some_and(|a| a.ssa),
            });
            entry.plural = if plural != default_plural {
                plural.clone()
            } else {
                String::new()
            };
        }
        if self.core {
            entry.core = true;
        }
        if self.external {
            entry.external = true;
            entry.module = self.external_module.clone().unwrap_or_default();
        }
        if self.do_controller {
            match &self.controller_name {
                Some(n) => {
                    if entry.controller {
                        // The unnamed controller becomes the first of the list.
                        entry.controller = false;
                        entry.controllers.push(Controller {
                            name: kind_lower.clone(),
                        });
                    }
                    entry.controllers.push(Controller { name: n.clone() });
                }
                None if entry.controllers.is_empty() => entry.controller = true,
                None => {}
            }
        }
    }
}

/// Plan `create api`: decide what the resource is, then let the plugin chain plan its files and
/// record it in PROJECT.
pub fn plan(root: &Path, args: &ApiArgs) -> Result<(Plan, bool, bool, Vec<String>)> {
    Ok(plan_keeping_project(root, args)?.0)
}

/// [`plan`], also handing back the project read (see [`run`]).
#[allow(clippy::type_complexity)]
fn plan_keeping_project(
    root: &Path,
    args: &ApiArgs,
) -> Result<((Plan, bool, bool, Vec<String>), Project)> {
    let flag = plugins::parse_flag(args.run.plugins.as_deref())?;
    let (mut project, text) = Project::load_with_text(root)?;
    // The top-level keys as read (cheap: without the resources), to tell whether PROJECT can be
    // written by appending the new resource to its text.
    let resources = std::mem::take(&mut project.resources);
    let before = project.clone();
    project.resources = resources;
    let existing = project.resources.len();
    let chain = plugins::Chain::for_command(Some(&project), flag, plugins::Command::CreateApi)?;
    let image = plugins::deployimage::check_flags(chain.has(plugins::deployimage::NAME), args)?;
    let mut res = resolve(&project, args)?;
    res.deploy_image = image;
    let mut plan = Plan::default();
    let mut notes = vec![];
    // `record` appends a new group/version/kind and changes no other entry; an existing one is
    // updated in place, and then the whole file is written.
    let appended = project
        .find(&res.gvk.group, &res.gvk.version, &res.gvk.kind)
        .is_none();
    chain.create_api(
        &mut plugins::Cx {
            root,
            plan: &mut plan,
            project: &mut project,
            notes: &mut notes,
        },
        &res,
    )?;
    plan.project = Some(if appended {
        project.to_yaml_appended(&before, existing, &text)
    } else {
        project.to_yaml()
    });
    Ok(((plan, res.do_resource, res.external, notes), project))
}

pub fn run(root: &Path, args: &ApiArgs) -> Result<()> {
    let ((plan, did_resource, _external, notes), project) = plan_keeping_project(root, args)?;
    // The process ends after this command, and the system takes its memory back at once;
    // freeing every string of a large PROJECT one by one first (a tenth of `create api` in a
    // project of 200 kinds) would be work for nothing. Only here: `alpha generate` plans many
    // commands in one process and drops each project.
    std::mem::forget(project);
    let post_steps = !args.run.skip_post_steps && !args.run.dry_run;
    // What the project imported before, to tell whether `go mod tidy` can change anything.
    let imports_before = post_steps.then(|| post::project_imports(root));
    if !super::execute(
        root,
        &plan,
        args.run.dry_run,
        "create api",
        &format!(
            "Scaffolded {}/{} {}:",
            args.res.group, args.res.version, args.res.kind
        ),
    )? {
        return Ok(());
    }
    for n in &notes {
        errln!("{n}");
    }
    if let Some(before) = imports_before {
        let written = post::written_go_files(&plan);
        let mut steps = vec![];
        if let Some(m) = &args.res.external_api_module {
            steps.push(Step::GoGet(m.clone()));
        }
        if !steps.is_empty() || post::tidy_needed(root, &before, &written) {
            steps.push(Step::GoModTidy);
        } else {
            post::skipped(
                &Step::GoModTidy,
                "the new code imports no package the project did not import already",
            );
        }
        let packages = if did_resource && args.run.make {
            post::generate_packages(root, &written)
        } else {
            vec![]
        };
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
