//! The commands. Each builds a plan; [`execute`] applies it and reports.

pub mod alpha;
pub mod api;
pub mod edit;
pub mod init;
pub mod webhook;

use crate::plan::{apply, ApplyOptions, Plan};
use anyhow::Result;
use clap::Args;
use std::path::Path;

/// The resource flags shared by `create api` and `create webhook`.
#[derive(Debug, Args)]
pub struct ResourceFlags {
    /// API group, without the domain (`core` for Pods and Services; empty: the domain is the group)
    #[arg(long, default_value = "", value_name = "GROUP")]
    pub group: String,
    /// API version, such as v1, v1beta1, v2alpha1
    #[arg(long, value_name = "VERSION")]
    pub version: String,
    /// Kind, an exported Go identifier such as App or MyCronJob
    #[arg(long, value_name = "KIND")]
    pub kind: String,
    /// Plural resource name [default: computed as Kubebuilder does; must match PROJECT]
    #[arg(long, value_name = "PLURAL")]
    pub plural: Option<String>,
    /// Go import path of an external API package (a type from another module)
    #[arg(long, value_name = "IMPORT_PATH")]
    pub external_api_path: Option<String>,
    /// Domain of the external API group
    #[arg(long, value_name = "DOMAIN")]
    pub external_api_domain: Option<String>,
    /// Go module (optionally @version) that provides --external-api-path
    #[arg(long, value_name = "MODULE")]
    pub external_api_module: Option<String>,
}

/// Flags about running a `create` command: post-steps, dry run, plugins.
#[derive(Debug, Args)]
pub struct RunFlags {
    /// Run `make generate` afterwards (--make=false to skip)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "true", value_name = "BOOL")]
    pub make: bool,
    /// Do not run `go mod tidy` and `make generate` afterwards
    #[arg(long)]
    pub skip_post_steps: bool,
    /// Show what would be written, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Plugin chain, Kubebuilder's keys: go/v4 (default), grafana/v1-alpha, autoupdate/v1-alpha, ...
    #[arg(long, value_name = "KEYS", hide_short_help = true)]
    pub plugins: Option<String>,
}

/// Apply `plan`; on a dry run print the plan and return false, else print `heading` and what
/// was written and return true.
pub fn execute(
    root: &Path,
    plan: &Plan,
    dry_run: bool,
    command: &str,
    heading: &str,
) -> Result<bool> {
    let report = apply(
        root,
        plan,
        &ApplyOptions {
            dry_run,
            ..Default::default()
        },
    )?;
    if dry_run {
        println!("opbuilder {command} --dry-run: nothing was written. The plan:");
        report.print(true);
        return Ok(false);
    }
    println!("{heading}");
    report.print(false);
    Ok(true)
}
