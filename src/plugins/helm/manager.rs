//! The manager's Deployment as a chart template: image, replicas, arguments, probes, resources,
//! security contexts and the webhook and metrics certificates, each from values.yaml.

use super::chart::{
    add_helm_labels, cond_item, default_container, get, get_mut, s, template_strings, Chart, Emit,
    Names,
};
use anyhow::{anyhow, Result};
use serde_yaml::{Mapping, Value};

/// The arguments of the manager that values.yaml holds (`manager.args`): all but those the
/// chart sets from other values.
fn is_value_arg(a: &str) -> bool {
    !(a.starts_with("--metrics-bind-address")
        || a.starts_with("--health-probe-bind-address")
        || a.starts_with("--webhook-port")
        || a.starts_with("--webhook-cert-path")
        || a.starts_with("--metrics-cert-path")
        || a.starts_with("--metrics-secure")
        || a.starts_with("--webhook-cert-secret")
        || a.starts_with("--webhook-service"))
}

/// The ports the chart's values hold, as found in the manifests (the defaults otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ports {
    pub metrics: u64,
    pub webhook: u64,
    pub health: u64,
    /// The webhook port came from the manager's pod (its `--webhook-port` argument or its
    /// container port), which the webhook Service's target port does not override.
    pub webhook_in_pod: bool,
}

impl Default for Ports {
    fn default() -> Self {
        Ports {
            metrics: 8443,
            webhook: 9443,
            health: 8081,
            webhook_in_pod: false,
        }
    }
}

/// The port at the end of a `--flag=[HOST]:PORT` argument.
fn bind_port(arg: &str) -> Option<u64> {
    arg.rsplit_once(':')?.1.parse().ok()
}

/// `--flag=[HOST]:PORT` with the port replaced by `expr`; the host part is kept.
fn with_port(arg: &str, expr: &str) -> String {
    match arg.rsplit_once(':') {
        Some((head, port)) if port.parse::<u64>().is_ok() => format!("{head}:{expr}"),
        _ => arg.to_string(),
    }
}

/// The value of `--metrics-secure` (a bare flag means true); None for another flag or a value
/// that is not a boolean.
pub fn metrics_secure_arg(arg: &str) -> Option<bool> {
    if arg == "--metrics-secure" {
        return Some(true);
    }
    match arg.strip_prefix("--metrics-secure=")? {
        "true" | "1" | "t" | "T" | "TRUE" | "True" => Some(true),
        "false" | "0" | "f" | "F" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// The container the chart treats as the manager: the one the pod's
/// `kubectl.kubernetes.io/default-container` annotation names, else the one called `manager`,
/// else the first.
pub fn manager_container_index(deployment: &Value) -> usize {
    let wanted = default_container(deployment).unwrap_or("manager");
    get(deployment, &["spec", "template", "spec", "containers"])
        .and_then(Value::as_sequence)
        .and_then(|cs| {
            cs.iter()
                .position(|c| get(c, &["name"]).map(s) == Some(wanted))
        })
        .unwrap_or(0)
}

const HEALTH_PORT: &str = "{{ .Values.manager.healthProbe.port }}";

/// `key:` from values, or `{}` when the value is empty (as Kubebuilder's chart renders it).
fn always_block(e: &mut Emit, key: &str, val: &str) -> Value {
    e.block_key(vec![
        format!("{{{{- if {val} }}}}"),
        format!("{key}: {{{{- toYaml {val} | nindent {{I+2}} }}}}"),
        "{{- else }}".into(),
        format!("{key}: {{}}"),
        "{{- end }}".into(),
    ])
}

pub fn template_manager(
    obj: &mut Value,
    names: &Names,
    e: &mut Emit,
    chart: &mut Chart,
    ports: &mut Ports,
) -> Result<Value> {
    let project = names.chart.to_string();
    let manager_idx = manager_container_index(obj);
    template_strings(obj, "", names, e);
    let spec = get_mut(obj, &["spec"])
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| anyhow!("Deployment without spec"))?;
    if spec.contains_key("replicas") {
        spec.insert(
            "replicas".into(),
            e.inline("{{ .Values.manager.replicas }}"),
        );
    }
    let meta = get_mut(obj, &["metadata"])
        .and_then(Value::as_mapping_mut)
        .unwrap();
    if let Some(l) = meta.get_mut("labels").and_then(Value::as_mapping_mut) {
        l.insert(
            e.block_key(vec![
                "{{- with .Values.manager.labels }}".into(),
                "{{- toYaml . | nindent {I+0} }}".into(),
                "{{- end }}".into(),
            ]),
            Value::Null,
        );
    }
    meta.insert(
        e.block_key(vec![
            "{{- with .Values.manager.annotations }}".into(),
            "annotations: {{- toYaml . | nindent {I+2} }}".into(),
            "{{- end }}".into(),
        ]),
        Value::Null,
    );
    let tmeta = get_mut(obj, &["spec", "template", "metadata"]).and_then(Value::as_mapping_mut);
    if let Some(tm) = tmeta {
        for (key, what) in [("labels", "labels"), ("annotations", "annotations")] {
            let entry = tm
                .entry(key.into())
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            if let Some(m) = entry.as_mapping_mut() {
                if key == "labels" {
                    add_helm_labels(m, e);
                }
                m.insert(
                    e.block_key(vec![
                        format!("{{{{- with (.Values.manager.pod | default dict).{what} }}}}"),
                        "{{- toYaml . | nindent {I+0} }}".into(),
                        "{{- end }}".into(),
                    ]),
                    Value::Null,
                );
            }
        }
    }
    let pod = get_mut(obj, &["spec", "template", "spec"])
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| anyhow!("Deployment without a pod spec"))?;
    // Pod-level settings from values.
    let pod_sc = pod.remove("securityContext");
    let tgps = pod.remove("terminationGracePeriodSeconds");
    pod.insert(
        "serviceAccountName".into(),
        e.inline(format!(
            "{{{{ include \"{project}.serviceAccountName\" . }}}}"
        )),
    );
    pod.remove("securityContext");
    pod.insert(
        always_block(e, "securityContext", ".Values.manager.podSecurityContext"),
        Value::Null,
    );
    for (key, val) in [
        ("imagePullSecrets", ".Values.manager.imagePullSecrets"),
        ("nodeSelector", ".Values.manager.nodeSelector"),
        ("affinity", ".Values.manager.affinity"),
        ("tolerations", ".Values.manager.tolerations"),
        (
            "topologySpreadConstraints",
            ".Values.manager.topologySpreadConstraints",
        ),
    ] {
        pod.remove(key);
        pod.insert(
            e.block_key(vec![
                format!("{{{{- with {val} }}}}"),
                format!("{key}: {{{{- toYaml . | nindent {{I+2}} }}}}"),
                "{{- end }}".into(),
            ]),
            Value::Null,
        );
    }
    pod.insert(
        e.block_key(vec![
            "{{- with .Values.manager.priorityClassName }}".into(),
            "priorityClassName: {{ . }}".into(),
            "{{- end }}".into(),
        ]),
        Value::Null,
    );
    pod.insert(
        e.block_key(vec![
            "{{- if and (hasKey .Values.manager \"terminationGracePeriodSeconds\") (ne .Values.manager.terminationGracePeriodSeconds nil) }}".into(),
            "terminationGracePeriodSeconds: {{ .Values.manager.terminationGracePeriodSeconds }}"
                .into(),
            "{{- end }}".into(),
        ]),
        Value::Null,
    );
    // The webhook server's certificate matters only while the server runs; the metrics one only
    // while metrics are served over HTTPS.
    let cert_webhook = "and .Values.certManager.enabled .Values.webhook.enabled";
    let cert_metrics =
        "and .Values.certManager.enabled .Values.metrics.enabled .Values.metrics.secure";
    if let Some(vols) = pod.get_mut("volumes").and_then(Value::as_sequence_mut) {
        for v in vols.iter_mut() {
            let vn = get(v, &["name"]).map(s).unwrap_or("").to_string();
            if vn == "webhook-certs" {
                *v = cond_item(e, cert_webhook, v)?;
            } else if vn == "metrics-certs" {
                *v = cond_item(e, cert_metrics, v)?;
            }
        }
    }
    let mut values_args: Vec<String> = vec![];
    let mut env: Option<Value> = None;
    let mut image = String::new();
    let mut resources = None;
    let mut csc = None;
    let mut metrics_secure = None;
    let mut webhook_port_from_arg = false;
    if let Some(containers) = pod.get_mut("containers").and_then(Value::as_sequence_mut) {
        if let Some(c) = containers
            .get_mut(manager_idx)
            .and_then(Value::as_mapping_mut)
        {
            image = c.get("image").map(s).unwrap_or("").to_string();
            // An empty repository (say `--set manager.image.repository=null`) falls back to
            // kustomize's placeholder image name.
            c.insert(
                "image".into(),
                e.inline(
                    "\"{{ .Values.manager.image.repository | default \"controller\" }}{{- if not (contains \"@\" (.Values.manager.image.repository | default \"controller\")) }}:{{ .Values.manager.image.tag | default .Chart.AppVersion }}{{- end }}\"",
                ),
            );
            c.remove("imagePullPolicy");
            c.insert(
                e.block_key(vec![
                    "{{- with .Values.manager.image.pullPolicy }}".into(),
                    "imagePullPolicy: {{ . }}".into(),
                    "{{- end }}".into(),
                ]),
                Value::Null,
            );
            if let Some(args) = c.get_mut("args").and_then(Value::as_sequence_mut) {
                // Kubebuilder's order: metrics, health probe, webhook port, the values' args,
                // certificates.
                let (mut metrics, mut probe, mut webhook, mut rest) =
                    (vec![], vec![], vec![], vec![]);
                // The manager's own webhook certificate (certs.opbuilder.io): the Secret it
                // keeps, and the Service its certificate names, which has the release's name.
                let mut own_cert = vec![];
                for a in args.iter() {
                    let st = s(a).to_string();
                    if let Some(secure) = metrics_secure_arg(&st) {
                        metrics_secure = Some(secure);
                    }
                    if is_value_arg(&st) {
                        values_args.push(st);
                    } else if st.starts_with("--metrics-bind-address") {
                        if let Some(p) = bind_port(&st) {
                            ports.metrics = p;
                        }
                        metrics.push(e.block_key(vec![
                            "{{- if .Values.metrics.enabled }}".into(),
                            "- --metrics-bind-address=:{{ .Values.metrics.port }}".into(),
                            "{{- if not .Values.metrics.secure }}".into(),
                            "- --metrics-secure=false".into(),
                            "{{- end }}".into(),
                            "{{- else }}".into(),
                            "- --metrics-bind-address=0".into(),
                            "{{- end }}".into(),
                        ]));
                    } else if st.starts_with("--health-probe-bind-address") {
                        if let Some(p) = bind_port(&st) {
                            ports.health = p;
                        }
                        probe.push(e.inline(with_port(&st, HEALTH_PORT)));
                    } else if let Some(v) = st.strip_prefix("--webhook-port=") {
                        // The port the manager's webhook server binds: it wins over the
                        // container port and the Service's target. -1 (server off) stays.
                        let on = match v.parse::<i64>() {
                            Ok(p) if p > 0 => {
                                ports.webhook = p as u64;
                                ports.webhook_in_pod = true;
                                webhook_port_from_arg = true;
                                "- --webhook-port={{ .Values.webhook.port }}".to_string()
                            }
                            _ => format!("- {st}"),
                        };
                        webhook.push(e.block_key(vec![
                            "{{- if .Values.webhook.enabled }}".into(),
                            on,
                            "{{- else }}".into(),
                            "# the manager starts no webhook server with port -1".into(),
                            "- --webhook-port=-1".into(),
                            "{{- end }}".into(),
                        ]));
                    } else if let Some(v) = st.strip_prefix("--webhook-service=") {
                        own_cert.push(format!(
                            "- --webhook-service={}",
                            names.name(v).unwrap_or_else(|| v.to_string())
                        ));
                    } else if st.starts_with("--webhook-cert-secret") {
                        own_cert.push(format!("- {st}"));
                    } else if st.starts_with("--webhook-cert-path") {
                        rest.push(cond_item(e, cert_webhook, a)?);
                    } else if st.starts_with("--metrics-cert-path") {
                        rest.push(cond_item(e, cert_metrics, a)?);
                    }
                }
                let mut out = metrics;
                out.extend(probe);
                out.extend(webhook);
                // Each value is a template itself, so an argument may use the release's values
                // (`--leader-election-id={{ .Release.Name }}`).
                out.push(e.block_key(vec![
                    "{{- range .Values.manager.args }}".into(),
                    "- {{ tpl . $ }}".into(),
                    "{{- end }}".into(),
                ]));
                if !own_cert.is_empty() {
                    chart.webhook_own_cert = true;
                    let mut lines = vec!["{{- if .Values.webhook.enabled }}".to_string()];
                    lines.extend(own_cert);
                    lines.push("{{- end }}".into());
                    rest.push(e.block_key(lines));
                }
                out.extend(rest);
                *args = out;
            }
            if let Some(cports) = c.get_mut("ports").and_then(Value::as_sequence_mut) {
                for p in cports.iter_mut() {
                    let pname = get(p, &["name"]).map(s).unwrap_or("").to_string();
                    if pname == "webhook-server" || pname == "webhook" {
                        if let Some(n) = get(p, &["containerPort"]).and_then(Value::as_u64) {
                            if !webhook_port_from_arg {
                                ports.webhook = n;
                                ports.webhook_in_pod = true;
                            }
                        }
                        if pname == "webhook-server" {
                            p.as_mapping_mut().unwrap().insert(
                                "containerPort".into(),
                                e.inline("{{ .Values.webhook.port }}"),
                            );
                            // The manager listens there only while its webhook server runs.
                            *p = cond_item(e, ".Values.webhook.enabled", p)?;
                        }
                    } else if pname == "health" && get(p, &["containerPort"]).is_some() {
                        p.as_mapping_mut()
                            .unwrap()
                            .insert("containerPort".into(), e.inline(HEALTH_PORT));
                    }
                }
            }
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                if let Some(get_) = c
                    .get_mut(probe)
                    .and_then(|p| p.get_mut("httpGet"))
                    .and_then(Value::as_mapping_mut)
                {
                    let health_path =
                        matches!(get_.get("path").map(s), Some("/healthz") | Some("/readyz"));
                    if health_path && get_.get("port").is_some_and(Value::is_u64) {
                        get_.insert("port".into(), e.inline(HEALTH_PORT));
                    }
                }
            }
            if let Some(mounts) = c.get_mut("volumeMounts").and_then(Value::as_sequence_mut) {
                for m in mounts.iter_mut() {
                    let n = get(m, &["name"]).map(s).unwrap_or("").to_string();
                    if n == "webhook-certs" {
                        *m = cond_item(e, cert_webhook, m)?;
                    } else if n == "metrics-certs" {
                        *m = cond_item(e, cert_metrics, m)?;
                    }
                }
            }
            env = c.remove("env");
            if env.is_some() {
                c.insert(
                    e.block_key(vec![
                        "{{- if or .Values.manager.env .Values.manager.envOverrides }}".into(),
                        "env:".into(),
                        "{{- range .Values.manager.env }}".into(),
                        "{{- if not (hasKey ($.Values.manager.envOverrides | default dict) .name) }}".into(),
                        "- {{- toYaml . | nindent {I+2} }}".into(),
                        "{{- end }}".into(),
                        "{{- end }}".into(),
                        "{{- range $k, $v := .Values.manager.envOverrides }}".into(),
                        "- name: {{ $k }}".into(),
                        "  value: {{ $v | quote }}".into(),
                        "{{- end }}".into(),
                        "{{- end }}".into(),
                    ]),
                    Value::Null,
                );
            }
            resources = c.remove("resources");
            csc = c.remove("securityContext");
            for (key, val) in [
                ("resources", ".Values.manager.resources"),
                ("securityContext", ".Values.manager.securityContext"),
            ] {
                c.insert(always_block(e, key, val), Value::Null);
            }
        }
    }
    let (repo, tag) = match image.rsplit_once(':') {
        Some((r, t)) if !r.is_empty() && !t.contains('/') => (r.to_string(), t.to_string()),
        _ => (image.clone(), String::new()),
    };
    chart.app_version = if tag.is_empty() || tag == "latest" {
        "0.1.0".into()
    } else {
        tag.clone()
    };
    let mut extracted = Mapping::new();
    extracted.insert(
        "repository".into(),
        Value::String(if repo.is_empty() {
            "controller".into()
        } else {
            repo
        }),
    );
    extracted.insert("tag".into(), Value::String(tag));
    extracted.insert("args".into(), serde_yaml::to_value(&values_args)?);
    extracted.insert("env".into(), env.unwrap_or(Value::Null));
    extracted.insert("resources".into(), resources.unwrap_or(Value::Null));
    extracted.insert("securityContext".into(), csc.unwrap_or(Value::Null));
    extracted.insert("podSecurityContext".into(), pod_sc.unwrap_or(Value::Null));
    extracted.insert(
        "terminationGracePeriodSeconds".into(),
        tgps.unwrap_or(Value::Null),
    );
    extracted.insert(
        "metricsSecure".into(),
        metrics_secure.map(Value::Bool).unwrap_or(Value::Null),
    );
    Ok(Value::Mapping(extracted))
}
