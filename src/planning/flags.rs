//! Flag groups that several commands and plugins read: the resource flags of `create api` and
//! `create webhook`, the run flags of the `create` commands, and the deploy-image plugin's
//! flags with the options it records in PROJECT.

use clap::Args;
use serde::{Deserialize, Serialize};

/// The resource flags shared by `create api` and `create webhook`.
#[derive(Debug, Args)]
pub struct ResourceFlags {
    /// API group, without the domain, which is added (`core` for Pods and Services)
    /// [default: none: the API group is the domain itself]
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
    /// Plural resource name [default: computed as Kubebuilder does; must match PROJECT]
    #[arg(long, value_name = "PLURAL")]
    pub plural: Option<String>,
    /// Go import path of an external API package (a type from another module). In the Rust
    /// layout: the kind's CustomResourceDefinition (a YAML file, relative to the project's root)
    #[arg(long, value_name = "IMPORT_PATH")]
    pub external_api_path: Option<String>,
    /// Domain of the external API group
    #[arg(long, value_name = "DOMAIN")]
    pub external_api_domain: Option<String>,
    /// Go module (optionally @version) that provides --external-api-path. In the Rust layout:
    /// MODULE@VERSION in the Go module cache, or crate:NAME@VERSION in cargo's crate cache, that
    /// holds the CRD file --external-api-path names
    #[arg(long, value_name = "MODULE", value_parser = parse_module_version)]
    pub external_api_module: Option<String>,
}

/// `--external-api-module`: `MODULE[@VERSION]`. It becomes an argument of `go get`, so it
/// must never be mistaken for a flag (`-modfile=...`).
fn parse_module_version(v: &str) -> std::result::Result<String, String> {
    const EXAMPLE: &str =
        "\n  example of a valid value: --external-api-module github.com/cert-manager/cert-manager@v1.18.2";
    // A crate in cargo's crate cache (the Rust layout reads a CRD file from it).
    if let Some(c) = v.strip_prefix("crate:") {
        let (name, version) = c.split_once('@').unwrap_or((c, ""));
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
        let version_ok = version.starts_with(|ch: char| ch.is_ascii_digit())
            && version
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ".-+".contains(ch));
        if !name_ok || !version_ok {
            return Err(
                "a crate is crate:NAME@VERSION, its exact version as cargo's crate cache keeps it\n  \
                 example of a valid value: --external-api-module crate:gateway-api@0.19.0"
                    .to_string(),
            );
        }
        return Ok(v.to_string());
    }
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
    /// Where a marker that wires the new code in is missing (or its file, such as cmd/main.go),
    /// write everything else and print that wiring to add by hand, instead of refusing
    #[arg(long)]
    pub allow_missing_markers: bool,
    /// Plugins to run instead of PROJECT's layout, comma-separated (Kubebuilder's keys), such as
    /// deploy-image/v1-alpha; a layout named must be the project's own
    #[arg(long, value_name = "KEYS")]
    pub plugins: Option<String>,
    /// The flags of the command line as external plugins receive them (set after parsing).
    #[arg(skip)]
    pub plugin_args: Vec<String>,
}

/// The flags of `create api` that belong to this plugin.
#[derive(Debug, Default, Clone, Args)]
pub struct ImageFlags {
    /// The image the controller deploys, such as memcached:1.6.26-alpine3.19
    #[arg(long, value_name = "IMAGE", help_heading = "deploy-image/v1-alpha")]
    pub image: Option<String>,
    /// The container's command, comma-separated (memcached,--memory-limit=64,-v)
    #[arg(
        long,
        value_name = "CMD,ARG...",
        help_heading = "deploy-image/v1-alpha"
    )]
    pub image_container_command: Option<String>,
    /// The container's port; adds spec.containerPort to the API (1-65535)
    #[arg(long, value_name = "PORT", help_heading = "deploy-image/v1-alpha")]
    pub image_container_port: Option<String>,
    /// The user ID the container runs as (securityContext.runAsUser)
    #[arg(long, value_name = "UID", help_heading = "deploy-image/v1-alpha")]
    pub run_as_user: Option<String>,
}

impl ImageFlags {
    /// Names of the flags given, in the order they are declared.
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.image.is_some(), "--image"),
            (
                self.image_container_command.is_some(),
                "--image-container-command",
            ),
            (
                self.image_container_port.is_some(),
                "--image-container-port",
            ),
            (self.run_as_user.is_some(), "--run-as-user"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }
}

/// The options of one resource, as Kubebuilder records them in PROJECT (values kept as given).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub container_command: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub container_port: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_as_user: String,
}
