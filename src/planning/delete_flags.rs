//! The flags of `create api` and `create webhook` that `delete` takes too, so that a `create`
//! command line with `create` changed to `delete` deletes what it made. Those that describe the
//! resource are checked against PROJECT's record of it (a value that differs is a usage error
//! naming both); those about running `create` (`--make`, `--skip-post-steps`,
//! `--allow-missing-markers`) change nothing: `delete` runs no post-steps, it names the
//! commands to run next, and taking wiring out needs no marker.

use super::flags::{ImageFlags, Options};
use crate::error::usage;
use crate::flect;
use crate::project::{Project, Resource};
use anyhow::Result;
use clap::Args;

const HEADING: &str = "As `create` was given them (checked against PROJECT)";

/// The flags of both `create` commands about the resource and about running them.
#[derive(Debug, Default, Args)]
pub struct CreateFlags {
    /// The plural resource name
    #[arg(long, value_name = "PLURAL", help_heading = HEADING)]
    pub plural: Option<String>,
    /// The external API's import path (go/v4), or the CRD file it was made from (Rust: taken
    /// as given, PROJECT keeps the CRD's copy instead)
    #[arg(long, value_name = "IMPORT_PATH", help_heading = HEADING)]
    pub external_api_path: Option<String>,
    /// The external API group's domain
    #[arg(long, value_name = "DOMAIN", help_heading = HEADING)]
    pub external_api_domain: Option<String>,
    /// The Go module that provides the external API (Rust: taken as given)
    #[arg(long, value_name = "MODULE", help_heading = HEADING)]
    pub external_api_module: Option<String>,
    /// Changes nothing: `delete` runs no post-steps, it names the commands to run next
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", help_heading = HEADING)]
    pub make: Option<bool>,
    /// Changes nothing: `delete` runs no post-steps
    #[arg(long, help_heading = HEADING)]
    pub skip_post_steps: bool,
    /// Changes nothing: taking wiring out needs no marker
    #[arg(long, help_heading = HEADING)]
    pub allow_missing_markers: bool,
}

/// The flags of `create api` alone about the resource.
#[derive(Debug, Default, Args)]
pub struct CreateApiFlags {
    /// Whether the kind is namespace-scoped
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", help_heading = HEADING)]
    pub namespaced: Option<bool>,
    /// Whether the types were made for server-side apply
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", help_heading = HEADING)]
    pub ssa: Option<bool>,
    #[command(flatten)]
    pub image: ImageFlags,
}

/// The flags of `create webhook` alone about the webhooks.
#[derive(Debug, Default, Args)]
pub struct CreateWebhookFlags {
    /// With --conversion: the versions it converts, all of them (a spoke alone goes with
    /// `delete api` of its version)
    #[arg(long, value_delimiter = ',', value_name = "VERSIONS", help_heading = HEADING)]
    pub spoke: Vec<String>,
    /// With --defaulting: the defaulting webhook's path
    #[arg(long, value_name = "PATH", help_heading = HEADING)]
    pub defaulting_path: Option<String>,
    /// With --programmatic-validation: the validating webhook's path
    #[arg(long, value_name = "PATH", help_heading = HEADING)]
    pub validation_path: Option<String>,
}

/// A resource as messages name it, and the flags that name it.
fn names(r: &Resource) -> (String, String) {
    let group = if r.group.is_empty() { "\"\"" } else { &r.group };
    (
        format!("{group}/{} {}", r.version, r.kind),
        format!("--group {group} --version {} --kind {}", r.version, r.kind),
    )
}

/// `flag`'s value `given` is not what PROJECT records for `r` (`shown`).
fn differs(r: &Resource, flag: &str, given: &str, shown: &str) -> anyhow::Error {
    let (named, _) = names(r);
    let sep = if given.starts_with('=') { "" } else { " " };
    usage(format!(
        "{flag}{sep}{given}: PROJECT records {named} with {shown}; give {flag} as `create` was given it, or leave it out"
    ))
}

/// Check the flags of both commands against PROJECT's entry `r`.
pub fn check(project: &Project, r: &Resource, f: &CreateFlags) -> Result<()> {
    if let Some(p) = &f.plural {
        let recorded = if r.plural.is_empty() {
            flect::pluralize(&r.kind.to_ascii_lowercase())
        } else {
            r.plural.clone()
        };
        if *p != recorded {
            return Err(differs(r, "--plural", p, &format!("the plural {recorded}")));
        }
    }
    let external = [
        (&f.external_api_path, "--external-api-path"),
        (&f.external_api_domain, "--external-api-domain"),
        (&f.external_api_module, "--external-api-module"),
    ];
    if let Some((_, flag)) = external.iter().find(|(v, _)| v.is_some()) {
        if !r.external {
            let (named, flags) = names(r);
            return Err(usage(format!(
                "{flag}: {named} is the project's own, not another project's API (PROJECT records no `external: \
                 true` for it); leave the --external-api-* flags out: opbuilder delete ... {flags}"
            )));
        }
    }
    if !r.external {
        return Ok(());
    }
    // The Rust layout records the CRD's copy in the project, not the file or module it came from.
    let go = project.rust_layout().is_none();
    let checked = [
        (
            &f.external_api_domain,
            "--external-api-domain",
            "domain",
            r.domain.as_str(),
            true,
        ),
        (
            &f.external_api_path,
            "--external-api-path",
            "import path",
            r.path.as_str(),
            go,
        ),
        (
            &f.external_api_module,
            "--external-api-module",
            "module",
            r.module.as_str(),
            go && !r.module.is_empty(),
        ),
    ];
    for (given, flag, what, recorded, check) in checked {
        match given {
            Some(g) if check && g != recorded => {
                return Err(differs(r, flag, g, &format!("the {what} {recorded}")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Check `create api`'s own flags against PROJECT's entry `r` and deploy-image's record of it
/// (`image`, when the plugin made it).
pub fn check_api(r: &Resource, f: &CreateApiFlags, image: Option<&Options>) -> Result<()> {
    for (given, flag, recorded) in [
        (
            f.namespaced,
            "--namespaced",
            r.api.as_ref().map(|a| a.namespaced),
        ),
        (f.ssa, "--ssa", r.api.as_ref().map(|a| a.ssa)),
    ] {
        match (given, recorded) {
            (Some(g), Some(rec)) if g != rec => {
                return Err(differs(r, flag, &format!("={g}"), &format!("{flag}={rec}")));
            }
            _ => {}
        }
    }
    let flags = [
        (&f.image.image, "--image", image.map(|o| &o.image)),
        (
            &f.image.image_container_command,
            "--image-container-command",
            image.map(|o| &o.container_command),
        ),
        (
            &f.image.image_container_port,
            "--image-container-port",
            image.map(|o| &o.container_port),
        ),
        (
            &f.image.run_as_user,
            "--run-as-user",
            image.map(|o| &o.run_as_user),
        ),
    ];
    for (given, flag, recorded) in flags {
        let Some(g) = given else { continue };
        match recorded {
            None => {
                let (named, _) = names(r);
                return Err(usage(format!(
                    "{flag}: {named} was not made by deploy-image/v1-alpha (PROJECT's section of the plugin does not \
                     list it); leave the deploy-image flags out"
                )));
            }
            Some(rec) if g != rec => {
                let shown = if rec.is_empty() {
                    format!("no {flag}")
                } else {
                    format!("{flag} {rec}")
                };
                return Err(differs(r, flag, g, &shown));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Check `create webhook`'s own flags against PROJECT's entry `r`, for the types asked for.
pub fn check_webhook(
    r: &Resource,
    f: &CreateWebhookFlags,
    defaulting: bool,
    validation: bool,
    conversion: bool,
) -> Result<()> {
    let had = r.webhooks.clone().unwrap_or_default();
    for (given, flag, with, on, recorded) in [
        (
            &f.defaulting_path,
            "--defaulting-path",
            "--defaulting",
            defaulting,
            &had.defaulting_path,
        ),
        (
            &f.validation_path,
            "--validation-path",
            "--programmatic-validation",
            validation,
            &had.validation_path,
        ),
    ] {
        let Some(p) = given else { continue };
        if !on {
            return Err(usage(format!(
                "{flag} is the path of the webhook {with} deletes: add {with}"
            )));
        }
        if p != recorded {
            let shown = if recorded.is_empty() {
                "the default path".to_string()
            } else {
                format!("the path {recorded}")
            };
            return Err(differs(r, flag, p, &shown));
        }
    }
    if !f.spoke.is_empty() {
        if !conversion {
            return Err(usage(
                "--spoke lists the versions the conversion webhook converts: add --conversion",
            ));
        }
        let (mut given, mut recorded) = (f.spoke.clone(), had.spoke.clone());
        given.sort();
        recorded.sort();
        if given != recorded {
            let group = if r.group.is_empty() { "\"\"" } else { &r.group };
            let spoke = f
                .spoke
                .iter()
                .find(|s| had.spoke.contains(s))
                .or(had.spoke.first())
                .map_or("VERSION", String::as_str);
            return Err(usage(format!(
                "--spoke {}: the conversion webhook of {} converts {}, and `delete webhook --conversion` takes all of \
                 it away; give them all, or delete one spoke's version with its conversion: opbuilder delete api \
                 --group {group} --version {spoke} --kind {}",
                f.spoke.join(","),
                names(r).0,
                if had.spoke.is_empty() {
                    "no other version".to_string()
                } else {
                    had.spoke.join(",")
                },
                r.kind
            )));
        }
    }
    Ok(())
}
