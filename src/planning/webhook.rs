//! The request of `create webhook` and the webhooks it resolves to: what the flags, the names
//! and PROJECT's rules decide before any file is planned, and how they are recorded.

use super::flags::{ResourceFlags, RunFlags};
use crate::error::{bad_flag, usage};
use crate::flect;
use crate::project::{Project, Resource, Webhooks};
use crate::resource::{self, Gvk};
use crate::validate;
use anyhow::{bail, Result};
use clap::Args;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  opbuilder create webhook --group ingress --version v1beta1 --kind App \\
      --defaulting --programmatic-validation
  opbuilder create webhook --group ingress --version v1beta1 --kind App \\
      --programmatic-validation --validation-path /validate-app
  opbuilder create webhook --group batch --version v1 --kind MyCronJob \\
      --conversion --spoke v2
  opbuilder create webhook --group core --version v1 --kind Pod \\
      --defaulting")]
pub struct WebhookArgs {
    #[command(flatten)]
    pub res: ResourceFlags,
    /// A mutating webhook that sets defaults
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook that accepts or rejects objects
    #[arg(long)]
    pub programmatic_validation: bool,
    /// A conversion webhook; this version becomes the hub (storage) version
    #[arg(long)]
    pub conversion: bool,
    /// With --conversion: versions converted to and from the hub (comma-separated, each already in PROJECT)
    #[arg(long, value_delimiter = ',', value_name = "VERSIONS")]
    pub spoke: Vec<String>,
    /// Custom path of the defaulting webhook (with --defaulting)
    #[arg(long, value_name = "PATH")]
    pub defaulting_path: Option<String>,
    /// Custom path of the validating webhook (with --programmatic-validation)
    #[arg(long, value_name = "PATH")]
    pub validation_path: Option<String>,
    /// Scaffold a webhook type again (replaces the webhook and test files)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub run: RunFlags,
}

fn check_path_flag(flag: &str, value: &str) -> Result<()> {
    let ok = value.starts_with('/')
        && value.len() > 1
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-/._".contains(c));
    if ok {
        Ok(())
    } else {
        Err(bad_flag(
            flag,
            value,
            "must be a URL path: '/' followed by lower-case letters, digits, '-', '.', '_' and '/'",
            "/validate-app",
        ))
    }
}

/// What `create webhook` will make, decided from the flags, the names and PROJECT's rules,
/// before any file is planned.
#[derive(Debug, Clone)]
pub struct ResolvedWebhook {
    pub gvk: Gvk,
    pub plural: String,
    /// Go import path of the types.
    pub api_path: String,
    pub core: bool,
    pub external: bool,
    pub external_api_module: Option<String>,
    /// PROJECT's entry for the kind before this command.
    pub existing: Option<Resource>,
    /// The webhooks the kind had before this command.
    pub had: Webhooks,
    /// The webhook types asked for.
    pub defaulting: bool,
    pub programmatic_validation: bool,
    pub conversion: bool,
    pub spoke: Vec<String>,
    pub defaulting_path: Option<String>,
    pub validation_path: Option<String>,
    pub force: bool,
    /// Planned to be taken out again (`delete webhook`), as for
    /// [`super::api::ResolvedResource::undo`].
    pub undo: bool,
}

/// Decide what the webhooks are: check the flags, derive names, apply PROJECT's rules. Nothing
/// is planned or written; usage errors exit 2, rule violations 1.
pub fn resolve(project: &Project, args: &WebhookArgs) -> Result<ResolvedWebhook> {
    let group = args.res.group.trim().to_string();
    let version = args.res.version.trim().to_string();
    let kind = args.res.kind.trim().to_string();
    resource::validate_gvk(&group, &version, &kind, &project.domain)
        .map_err(|e| super::api::with_kind_hint(project, (&group, &version, &kind), e))?;
    if let Some(hint) = super::api::lowercase_kind(project, &group, &version, &kind) {
        bail!("{hint}");
    }
    if !(args.defaulting || args.programmatic_validation || args.conversion) {
        return Err(usage(
            "choose at least one webhook type: --defaulting, --programmatic-validation or --conversion; \
             for example: --defaulting --programmatic-validation",
        ));
    }
    if let Some(p) = &args.defaulting_path {
        if !args.defaulting {
            return Err(usage(
                "--defaulting-path sets the path of the defaulting webhook: add --defaulting",
            ));
        }
        check_path_flag("--defaulting-path", p)?;
    }
    if let Some(p) = &args.validation_path {
        if !args.programmatic_validation {
            return Err(usage("--validation-path sets the path of the validating webhook: add --programmatic-validation"));
        }
        check_path_flag("--validation-path", p)?;
    }
    if !args.spoke.is_empty() && !args.conversion {
        return Err(usage(
            "--spoke lists the versions a conversion webhook converts: add --conversion",
        ));
    }
    if let Some(p) = &args.res.plural {
        resource::validate_plural(p, true)?;
    }
    for s in &args.spoke {
        validate::api_version(s).map_err(|r| bad_flag("--spoke", s, &r, "v2"))?;
        if *s == version {
            return Err(bad_flag(
                "--spoke",
                s,
                "a spoke must differ from the hub version given in --version",
                "v2",
            ));
        }
    }
    if args.res.external_api_module.is_some() && args.res.external_api_path.is_none() {
        return Err(usage("--external-api-module needs --external-api-path (the package to import from that module)"));
    }

    if args.res.external_api_path.is_none() {
        resource::check_group_without_domain(&group, &project.domain, project.has_group(&group))?;
    }
    let existing = project.find(&group, &version, &kind).cloned();
    for s in &args.spoke {
        if project
            .find(&group, s, &kind)
            .is_none_or(|r| r.api.is_none())
        {
            bail!(
                "--spoke {s}: PROJECT has no API {group}/{s} {kind}; create it first with \
                 `opbuilder create api --group {group} --version {s} --kind {kind}`"
            );
        }
    }
    let (core, external, domain, api_path) = match (&existing, &args.res.external_api_path) {
        (Some(r), _) => {
            let (domain, path) = resource::recorded_domain_and_path(project, r);
            (r.core, r.external, domain, path)
        }
        (None, Some(p)) => (
            false,
            true,
            args.res.external_api_domain.clone().unwrap_or_default(),
            p.clone(),
        ),
        (None, None) => match resource::core_domain(&group) {
            Some(d) => (
                true,
                false,
                d.to_string(),
                format!("k8s.io/api/{group}/{version}"),
            ),
            None => {
                let q = Gvk {
                    group: group.clone(),
                    version: version.clone(),
                    kind: kind.clone(),
                    domain: project.domain.clone(),
                }
                .qgroup();
                bail!(
                    "no API {q}/{version} {kind} in this project: run `opbuilder create api --group {group} --version {version} --kind {kind}` first, \
                     or pass --external-api-path for a type from another module"
                );
            }
        },
    };
    if args.conversion && (core || external || existing.as_ref().is_none_or(|r| r.api.is_none())) {
        bail!("--conversion needs an API whose types live in this project; {group}/{version} {kind} is not one");
    }
    let default_plural = flect::pluralize(&kind.to_ascii_lowercase());
    let recorded = existing.as_ref().map(|r| {
        if r.plural.is_empty() {
            default_plural.clone()
        } else {
            r.plural.clone()
        }
    });
    let plural = match (&args.res.plural, &recorded) {
        (Some(p), Some(r)) if p != r => {
            bail!("--plural {p:?} differs from the plural {r:?} recorded for {kind} in PROJECT; drop --plural or use {r:?}")
        }
        (Some(p), _) => p.clone(),
        (None, Some(r)) => r.clone(),
        (None, None) => default_plural.clone(),
    };
    let had = existing
        .as_ref()
        .and_then(|r| r.webhooks.clone())
        .unwrap_or_default();
    for (asked, present, name) in [
        (args.defaulting, had.defaulting, "defaulting"),
        (args.programmatic_validation, had.validation, "validation"),
        (args.conversion, had.conversion, "conversion"),
    ] {
        if asked && present && !args.force {
            bail!("{group}/{version} {kind} already has a {name} webhook; pass --force to scaffold it again (its webhook and test files are replaced)");
        }
    }

    Ok(ResolvedWebhook {
        gvk: Gvk {
            group,
            version,
            kind,
            domain,
        },
        plural,
        api_path,
        core,
        external,
        external_api_module: args.res.external_api_module.clone(),
        existing,
        had,
        defaulting: args.defaulting,
        programmatic_validation: args.programmatic_validation,
        conversion: args.conversion,
        spoke: args.spoke.clone(),
        defaulting_path: args.defaulting_path.clone(),
        validation_path: args.validation_path.clone(),
        force: args.force,
        undo: false,
    })
}

impl ResolvedWebhook {
    /// Record the webhooks in PROJECT as Kubebuilder does (the kind's entry is added when it has
    /// none, as for a core or external type).
    pub fn record(&self, project: &mut Project) {
        let gvk = &self.gvk;
        let entry = match project.find_mut(&gvk.group, &gvk.version, &gvk.kind) {
            Some(r) => r,
            None => {
                project.resources.push(Resource {
                    group: gvk.group.as_str().into(),
                    version: gvk.version.as_str().into(),
                    kind: gvk.kind.clone(),
                    domain: gvk.domain.as_str().into(),
                    path: self.api_path.as_str().into(),
                    core: self.core,
                    external: self.external,
                    module: self.external_api_module.clone().unwrap_or_default(),
                    ..Default::default()
                });
                project.resources.last_mut().expect("just pushed")
            }
        };
        // An entry without domain or path (project version 3-alpha, or written by hand) gets
        // the ones the webhook was made with.
        if entry.domain.is_empty() {
            entry.domain = gvk.domain.as_str().into();
        }
        if entry.path.is_empty() {
            entry.path = self.api_path.as_str().into();
        }
        let mut w = entry.webhooks.clone().unwrap_or_default();
        w.defaulting |= self.defaulting;
        w.validation |= self.programmatic_validation;
        w.conversion |= self.conversion;
        if let Some(p) = &self.defaulting_path {
            w.defaulting_path = p.clone();
        }
        if let Some(p) = &self.validation_path {
            w.validation_path = p.clone();
        }
        for s in &self.spoke {
            if !w.spoke.contains(s) {
                w.spoke.push(s.clone());
            }
        }
        w.webhook_version = "v1".into();
        entry.webhooks = Some(w);
    }
}
