//! Every pinned version, read from `versions.toml` at the crate root (embedded at compile time).

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

#[cfg(test)]
const VERSIONS_TOML: &str = include_str!("../versions.toml");
/// The same pins as JSON, written by build.rs: serde_json reads them for a few thousand
/// instructions where the toml crate took about 0.3 M on every command (issue 50).
const VERSIONS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/versions.json"));

/// Versions written into generated projects.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all(serialize = "camelCase"))]
pub struct Scaffold {
    pub go_directive: String,
    pub go_image: String,
    pub controller_runtime: String,
    pub k8s_libs: String,
    pub controller_tools: String,
    pub kustomize: String,
    pub golangci_lint: String,
    /// sigs.k8s.io/logtools (the logcheck linter of `.custom-gcl.yml`). Absent from the
    /// versions.toml of releases before 0.4.0 (empty then: they write no `.custom-gcl.yml`).
    #[serde(default)]
    pub logtools: String,
    pub envtest_k8s: String,
    pub cert_manager: String,
    pub kubernetes_target: String,
    /// go.opentelemetry.io/otel, its sdk and OTLP exporter (telemetry.opbuilder.io/v1-alpha).
    /// Absent from the versions.toml of earlier releases.
    #[serde(default)]
    pub otel: String,
    /// go.opentelemetry.io/contrib's otelhttp (telemetry.opbuilder.io/v1-alpha).
    #[serde(default)]
    pub otel_contrib: String,
}

/// Versions used only by the end-to-end tests.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct E2e {
    pub kubernetes: String,
    pub etcd: String,
    /// Absent from the versions.toml of release 0.1.0.
    #[serde(default)]
    pub kubebuilder: String,
}

/// Crates and images written into projects of the Rust layout (rust.opbuilder.io/v1-beta).
/// Absent from the versions.toml of releases before 0.4.0 (empty strings then).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, rename_all(serialize = "camelCase"))]
pub struct Rust {
    /// The `rust:` image the Dockerfile builds in, and the rust-version of Cargo.toml.
    pub rust_image: String,
    pub rust_version: String,
    pub kube: String,
    pub k8s_openapi: String,
    /// k8s-openapi's Kubernetes feature (`v1_37`): the minor of the control plane.
    pub k8s_openapi_feature: String,
    /// kopium, the generator of the Rust types of another project's CRD (empty in the pins of
    /// earlier releases).
    pub kopium: String,
    pub schemars: String,
    pub serde: String,
    pub serde_json: String,
    pub serde_yaml: String,
    pub tokio: String,
    pub futures: String,
    pub tracing: String,
    pub tracing_subscriber: String,
    pub thiserror: String,
    pub anyhow: String,
    pub clap: String,
    pub prometheus_client: String,
    pub tower_test: String,
    pub http: String,
    pub rcgen: String,
    pub json_patch: String,
    pub hyper: String,
    pub hyper_util: String,
    pub http_body_util: String,
    pub rustls: String,
    pub tokio_rustls: String,
    /// The servers' listeners on IPv6 and IPv4 at once (IPV6_V6ONLY off: src/server.rs).
    pub socket2: String,
    /// The traces of telemetry.opbuilder.io/v1-alpha (empty in the pins of earlier releases).
    pub opentelemetry: String,
    pub opentelemetry_sdk: String,
    pub opentelemetry_otlp: String,
    pub tracing_opentelemetry: String,
    /// The exporter's client to an https:// collector (empty in the pins of earlier releases).
    pub opentelemetry_http: String,
    pub hyper_rustls: String,
    pub rustls_platform_verifier: String,
}

/// How `alpha update` builds a Kubebuilder release (src/lifecycle/kubebuilder.rs). Absent from
/// the versions.toml of the releases before 0.5.0.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct KubebuilderBuild {
    /// The oldest golang.org/x/tools the release is built with.
    pub x_tools: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Pins {
    pub scaffold: Scaffold,
    #[serde(default)]
    pub rust: Rust,
    #[serde(default)]
    pub kubebuilder: KubebuilderBuild,
    /// Read by the e2e scripts from versions.toml directly; parsed here so a typo fails the
    /// build's tests. Its `kubebuilder` (the parity oracle) is the release `opbuilder version`
    /// reports as the one it matches.
    pub e2e: E2e,
}

/// The parsed pins. `versions.toml` is part of the build, so a parse failure is a build bug;
/// a unit test guards it.
/// While an earlier release is active ([`crate::releases::with`]), its own pins.
pub fn pins() -> &'static Pins {
    static PINS: OnceLock<Pins> = OnceLock::new();
    if let Some(i) = crate::releases::active() {
        return release_pins(i);
    }
    PINS.get_or_init(|| serde_json::from_str(VERSIONS_JSON).expect("versions.toml is valid"))
}

/// The pins of the earlier release `i` of [`crate::releases::RELEASES`].
pub fn release_pins(i: usize) -> &'static Pins {
    static RELEASE_PINS: OnceLock<Vec<Pins>> = OnceLock::new();
    let all = RELEASE_PINS.get_or_init(|| {
        crate::releases::RELEASES
            .iter()
            .map(|r| toml::from_str(r.versions_toml).expect("a release's versions.toml is valid"))
            .collect()
    });
    &all[i]
}

/// opbuilder's own version, as recorded in PROJECT `cliVersion`.
/// `OPBUILDER_TEST_VERSION` overrides it so golden trees do not change with every release.
/// While an earlier release is active ([`crate::releases::with`]), that release's version.
pub fn cli_version() -> String {
    match crate::releases::active() {
        Some(i) => crate::releases::RELEASES[i].version.to_string(),
        None => crate::releases::current_version(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pins_build_rs_wrote_are_what_the_toml_crate_reads() {
        let from_toml: toml::Table = toml::from_str(VERSIONS_TOML).unwrap();
        let from_json: serde_json::Value = serde_json::from_str(VERSIONS_JSON).unwrap();
        assert_eq!(serde_json::to_value(&from_toml).unwrap(), from_json);
    }

    #[test]
    fn pins_parse_and_look_like_versions() {
        let p = pins();
        for v in [
            &p.scaffold.controller_runtime,
            &p.scaffold.k8s_libs,
            &p.scaffold.controller_tools,
            &p.scaffold.kustomize,
            &p.scaffold.golangci_lint,
            &p.scaffold.logtools,
            &p.scaffold.cert_manager,
            &p.e2e.etcd,
            &p.kubebuilder.x_tools,
        ] {
            assert!(v.starts_with('v') && v[1..].split('.').count() == 3, "{v}");
        }
        // One Kubernetes minor version throughout: the k8s.io libraries (v0.<minor>.<patch>),
        // envtest, the reported target and the e2e control plane.
        let minor = p.scaffold.k8s_libs.split('.').nth(1).unwrap().to_string();
        assert_eq!(p.scaffold.envtest_k8s, format!("1.{minor}"));
        assert!(p
            .scaffold
            .kubernetes_target
            .starts_with(&format!("1.{minor}.")));
        assert!(p.e2e.kubernetes.starts_with(&format!("1.{minor}.")));
        // k8s-openapi's feature names the same minor.
        assert_eq!(p.rust.k8s_openapi_feature, format!("v1_{minor}"));
        assert!(!p.rust.kube.is_empty() && !p.rust.rust_version.is_empty());
    }
}
