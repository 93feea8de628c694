//! The request of `create api` and the resource it resolves to: what the flags, the names and
//! PROJECT's rules decide before any file is planned, and how the resource is recorded.

use super::flags::{ImageFlags, Options, ResourceFlags, RunFlags};
use crate::error::{bad_flag, usage};
use crate::flect;
use crate::out::errln;
use crate::project::{Api, Controller, Project, Resource};
use crate::resource::{self, Gvk};
use crate::validate;
use anyhow::{bail, Result};
use clap::Args;
use std::io::IsTerminal;

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
    pub res: ResourceFlags,
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
    /// Scaffold the types for server-side apply: `make manifests` also generates their apply
    /// configurations (needs --resource)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false", value_name = "BOOL")]
    pub ssa: bool,
    /// Scaffold again over an existing API or controller (replaces its generated files)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub image: ImageFlags,
    #[command(flatten)]
    pub run: RunFlags,
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
    pub deploy_image: Option<Options>,
    /// Planned to be taken out again (`delete api`): what `create` wrote, as it would write it
    /// into the project without this resource, read from nothing the command itself changed.
    pub undo: bool,
}

/// The external-API flags: which need which, and the path's and domain's form. Whether the
/// types are external.
fn check_external_flags(args: &ApiArgs, rust: bool) -> Result<bool> {
    let external = args.res.external_api_path.is_some();
    if args.res.external_api_module.is_some() && !external {
        return Err(usage("--external-api-module needs --external-api-path (the package to import from that module)"));
    }
    if args.res.external_api_domain.is_some() && !external {
        return Err(usage("--external-api-domain needs --external-api-path"));
    }
    if let Some(p) = &args.res.external_api_path {
        if rust {
            // The Rust layout reads the kind's CRD from a file (see plugins::rust::external).
            if p.trim().is_empty() || p.chars().any(char::is_control) {
                return Err(bad_flag(
                    "--external-api-path",
                    p,
                    "the Rust layout takes the path of the kind's CustomResourceDefinition (YAML)",
                    "external-crds/cert-manager.io_certificates.yaml",
                ));
            }
        } else {
            check_external_path(p)?;
            if let Some(m) = args.res.external_api_module.as_deref() {
                if m.starts_with("crate:") {
                    return Err(bad_flag(
                        "--external-api-module",
                        m,
                        "crate:NAME@VERSION names a crate, whose CRD file the Rust layout reads; go/v4 \
                         imports Go types from a Go module",
                        "github.com/cert-manager/cert-manager@v1.18.2",
                    ));
                }
            }
        }
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
    Ok(external)
}

/// Whether to scaffold the types and the controller (asking on a terminal), and the flags that
/// depend on that.
fn what_to_scaffold(args: &ApiArgs, external: bool) -> Result<(bool, bool)> {
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

    Ok((do_resource, do_controller))
}

/// PROJECT's rules: an API once, one group unless multigroup, one controller per kind unless
/// named.
fn check_project_rules(
    project: &Project,
    args: &ApiArgs,
    (group, version, kind): (&str, &str, &str),
    existing: Option<&Resource>,
    do_resource: bool,
    do_controller: bool,
) -> Result<()> {
    if do_resource && existing.is_some_and(|r| r.api.is_some()) && !args.force {
        bail!(
            "the API {group}/{version} {kind} already exists (see PROJECT); pass --force to scaffold its types, \
             sample and controller again (their files are replaced)"
        );
    }
    // Like Kubebuilder, the one-group rule applies to APIs created in the project only: a controller
    // for a core or external type may name any group.
    if do_resource && group.is_empty() && !project.multigroup && !project.has_group(group) {
        if let Some(r) = project.resources.iter().find(|r| r.api.is_some()) {
            return Err(usage(format!(
                "--group is missing: the APIs of this single-group project are in group {:?} ({}); pass it, \
                 for example: opbuilder create api --group {} --version {version} --kind {kind}",
                r.group,
                Gvk {
                    group: r.group.to_string(),
                    version: String::new(),
                    kind: String::new(),
                    domain: r.domain.to_string(),
                }
                .qgroup(),
                r.group
            )));
        }
    }
    if do_resource
        && !project.multigroup
        && !project.resources.is_empty()
        && !project.has_group(group)
    {
        let groups: Vec<&str> = project.resources.iter().map(|r| r.group.as_str()).collect();
        bail!(
            "this project holds group {:?} already and is single-group; run `opbuilder edit --multigroup` \
             first to add group {group:?}",
            groups[0]
        );
    }
    if do_controller && !do_resource && args.controller_name.is_none() && !args.force {
        if let Some(r) = existing {
            if r.controller || !r.controllers.is_empty() {
                bail!(
                    "{group}/{version} {kind} already has a controller; pass --controller-name to add another one, \
                     or --force to scaffold the existing one again"
                );
            }
        }
    }

    if do_controller && args.controller_name.is_none() && !args.force {
        if let Some(other) = project.kind_controller(group, kind, version) {
            bail!(
                "{kind} already has a controller (scaffolded with version {other}); a kind has one controller \
                 for all its versions.\n  Add version {version} without one: --controller=false \
                 (or add a second controller with --controller-name <name>)"
            );
        }
    }

    Ok(())
}

/// The plural (given, recorded or computed; a valid one when flect's is not) and the default
/// plural Kubebuilder computes for the kind.
fn plural_for(
    args: &ApiArgs,
    existing: Option<&Resource>,
    kind: &str,
    do_resource: bool,
) -> Result<(String, String)> {
    let kind_lower = kind.to_ascii_lowercase();
    let default_plural = flect::pluralize(&kind_lower);
    let plural = match (&args.res.plural, existing) {
        (Some(p), _) => p.clone(),
        (None, Some(r)) if !r.plural.is_empty() => r.plural.clone(),
        _ => default_plural.clone(),
    };
    if let (Some(r), Some(p)) = (existing, &args.res.plural) {
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
    Ok((plural, default_plural))
}

/// When PROJECT records `group`/`version` with a kind that differs from `kind` in case only and
/// starts with a lower-case letter (a hand-edited entry: Kubebuilder refuses such kinds too),
/// what to do about it.
pub fn lowercase_kind(project: &Project, group: &str, version: &str, kind: &str) -> Option<String> {
    let r = project.resources.iter().find(|r| {
        r.group.eq_ignore_ascii_case(group)
            && r.version == version
            && r.kind.eq_ignore_ascii_case(kind)
            && r.kind.starts_with(|c: char| c.is_ascii_lowercase())
    })?;
    let mut upper = r.kind.clone();
    upper[..1].make_ascii_uppercase();
    Some(format!(
        "PROJECT records {}/{} with the kind {:?}, which starts with a lower-case letter: kinds are exported Go \
         types, so neither opbuilder nor Kubebuilder extends that entry. If its Go type is {upper}, write \
         `kind: {upper}` in PROJECT and run the command again",
        r.group, r.version, r.kind
    ))
}

/// A resource check's error, with what to do about a lower-case kind in PROJECT when there is one.
pub fn with_kind_hint(
    project: &Project,
    (g, v, k): (&str, &str, &str),
    e: anyhow::Error,
) -> anyhow::Error {
    match lowercase_kind(project, g, v, k) {
        Some(hint) if crate::error::exit_code(&e) == 2 => usage(format!("{e:#}\n  {hint}")),
        Some(hint) => anyhow::anyhow!("{e:#}\n  {hint}"),
        None => e,
    }
}

/// Decide what the resource is: check the flags, derive names, apply PROJECT's rules. Nothing is
/// planned or written; usage errors exit 2, rule violations 1.
pub fn resolve(project: &Project, args: &ApiArgs) -> Result<ResolvedResource> {
    let group = args.res.group.trim().to_string();
    let version = args.res.version.trim().to_string();
    let kind = args.res.kind.trim().to_string();
    resource::validate_gvk(&group, &version, &kind, &project.domain)
        .map_err(|e| with_kind_hint(project, (&group, &version, &kind), e))?;
    if let Some(p) = &args.res.plural {
        resource::validate_plural(p, true)?;
    }
    if let Some(hint) = lowercase_kind(project, &group, &version, &kind) {
        bail!("{hint}");
    }
    let external = check_external_flags(args, project.rust_layout().is_some())?;
    if !external {
        resource::check_group_without_domain(&group, &project.domain, project.has_group(&group))?;
    }
    let kind_lower = kind.to_ascii_lowercase();
    let existing = project.find(&group, &version, &kind).cloned();
    if let Some(n) = &args.controller_name {
        check_controller_name(n, &kind_lower, existing.as_ref())?;
    }

    let (do_resource, do_controller) = what_to_scaffold(args, external)?;

    check_project_rules(
        project,
        args,
        (&group, &version, &kind),
        existing.as_ref(),
        do_resource,
        do_controller,
    )?;

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
        resource::recorded_domain_and_path(project, r).0
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
    } else if do_resource {
        lay.api_path.clone()
    } else {
        // A controller for types PROJECT records imports them from where PROJECT says they
        // are (a path of its own when they were moved, or made by an earlier layout).
        existing
            .as_ref()
            .map(|r| resource::recorded_domain_and_path(project, r).1)
            .unwrap_or_default()
    };
    // (The Rust layout records its types' module path, and plans where they go itself.)
    let go = project.rust_layout().is_none();
    if let Some(r) = existing
        .as_ref()
        .filter(|r| go && do_resource && r.api.is_some())
    {
        if !r.path.is_empty() && r.path != api_path {
            bail!(
                "{group}/{version} {kind}'s types are in {} (PROJECT's path), and `create api --force` would scaffold \
                 them again in {} instead, beside the ones the project imports.\n  Move the types to {} and set \
                 the path in PROJECT first, or scaffold a controller alone with --resource=false",
                r.path,
                lay.api_dir,
                lay.api_dir
            );
        }
    }

    let (plural, default_plural) = plural_for(args, existing.as_ref(), &kind, do_resource)?;
    let crd = existing
        .as_ref()
        .and_then(|r| r.api.as_ref())
        .map_or("", |a| a.crd_version.as_str());
    if do_resource && !crd.is_empty() && crd != "v1" {
        // Kubebuilder refuses ("CRD versions do not match"); the CRD controller-gen makes is
        // apiextensions.k8s.io/v1 whatever PROJECT says.
        errln!(
            "note: PROJECT recorded crdVersion {crd} for {group}/{version} {kind}; its CRD is \
             apiextensions.k8s.io/v1 (the only version controller-gen makes), and PROJECT now records v1"
        );
    }
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
        undo: false,
    })
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
                    group: group.into(),
                    version: version.into(),
                    kind: kind.clone(),
                    ..Default::default()
                });
                project.resources.last_mut().expect("just pushed")
            }
        };
        entry.domain = gvk.domain.as_str().into();
        entry.path = api_path.as_str().into();
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
