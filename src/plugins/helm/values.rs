//! The chart's values.yaml. It is written as text, not emitted by serde_yaml, because each
//! section carries comments that say what its settings do, in an order a reader can follow;
//! serde_yaml keeps neither comments nor a chosen layout. Existing values files are read with
//! serde_yaml (see the plugin's planning).

use super::chart::{get, s, Chart};
use super::manager::Ports;
use serde_yaml::Value;

/// `value` as YAML lines under a key, indented by `indent` spaces.
fn yaml_block(value: &Value, indent: usize) -> String {
    let text = serde_yaml::to_string(value).unwrap_or_default();
    text.lines()
        .map(|l| format!("{}{l}\n", " ".repeat(indent)))
        .collect()
}

pub fn values(
    chart: &Chart,
    deployment: &Value,
    x: &Value,
    has_crds: bool,
    has_cert_manager: bool,
    ports: Ports,
) -> Vec<(String, String)> {
    let xs = |k: &str| get(x, &[k]).cloned().unwrap_or(Value::Null);
    let replicas = get(deployment, &["spec", "replicas"])
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let mut out = vec![];
    out.push((
        String::new(),
        "## Overrides of the chart's name in resource names (the release name is kept).\n\
         # nameOverride: \"\"\n\
         ## Replaces the release-and-chart part of resource names.\n\
         # fullnameOverride: \"\"\n\n"
            .to_string(),
    ));
    let mut m = String::from("## The controller manager (Deployment)\nmanager:\n  ## false: install everything but the manager\n  enabled: true\n");
    m.push_str(&format!(
        "  replicas: {replicas}\n\n  image:\n    repository: {}\n",
        s(&xs("repository"))
    ));
    let tag = s(&xs("tag")).to_string();
    m.push_str("    ## Default: the chart's appVersion\n");
    if tag.is_empty() || tag == "latest" {
        m.push_str("    # tag: \"\"\n");
    } else {
        m.push_str(&format!("    tag: {tag:?}\n"));
    }
    m.push_str("    pullPolicy: IfNotPresent\n\n");
    let args = xs("args");
    m.push_str(ARGS_COMMENT);
    if args.as_sequence().is_some_and(|a| !a.is_empty()) {
        m.push_str("  args:\n");
        m.push_str(&yaml_block(&args, 4));
    } else {
        m.push_str("  args: []\n");
    }
    m.push('\n');
    m.push_str(&format!(
        "  ## The port of the manager's health endpoints (/healthz for liveness, /readyz for readiness)\n  \
         healthProbe:\n    port: {}\n\n",
        ports.health
    ));
    let env = xs("env");
    if !env.is_null() {
        m.push_str("  ## Environment of the manager container\n  env:\n");
        m.push_str(&yaml_block(&env, 4));
        m.push_str("  ## NAME: value pairs; they win over `env` entries of the same name\n  envOverrides: {}\n\n");
    }
    m.push_str("  ## Secrets to pull the image with\n  # imagePullSecrets:\n  #   - name: my-registry-key\n\n");
    for (key, what, example) in [
        (
            "podSecurityContext",
            "Pod security context",
            "  # podSecurityContext:\n  #   runAsNonRoot: true\n",
        ),
        (
            "securityContext",
            "Container security context",
            "  # securityContext:\n  #   allowPrivilegeEscalation: false\n",
        ),
        (
            "resources",
            "Resource requests and limits",
            "  # resources:\n  #   requests:\n  #     cpu: 10m\n",
        ),
    ] {
        let v = xs(key);
        m.push_str(&format!("  ## {what}\n"));
        if v.is_null() {
            m.push_str(example);
        } else {
            m.push_str(&format!("  {key}:\n"));
            m.push_str(&yaml_block(&v, 4));
        }
        m.push('\n');
    }
    m.push_str("  ## Scheduling of the manager pod\n  affinity: {}\n  nodeSelector: {}\n  tolerations: []\n");
    m.push_str("  # priorityClassName: \"\"\n  # topologySpreadConstraints: []\n\n");
    let tg = xs("terminationGracePeriodSeconds");
    m.push_str("  ## Seconds the manager gets to stop\n");
    match tg.as_u64() {
        Some(n) => m.push_str(&format!("  terminationGracePeriodSeconds: {n}\n\n")),
        None => m.push_str("  # terminationGracePeriodSeconds: 10\n\n"),
    }
    m.push_str("  ## Extra labels and annotations of the Deployment, and of its pods\n  # labels: {}\n  # annotations: {}\n  # pod:\n  #   labels: {}\n  #   annotations: {}\n\n");
    out.push(("manager".into(), m));
    out.push((
        "rbac".into(),
        "## RBAC\nrbac:\n  ## true: Role and RoleBinding in the release namespace instead of ClusterRole and\n  ## ClusterRoleBinding (the metrics roles stay cluster-wide)\n  namespaced: false\n  ## The admin, editor and viewer roles of each API (for granting users access)\n  helpers:\n    enabled: false\n\n".into(),
    ));
    out.push((
        "serviceAccount".into(),
        "## The manager's ServiceAccount\nserviceAccount:\n  ## false: use an existing account, which `name` must then give (\"default\" for the namespace's own)\n  enabled: true\n  # name: \"\"\n  # annotations: {}\n  # labels: {}\n\n".into(),
    ));
    if has_crds {
        out.push((
            "crd".into(),
            "## The CustomResourceDefinitions\ncrd:\n  ## Install them with the chart\n  enabled: true\n  ## Leave them (and every custom resource) in place on `helm uninstall`\n  keep: true\n\n".into(),
        ));
    }
    // As the manager's --metrics-secure argument says, else HTTPS.
    let secure = xs("metricsSecure").as_bool().unwrap_or(true);
    out.push((
        "metrics".into(),
        format!(
            "## The manager's /metrics endpoint\nmetrics:\n  enabled: {}\n  port: {}\n  ## HTTPS with authentication and authorization (true) or plain HTTP (false)\n  secure: {secure}\n\n",
            chart.has_metrics, ports.metrics
        ),
    ));
    out.push((
        "certManager".into(),
        format!(
            "## Certificates from cert-manager (must be installed in the cluster) for webhooks and metrics\ncertManager:\n  enabled: {}\n\n",
            (chart.has_webhooks && !chart.webhook_own_cert) || has_cert_manager
        ),
    ));
    // Always there: the manager's template reads webhook.enabled even before the first webhook.
    out.push((
        "webhook".into(),
        format!(
            "## The webhook server. false leaves out its Service, configurations and certificate and,\n## when the manager takes --webhook-port, starts the manager without it (port -1)\nwebhook:\n  enabled: {}\n  port: {}\n\n",
            chart.has_webhooks, ports.webhook
        ),
    ));
    out.push((
        "prometheus".into(),
        format!(
            "## A ServiceMonitor for the metrics (needs the Prometheus Operator)\nprometheus:\n  enabled: {}\n  \
             ## Extra labels and annotations of the ServiceMonitor\n  # labels: {{}}\n  # annotations: {{}}\n\n",
            chart.has_prometheus
        ),
    ));
    out.push((
        "networkPolicy".into(),
        format!(
            "## NetworkPolicies that limit who may reach the metrics and webhook ports\nnetworkPolicy:\n  enabled: {}\n",
            chart.has_network_policy
        ),
    ));
    out
}

/// The comment above `manager.args` in values.yaml.
const ARGS_COMMENT: &str = "  ## Manager arguments (metrics, health probe and certificate flags come from the sections below)\n";

/// In a project of the Rust layout, the comment above `manager.args` also names the flags the
/// Rust manager takes (src/main.rs) beyond those the chart sets from other values.
pub fn name_rust_flags(values: &mut [(String, String)]) {
    if let Some((_, text)) = values.iter_mut().find(|(k, _)| k == "manager") {
        *text = text.replacen(
            ARGS_COMMENT,
            "  ## Manager arguments (metrics, health probe and certificate flags come from the sections below).\n  \
             ## The Rust manager (src/main.rs) also takes --leader-elect[=true|false],\n  \
             ## --leader-election-namespace=NAMESPACE, --zap-encoder=console|json, --zap-log-level=LEVEL\n  \
             ## (debug, info, error, a verbosity or a RUST_LOG directive such as info,kube=debug),\n  \
             ## --max-concurrent-reconciles=N (the reconciles each controller runs at once),\n  \
             ## --metrics-cert-name, --metrics-cert-key, --webhook-cert-name and --webhook-cert-key.\n",
            1,
        );
    }
}
