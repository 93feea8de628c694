//! The commands. Each builds a plan; [`execute`] applies it and reports.

pub mod alpha;
pub mod api;
pub mod edit;
pub mod init;
pub mod update;
pub mod webhook;

use crate::journal::{self, Recovery};
use crate::out::{errln, outln};
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
    #[arg(long, value_name = "MODULE", value_parser = parse_module_version)]
    pub external_api_module: Option<String>,
}

/// `--external-api-module`: `MODULE[@VERSION]`. It becomes an argument of `go get`, so it
/// must never be mistaken for a flag (`-modfile=...`).
fn parse_module_version(v: &str) -> std::result::Result<String, String> {
    const EXAMPLE: &str =
        "\n  example of a valid value: --external-api-module github.com/cert-manager/cert-manager@v1.18.2";
    let (module, version) = match v.split_once('@') {
        Some((m, ver)) => (m, Some(ver)),
        None => (v, None),
    };
    crate::validate::go_module_path(module).map_err(|r| format!("the module {r}{EXAMPLE}"))?;
    if !module.split('/').next().is_some_and(|f| f.contains('.')) {
        return Err(format!(
            "the module path must be fully qualified: its first element is a domain{EXAMPLE}"
        ));
    }
    if let Some(ver) = version {
        let ok = !ver.is_empty()
            && !ver.starts_with('-')
            && ver
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._+/".contains(c));
        if !ok {
            return Err(format!(
                "the version after `@` must be a Go module version or query such as v1.2.3 or latest \
                 (letters, digits, '-', '.', '_', '+', '/'; not starting with '-'){EXAMPLE}"
            ));
        }
    }
    Ok(v.to_string())
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
    );
    // The transaction is over (committed, rolled back, or never started): let the next
    // opbuilder in. Post-steps (go mod tidy, make) run unlocked.
    crate::lock::release();
    let report = report?;
    if dry_run {
        outln!("opbuilder {command} --dry-run: nothing was written. The plan:");
        report.print(true);
        return Ok(false);
    }
    outln!("{heading}");
    report.print(false);
    Ok(true)
}

/// Start a writing command: take the project lock (held until the end of [`execute`]'s apply),
/// then roll back a transaction that an earlier opbuilder left unfinished. A dry run only
/// reports such a transaction, and goes on without the lock where it cannot open the directory.
pub fn begin(root: &Path, dry_run: bool) -> Result<()> {
    if let Err(e) = crate::lock::acquire(root) {
        if !(dry_run && crate::lock::is_open_error(&e)) {
            return Err(e);
        }
    }
    let list = |files: &[std::path::PathBuf]| {
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match journal::recover(root, dry_run)? {
        Recovery::Nothing => {}
        Recovery::RolledBack { pid, files } if dry_run => errln!(
            "note: an opbuilder (pid {pid}) was interrupted in this project; the next command that writes will roll its changes back first ({}). The plan below is computed from the files as they are now.",
            list(&files)
        ),
        Recovery::RolledBack { pid, files } => errln!(
            "note: rolled back a transaction that an interrupted opbuilder (pid {pid}) left unfinished; these files are as they were before it: {}",
            list(&files)
        ),
        Recovery::Finished { pid } if dry_run => errln!(
            "note: an opbuilder (pid {pid}) finished its changes but not its cleanup; the next command that writes will remove its backup files"
        ),
        Recovery::Finished { pid } => errln!(
            "note: removed the backup files of a finished transaction (pid {pid}) that was interrupted during cleanup"
        ),
    }
    Ok(())
}
