//! The request of `edit`: go/v4's project-wide settings and the flags of the plugins `edit`
//! runs (helm, autoupdate).

use super::init::License;
use clap::Args;

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
    /// Plugins to run instead of PROJECT's layout, comma-separated, such as helm/v2-alpha or
    /// grafana/v1-alpha; a layout named must be the project's own
    #[arg(long, value_name = "KEYS")]
    pub plugins: Option<String>,
    /// Removed in 0.3.0 (as in Kubebuilder v4.16); kept for the error and for `alpha update` of
    /// projects made by 0.1.0 and 0.2.0
    #[arg(long, hide = true)]
    pub use_gh_models: bool,
    /// The flags of the command line as external plugins receive them (set after parsing).
    #[arg(skip)]
    pub plugin_args: Vec<String>,
}

impl EditArgs {
    /// Whether any of go/v4's own edit flags is given.
    pub fn go_flags(&self) -> bool {
        self.multigroup.is_some()
            || self.namespaced.is_some()
            || self.license.is_some()
            || self.license_file.is_some()
            || self.owner.is_some()
    }
}
