//! From the kustomize output to chart templates: each object of the manifests becomes a
//! template under its toggle (CRDs, RBAC, the manager, metrics, webhooks, cert-manager,
//! Prometheus, network policies), with the project's names and namespace templated.

use super::chart::{
    get, get_mut, helm_labels, render_scalar, s, template_strings, wrap, Chart, Emit, Names,
};
use super::kustomize::{kind, name, read, Manifests};
use super::manager::{template_manager, Ports};
use super::values::values;
use anyhow::Result;
use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;

pub fn convert(project: &str, manifests: &str) -> Result<Chart> {
    let Manifests {
        docs,
        deployment,
        prefix,
        ns,
    } = read(project, manifests)?;
    let dep_name = name(&deployment);
    let names = Names {
        chart: project,
        prefix: &prefix,
        ns: &ns,
    };
    let crd_groups: Vec<String> = docs
        .iter()
        .filter(|d| kind(d) == "CustomResourceDefinition")
        .filter_map(|d| get(d, &["spec", "group"]).map(|g| s(g).to_string()))
        .collect();
    let mut chart = Chart {
        namespace: ns.clone(),

        ..Default::default()
    };
    let mut groups: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut has_crds = false;
    let mut has_cert_manager = false;
    let mut ports = Ports::default();
    let mut service_webhook_port = None;
    let mut seen = std::collections::HashSet::new();
    let mut extracted = Value::Null;
    for doc in &docs {
        let k = kind(doc);
        let n = name(doc);
        let api = s(get(doc, &["apiVersion"]).unwrap_or(&Value::Null)).to_string();
        let dns = s(get(doc, &["metadata", "namespace"]).unwrap_or(&Value::Null)).to_string();
        if !seen.insert(format!("{api}|{k}|{dns}|{n}")) {
            continue;
        }
        let group_of_api = api.split_once('/').map(|(g, _)| g).unwrap_or("");
        let short = n
            .strip_prefix(&format!("{prefix}-"))
            .unwrap_or(&n)
            .to_string();
        let file = if matches!(k.as_str(), "Role" | "RoleBinding") && !dns.is_empty() && dns != ns {
            format!("{short}-{dns}.yaml")
        } else {
            format!("{short}.yaml")
        };
        let (group, cond): (&str, Option<String>) = match k.as_str() {
            "Namespace" => continue,
            "CustomResourceDefinition" => {
                has_crds = true;
                if converts_by_webhook(doc) {
                    chart.has_webhooks = true;
                }
                ("crd", Some(".Values.crd.enabled".into()))
            }
            "ServiceAccount" => ("rbac", Some(".Values.serviceAccount.enabled".into())),
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
                let helper = [
                    "-admin-role",
                    "-editor-role",
                    "-viewer-role",
                    "-admin-rolebinding",
                    "-editor-rolebinding",
                    "-viewer-rolebinding",
                ]
                .iter()
                .any(|s| n.ends_with(s));
                let metrics = [
                    "-metrics-auth-role",
                    "-metrics-auth-rolebinding",
                    "-metrics-reader",
                ]
                .iter()
                .any(|s| n.ends_with(s));
                (
                    "rbac",
                    if helper {
                        Some(".Values.rbac.helpers.enabled".into())
                    } else if metrics {
                        Some("and .Values.metrics.enabled .Values.metrics.secure".into())
                    } else {
                        None
                    },
                )
            }
            "Deployment" if n == dep_name => ("manager", Some(".Values.manager.enabled".into())),
            "Service" if n.ends_with("metrics-service") => {
                if let Some(p) = get(doc, &["spec", "ports"])
                    .and_then(Value::as_sequence)
                    .and_then(|p| p.first())
                    .and_then(|p| get(p, &["port"]))
                    .and_then(Value::as_u64)
                {
                    ports.metrics = p;
                }
                chart.metrics_service_suffix = short.clone();
                chart.has_metrics = true;
                ("metrics", Some(".Values.metrics.enabled".into()))
            }
            "Service" if n.ends_with("webhook-service") => {
                ("webhook", Some(".Values.webhook.enabled".into()))
            }
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
                chart.has_webhooks = true;
                ("webhook", Some(".Values.webhook.enabled".into()))
            }
            "Certificate" | "Issuer" if group_of_api == "cert-manager.io" => {
                has_cert_manager = true;
                let cond = if k == "Certificate"
                    && (n.ends_with("-metrics-certs") || n.ends_with("-metrics-cert"))
                {
                    // Served over HTTPS only with metrics.secure.
                    "and .Values.certManager.enabled .Values.metrics.enabled .Values.metrics.secure"
                } else if k == "Certificate" && n == format!("{prefix}-serving-cert") {
                    // The webhook server's certificate.
                    "and .Values.certManager.enabled .Values.webhook.enabled"
                } else {
                    ".Values.certManager.enabled"
                };
                ("cert-manager", Some(cond.into()))
            }
            "ServiceMonitor" => {
                chart.has_prometheus = true;
                ("prometheus", Some(".Values.prometheus.enabled".into()))
            }
            "NetworkPolicy" => {
                chart.has_network_policy = true;
                let cond = match scaffolded_policy(&n, &prefix) {
                    Some(Policy::Webhook) => {
                        "and .Values.networkPolicy.enabled .Values.webhook.enabled"
                    }
                    Some(Policy::Metrics) => {
                        "and .Values.networkPolicy.enabled .Values.metrics.enabled"
                    }
                    None => ".Values.networkPolicy.enabled",
                };
                ("network-policy", Some(cond.into()))
            }
            _ if crd_groups.iter().any(|g| g == group_of_api) => {
                chart.warnings.push(format!(
                    "{k} {n} is an instance of the project's own API: charts install no custom resources, so it was left out"
                ));
                continue;
            }
            _ => ("extras", None),
        };
        let mut e = Emit::default();
        let mut obj = doc.clone();
        if group == "manager" {
            extracted = template_manager(&mut obj, &names, &mut e, &mut chart, &mut ports)?;
        } else {
            template_strings(&mut obj, "", &names, &mut e);
        }
        helm_labels(&mut obj, &mut e);
        match k.as_str() {
            "CustomResourceDefinition" => {
                let meta = obj
                    .get_mut("metadata")
                    .and_then(Value::as_mapping_mut)
                    .unwrap();
                let ann = meta
                    .entry("annotations".into())
                    .or_insert_with(|| Value::Mapping(Mapping::new()));
                if let Some(a) = ann.as_mapping_mut() {
                    inject_ca_with_cert_manager(a, &mut e);
                    a.insert(
                        e.block_key(vec![
                            "{{- if .Values.crd.keep }}".into(),
                            "helm.sh/resource-policy: keep".into(),
                            "{{- end }}".into(),
                        ]),
                        Value::Null,
                    );
                }
            }
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
                if let Some(a) =
                    get_mut(&mut obj, &["metadata", "annotations"]).and_then(Value::as_mapping_mut)
                {
                    inject_ca_with_cert_manager(a, &mut e);
                }
            }
            "Service" if group == "webhook" => {
                let mut p = ports.webhook;
                port_from_values(&mut obj, &mut e, ".Values.webhook.port", &mut p);
                service_webhook_port = Some(p);
            }
            "Service" if group == "metrics" => {
                port_from_values(&mut obj, &mut e, ".Values.metrics.port", &mut ports.metrics);
                // The port's name says the scheme, which metrics.secure picks.
                if let Some(p) = get_mut(&mut obj, &["spec", "ports"])
                    .and_then(Value::as_sequence_mut)
                    .and_then(|ps| ps.first_mut())
                    .and_then(Value::as_mapping_mut)
                {
                    if p.get("name").map(s) == Some("https") {
                        p.insert("name".into(), e.inline(SECURE_SCHEME));
                    }
                }
            }
            "NetworkPolicy" => match scaffolded_policy(&n, &prefix) {
                Some(Policy::Webhook) => ingress_port(&mut obj, &mut e, ".Values.webhook.port"),
                Some(Policy::Metrics) => ingress_port(&mut obj, &mut e, ".Values.metrics.port"),
                None => {}
            },
            "ServiceMonitor" => {
                follow_metrics_secure(&mut obj, &mut e)?;
                let meta = obj
                    .get_mut("metadata")
                    .and_then(Value::as_mapping_mut)
                    .unwrap();
                merge_from_values(meta, &mut e, "labels", ".Values.prometheus.labels");
                merge_from_values(
                    meta,
                    &mut e,
                    "annotations",
                    ".Values.prometheus.annotations",
                );
            }
            "ClusterRole" | "ClusterRoleBinding"
                if ![
                    "-metrics-auth-role",
                    "-metrics-auth-rolebinding",
                    "-metrics-reader",
                ]
                .iter()
                .any(|x| n.ends_with(x)) =>
            {
                namespaced_switch(&mut obj, &mut e, &k);
                if k == "ClusterRoleBinding" {
                    bind_service_account(&mut obj, &mut e, project);
                }
            }
            "RoleBinding" | "ClusterRoleBinding" => bind_service_account(&mut obj, &mut e, project),
            "Certificate" => {
                // config/default leaves the metrics certificate's DNS names as placeholders until
                // its replacements are uncommented; the chart names the metrics service.
                let svc = names.resource(&chart_metrics_suffix(&docs, &prefix));
                if let Some(dns) =
                    get_mut(&mut obj, &["spec", "dnsNames"]).and_then(Value::as_sequence_mut)
                {
                    if short.contains("metrics") {
                        for d in dns.iter_mut() {
                            if let Some(rest) = s(d).strip_prefix("SERVICE_NAME.SERVICE_NAMESPACE.")
                            {
                                let rest = rest.to_string();
                                *d = e.inline(format!("{svc}.{{{{ .Release.Namespace }}}}.{rest}"));
                            }
                        }
                    }
                }
            }
            "ServiceAccount" => {
                let sa_name = format!("{{{{ include \"{project}.serviceAccountName\" . }}}}");
                let meta = obj
                    .get_mut("metadata")
                    .and_then(Value::as_mapping_mut)
                    .unwrap();
                meta.insert("name".into(), e.inline(sa_name));
                merge_from_values(meta, &mut e, "labels", ".Values.serviceAccount.labels");
                merge_from_values(
                    meta,
                    &mut e,
                    "annotations",
                    ".Values.serviceAccount.annotations",
                );
            }
            _ => {}
        }
        let body = e.render(&obj)?;
        let mut body = match &cond {
            Some(c) => wrap(c, body),
            None => body,
        };
        if k == "CustomResourceDefinition" && converts_by_webhook(doc) {
            // The API server converts this CRD's versions through the webhook service: installing
            // the CRD without the webhook would leave its objects unreadable, so refuse that.
            body = format!(
                "{{{{- if and .Values.crd.enabled (not .Values.webhook.enabled) }}}}\n\
                 {{{{- fail \"webhook.enabled must be true while crd.enabled installs {n}, which converts through the webhook\" }}}}\n\
                 {{{{- end }}}}\n{body}"
            );
        }
        let files = groups.entry(group.to_string()).or_default();
        files.push((
            if group == "manager" {
                "manager.yaml".into()
            } else {
                file
            },
            body,
        ));
    }
    for (group, files) in groups {
        for (file, body) in files {
            let path = format!("{group}/{file}");
            match chart.templates.get_mut(&path) {
                Some(prev) => {
                    prev.push_str("---\n");
                    prev.push_str(&body);
                }
                None => {
                    chart.templates.insert(path, body);
                }
            }
        }
    }
    if chart.metrics_service_suffix.is_empty() {
        chart.metrics_service_suffix = "controller-manager-metrics-service".into();
    }
    if !ports.webhook_in_pod {
        if let Some(p) = service_webhook_port {
            ports.webhook = p;
        }
    }
    chart.health_port = ports.health;
    chart.values = values(
        &chart,
        &deployment,
        &extracted,
        has_crds,
        has_cert_manager,
        ports,
    );
    Ok(chart)
}

const SECURE_SCHEME: &str = "{{ if .Values.metrics.secure }}https{{ else }}http{{ end }}";

/// A ServiceMonitor's endpoints scrape over HTTPS (with the token and TLS settings the manifests
/// give) while metrics.secure holds, else over plain HTTP.
fn follow_metrics_secure(obj: &mut Value, e: &mut Emit) -> Result<()> {
    let Some(endpoints) = get_mut(obj, &["spec", "endpoints"]).and_then(Value::as_sequence_mut)
    else {
        return Ok(());
    };
    for ep in endpoints.iter_mut() {
        let Some(m) = ep.as_mapping_mut() else {
            continue;
        };
        // The conditional entries go last: a block cannot open a sequence item.
        let old = std::mem::take(m);
        let mut secure_only = vec![];
        for (k, v) in old {
            match k.as_str() {
                Some("port" | "scheme") if s(&v) == "https" => {
                    m.insert(k, e.inline(SECURE_SCHEME));
                }
                Some("bearerTokenFile" | "tlsConfig") => secure_only.push((k, v)),
                _ => {
                    m.insert(k, v);
                }
            }
        }
        for (k, v) in secure_only {
            let mut one = Mapping::new();
            one.insert(k, v);
            let text = serde_yaml::to_string(&Value::Mapping(one))?;
            let mut lines = vec!["{{- if .Values.metrics.secure }}".to_string()];
            lines.extend(text.lines().map(String::from));
            lines.push("{{- end }}".into());
            m.insert(e.block_key(lines), Value::Null);
        }
    }
    Ok(())
}

/// A CRD whose versions convert through the webhook.
fn converts_by_webhook(crd: &Value) -> bool {
    get(crd, &["spec", "conversion", "strategy"]).map(s) == Some("Webhook")
}

/// The network policies config/network-policy scaffolds (with or without the name prefix).
enum Policy {
    Metrics,
    Webhook,
}

fn scaffolded_policy(name: &str, prefix: &str) -> Option<Policy> {
    let bare = name
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .filter(|_| !prefix.is_empty());
    [Some(name), bare]
        .into_iter()
        .flatten()
        .find_map(|n| match n {
            "allow-metrics-traffic" => Some(Policy::Metrics),
            "allow-webhook-traffic" => Some(Policy::Webhook),
            _ => None,
        })
}

/// The numeric ports a policy's ingress rules open, from values (egress rules are left alone).
fn ingress_port(obj: &mut Value, e: &mut Emit, expr: &str) {
    let Some(rules) = get_mut(obj, &["spec", "ingress"]).and_then(Value::as_sequence_mut) else {
        return;
    };
    for rule in rules {
        if let Some(ps) = rule.get_mut("ports").and_then(Value::as_sequence_mut) {
            for p in ps.iter_mut().filter_map(Value::as_mapping_mut) {
                if p.get("port").is_some_and(Value::is_u64) {
                    p.insert("port".into(), e.inline(format!("{{{{ {expr} }}}}")));
                }
            }
        }
    }
}

/// Entries of the map `values` under metadata's `key` (labels or annotations): added to the
/// entries the manifests give, less the keys those already have (a key twice is invalid YAML);
/// when metadata has no such map, one that appears only when the values hold entries.
fn merge_from_values(meta: &mut Mapping, e: &mut Emit, key: &str, values: &str) {
    match meta.get_mut(key).and_then(Value::as_mapping_mut) {
        Some(m) if !m.is_empty() => {
            let omit: Vec<String> = m
                .keys()
                .filter_map(Value::as_str)
                .filter(|k| !k.starts_with("obtpl"))
                .map(|k| format!("{k:?}"))
                .collect();
            let block = e.block_key(vec![
                format!("{{{{- with {values} }}}}"),
                format!("{{{{- with omit . {} }}}}", omit.join(" ")),
                "{{- toYaml . | nindent {I+0} }}".into(),
                "{{- end }}".into(),
                "{{- end }}".into(),
            ]);
            m.insert(block, Value::Null);
        }
        _ => {
            meta.remove(key);
            let block = e.block_key(vec![
                format!("{{{{- with {values} }}}}"),
                format!("{key}: {{{{- toYaml . | nindent {{I+2}} }}}}"),
                "{{- end }}".into(),
            ]);
            meta.insert(block, Value::Null);
        }
    }
}

/// cert-manager's CA injection annotation, kept only when the chart installs cert-manager's
/// objects (`certManager.enabled`).
fn inject_ca_with_cert_manager(annotations: &mut Mapping, e: &mut Emit) {
    if let Some(v) = annotations.remove("cert-manager.io/inject-ca-from") {
        let line = format!("cert-manager.io/inject-ca-from: {}", render_scalar(e, &v));
        annotations.insert(
            e.block_key(vec![
                "{{- if .Values.certManager.enabled }}".into(),
                line,
                "{{- end }}".into(),
            ]),
            Value::Null,
        );
    }
}

/// `rbac.namespaced` turns a ClusterRole (binding) into a Role (binding) in the release namespace.
fn namespaced_switch(obj: &mut Value, e: &mut Emit, kind: &str) {
    let ns_kind = kind.strip_prefix("Cluster").unwrap_or(kind).to_string();
    let switch = |e: &mut Emit, ns: &str, cluster: &str| {
        e.block_key(vec![
            "{{- if .Values.rbac.namespaced }}".into(),
            format!("kind: {ns}"),
            "{{- else }}".into(),
            format!("kind: {cluster}"),
            "{{- end }}".into(),
        ])
    };
    let top = switch(e, &ns_kind, kind);
    replace_key(obj, "kind", top);
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_mapping_mut) {
        meta.insert(
            e.block_key(vec![
                "{{- if .Values.rbac.namespaced }}".into(),
                "namespace: {{ .Release.Namespace }}".into(),
                "{{- end }}".into(),
            ]),
            Value::Null,
        );
    }
    if kind == "ClusterRoleBinding" {
        if let Some(rr) = obj.get_mut("roleRef") {
            if get(rr, &["kind"]).map(s) == Some("ClusterRole") {
                let k = switch(e, "Role", "ClusterRole");
                replace_key(rr, "kind", k);
            }
        }
    }
}

/// Replace the entry `key` of a mapping by a block token, in place.
fn replace_key(v: &mut Value, key: &str, token: Value) {
    if let Some(m) = v.as_mapping_mut() {
        let old = std::mem::take(m);
        for (k, val) in old {
            if k.as_str() == Some(key) {
                m.insert(token.clone(), Value::Null);
            } else {
                m.insert(k, val);
            }
        }
    }
}

/// The manager's ServiceAccount in a binding's subjects, by the chart's helper.
fn bind_service_account(obj: &mut Value, e: &mut Emit, project: &str) {
    if let Some(subjects) = get_mut(obj, &["subjects"]).and_then(Value::as_sequence_mut) {
        for sub in subjects {
            if get(sub, &["kind"]).map(s) == Some("ServiceAccount")
                && get(sub, &["name"])
                    .map(s)
                    .is_some_and(|n| n.starts_with("obtplinline"))
            {
                sub.as_mapping_mut().unwrap().insert(
                    "name".into(),
                    e.inline(format!(
                        "{{{{ include \"{project}.serviceAccountName\" . }}}}"
                    )),
                );
            }
        }
    }
}

/// The metrics service's name without the prefix.
fn chart_metrics_suffix(docs: &[Value], prefix: &str) -> String {
    docs.iter()
        .filter(|d| get(d, &["kind"]).map(s) == Some("Service"))
        .filter_map(|d| get(d, &["metadata", "name"]).map(s))
        .find(|n| n.ends_with("metrics-service"))
        .and_then(|n| n.strip_prefix(prefix)?.strip_prefix('-').map(String::from))
        .unwrap_or_else(|| "controller-manager-metrics-service".into())
}

/// The service's first port: its target (the container's port) comes from values; so does its
/// own port when it equals the target (the metrics service), not otherwise (the webhook service
/// listens on 443).
fn port_from_values(obj: &mut Value, e: &mut Emit, expr: &str, port: &mut u64) {
    if let Some(ports) = get_mut(obj, &["spec", "ports"]).and_then(Value::as_sequence_mut) {
        if let Some(p) = ports.first_mut().and_then(Value::as_mapping_mut) {
            let own = p.get("port").and_then(Value::as_u64);
            let Some(target) = p.get("targetPort").and_then(Value::as_u64).or(own) else {
                return;
            };
            *port = target;
            p.insert("targetPort".into(), e.inline(format!("{{{{ {expr} }}}}")));
            if own == Some(target) {
                p.insert("port".into(), e.inline(format!("{{{{ {expr} }}}}")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_converts_with_each_part_behind_its_toggle() {
        let chart = convert(
            "x",
            include_str!("../../../e2e/fixtures/helm/install-webhooks.yaml"),
        )
        .unwrap();
        let t = |p: &str| {
            chart
                .templates
                .get(p)
                .unwrap_or_else(|| panic!("no {p}: {:?}", chart.templates.keys()))
        };
        assert!(
            t("crd/frigates.ship.example.com.yaml").starts_with("{{- if .Values.crd.enabled }}")
        );
        assert!(t("crd/frigates.ship.example.com.yaml").contains("helm.sh/resource-policy: keep"));
        assert!(t("manager/manager.yaml").starts_with("{{- if .Values.manager.enabled }}"));
        assert!(t("manager/manager.yaml").contains("replicas: {{ .Values.manager.replicas }}"));
        assert!(
            t("rbac/frigate-admin-role.yaml").starts_with("{{- if .Values.rbac.helpers.enabled }}")
        );
        assert!(t("rbac/manager-role.yaml").contains("{{- if .Values.rbac.namespaced }}"));
        assert!(t("rbac/controller-manager.yaml")
            .starts_with("{{- if .Values.serviceAccount.enabled }}"));
        assert!(
            t("webhook/webhook-service.yaml").contains("targetPort: {{ .Values.webhook.port }}")
        );
        assert!(t("cert-manager/serving-cert.yaml")
            .starts_with("{{- if and .Values.certManager.enabled .Values.webhook.enabled }}"));
        assert!(t("metrics/controller-manager-metrics-service.yaml")
            .contains("port: {{ .Values.metrics.port }}"));
        assert!(
            !chart.templates.keys().any(|k| k.contains("namespace")),
            "the Namespace is left out"
        );
        assert!(chart.has_webhooks && chart.has_metrics && !chart.has_prometheus);
        let keys: Vec<&str> = chart.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "",
                "manager",
                "rbac",
                "serviceAccount",
                "crd",
                "metrics",
                "certManager",
                "webhook",
                "prometheus",
                "networkPolicy"
            ]
        );
        let values: Value = serde_yaml::from_str(
            &chart
                .values
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<String>(),
        )
        .unwrap();
        assert_eq!(
            values["manager"]["args"],
            serde_yaml::from_str::<Value>("[--leader-elect]").unwrap()
        );
        assert_eq!(values["certManager"]["enabled"], Value::from(true));
        assert_eq!(values["webhook"]["port"], Value::from(9443));
        assert_eq!(values["manager"]["healthProbe"]["port"], Value::from(8081));
        assert_eq!(chart.namespace, "x-system");
    }

    const WEBHOOKS: &str = include_str!("../../../e2e/fixtures/helm/install-webhooks.yaml");

    /// The fixture (Kubebuilder v4.16's config/default, whose webhook patch passes
    /// --webhook-port) with other ports and plain-HTTP metrics.
    fn v416_manifests() -> String {
        let m = WEBHOOKS
            .replace(
                "        - --webhook-port=9443\n",
                "        - --webhook-port=7443\n        - --metrics-secure=false\n",
            )
            .replace(
                "--health-probe-bind-address=:8081",
                "--health-probe-bind-address=:8082",
            )
            .replace("port: 8081\n", "port: 8082\n")
            .replace("containerPort: 8081\n", "containerPort: 8082\n");
        assert_ne!(m, WEBHOOKS);
        m
    }

    fn values_of(chart: &Chart) -> Value {
        serde_yaml::from_str(
            &chart
                .values
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<String>(),
        )
        .unwrap()
    }

    #[test]
    fn the_health_probe_and_webhook_ports_come_from_values() {
        let chart = convert("x", &v416_manifests()).unwrap();
        let values = values_of(&chart);
        assert_eq!(values["manager"]["healthProbe"]["port"], Value::from(8082));
        assert_eq!(
            values["webhook"]["port"],
            Value::from(7443),
            "--webhook-port wins"
        );
        assert_eq!(values["webhook"]["enabled"], Value::from(true));
        assert_eq!(values["metrics"]["secure"], Value::from(false));
        assert_eq!(
            values["manager"]["args"],
            serde_yaml::from_str::<Value>("[--leader-elect]").unwrap(),
            "the chart sets --webhook-port and --metrics-secure from other values"
        );
        let m = &chart.templates["manager/manager.yaml"];
        let probe = "{{ .Values.manager.healthProbe.port }}";
        assert!(
            m.contains(&format!("- --health-probe-bind-address=:{probe}\n")),
            "{m}"
        );
        assert!(m.contains(&format!("- containerPort: {probe}\n")), "{m}");
        assert_eq!(
            m.matches(&format!(" port: {probe}\n")).count(),
            2,
            "the probes: {m}"
        );
        assert!(!m.contains("8082"), "{m}");
        assert!(
            m.contains(
                "        {{- if .Values.webhook.enabled }}\n        - --webhook-port={{ .Values.webhook.port }}\n        {{- else }}\n"
            ),
            "{m}"
        );
        assert!(m.contains("        - --webhook-port=-1\n"), "{m}");
        assert!(m.contains("        - {{ tpl . $ }}\n"), "{m}");
        assert!(
            m.contains("        {{- if .Values.webhook.enabled }}\n        - containerPort: {{ .Values.webhook.port }}\n"),
            "{m}"
        );
        assert!(m.contains(
            "{{- if and .Values.certManager.enabled .Values.webhook.enabled }}\n        - --webhook-cert-path="
        ));
        assert!(m.contains("{{ .Values.manager.image.repository | default \"controller\" }}"));
        let order: Vec<usize> = [
            "--metrics-bind-address",
            "--health-probe-bind-address",
            "--webhook-port",
            "range .Values.manager.args",
            "--webhook-cert-path",
        ]
        .iter()
        .map(|a| m.find(a).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }

    /// A manager that keeps its own webhook certificate (certs.opbuilder.io): the chart passes
    /// the Secret and the release's webhook Service while webhooks are on, and needs no
    /// cert-manager for them.
    #[test]
    fn a_manager_with_its_own_webhook_certificate_names_the_releases_service() {
        // Without cert-manager's Issuer and Certificates, as config/default renders then.
        let own = WEBHOOKS
            .split("\n---\n")
            .filter(|d| !d.contains("apiVersion: cert-manager.io/"))
            .collect::<Vec<_>>()
            .join("\n---\n")
            .replace(
                "        - --webhook-cert-path=/tmp/k8s-webhook-server/serving-certs\n",
                "        - --webhook-cert-secret=webhook-server-cert\n        - --webhook-service=x-webhook-service\n",
            );
        assert!(own.contains("--webhook-service") && !own.contains("kind: Certificate"));
        let chart = convert("x", &own).unwrap();
        assert!(chart.webhook_own_cert);
        let values = values_of(&chart);
        assert_eq!(
            values["manager"]["args"],
            serde_yaml::from_str::<Value>("[--leader-elect]").unwrap(),
            "the Service's name depends on the release: not a value"
        );
        assert_eq!(values["certManager"]["enabled"], Value::from(false));
        let m = &chart.templates["manager/manager.yaml"];
        assert!(
            m.contains(concat!(
                "        {{- if .Values.webhook.enabled }}\n",
                "        - --webhook-cert-secret=webhook-server-cert\n",
                "        - --webhook-service={{ include \"x.resourceName\" (dict \"suffix\" \"webhook-service\" \"context\" $) }}\n",
                "        {{- end }}\n"
            )),
            "{m}"
        );
        assert!(m.find("range .Values.manager.args") < m.find("--webhook-cert-secret"));
        assert!(!m.contains("x-webhook-service"), "{m}");
    }

    #[test]
    fn without_webhooks_values_still_hold_a_disabled_webhook_section() {
        let chart = convert("x", include_str!("../../../e2e/fixtures/helm/install.yaml")).unwrap();
        assert!(!chart.has_webhooks);
        let values = values_of(&chart);
        assert_eq!(values["webhook"]["enabled"], Value::from(false));
        assert_eq!(values["webhook"]["port"], Value::from(9443));
        assert_eq!(values["prometheus"]["enabled"], Value::from(false));
        assert_eq!(values["manager"]["healthProbe"]["port"], Value::from(8081));
        assert_eq!(values["metrics"]["secure"], Value::from(true));
    }

    #[test]
    fn a_conversion_webhook_counts_as_webhooks_and_needs_them_on() {
        let crd = "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: boats.ship.example.com\nspec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service:\n          name: x-webhook-service\n          namespace: x-system\n          path: /convert\n      conversionReviewVersions:\n      - v1\n  group: ship.example.com\n  names:\n    kind: Boat\n    plural: boats\n  scope: Namespaced\n  versions: []\n";
        let text = format!(
            "{}{crd}",
            include_str!("../../../e2e/fixtures/helm/install.yaml")
        );
        let chart = convert("x", &text).unwrap();
        assert!(chart.has_webhooks);
        let t = &chart.templates["crd/boats.ship.example.com.yaml"];
        assert!(
            t.starts_with(
                "{{- if and .Values.crd.enabled (not .Values.webhook.enabled) }}\n{{- fail "
            ),
            "{t}"
        );
        assert!(
            t.contains("    strategy: Webhook\n"),
            "the conversion stays: {t}"
        );
        assert!(t.contains("name: {{ include \"x.resourceName\" (dict \"suffix\" \"webhook-service\" \"context\" $) }}"), "{t}");
        assert_eq!(values_of(&chart)["webhook"]["enabled"], Value::from(true));
    }

    #[test]
    fn the_manager_is_the_labelled_deployment_and_others_are_extras() {
        let other = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x-cache\n  namespace: x-system\nspec:\n  template:\n    spec:\n      containers:\n      - name: cache\n        image: redis:7\n";
        let base = include_str!("../../../e2e/fixtures/helm/install.yaml");
        // First in the stream, and unrecognisable as the manager: still an extra.
        let chart = convert("x", &format!("{other}---\n{base}")).unwrap();
        assert!(chart.templates["manager/manager.yaml"].contains("controller-manager"));
        let extra = &chart.templates["extras/cache.yaml"];
        assert!(extra.contains("image: redis:7"), "{extra}");
        // Two Deployments, neither with any sign of being the manager.
        let stranger = other
            .replace("x-cache", "x-queue")
            .replace("cache", "queue");
        let e = convert("x", &format!("{other}{stranger}")).unwrap_err();
        assert!(
            e.to_string().contains("control-plane: controller-manager"),
            "{e}"
        );
    }

    #[test]
    fn scaffolded_policies_and_monitors_follow_their_values() {
        let policy = |name: &str, port: u16| {
            format!("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  labels:\n    app.kubernetes.io/name: x\n  name: {name}\n  namespace: x-system\nspec:\n  ingress:\n  - ports:\n    - port: {port}\n      protocol: TCP\n  egress:\n  - ports:\n    - port: 53\n  podSelector:\n    matchLabels:\n      control-plane: controller-manager\n")
        };
        let monitor = "---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  labels:\n    control-plane: controller-manager\n  name: x-controller-manager-metrics-monitor\n  namespace: x-system\nspec:\n  endpoints:\n  - bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n    path: /metrics\n    port: https\n    scheme: https\n    tlsConfig:\n      insecureSkipVerify: true\n  selector:\n    matchLabels:\n      control-plane: controller-manager\n";
        let text = format!(
            "{WEBHOOKS}{}{}{}{monitor}",
            policy("x-allow-webhook-traffic", 9443),
            policy("x-allow-metrics-traffic", 8443),
            policy("x-allow-dns", 8443)
        );
        let chart = convert("x", &text).unwrap();
        let t = |p: &str| chart.templates[p].as_str();
        let webhook = t("network-policy/allow-webhook-traffic.yaml");
        assert!(webhook
            .starts_with("{{- if and .Values.networkPolicy.enabled .Values.webhook.enabled }}\n"));
        assert!(
            webhook.contains("- port: {{ .Values.webhook.port }}\n"),
            "{webhook}"
        );
        assert!(
            webhook.contains("- port: 53\n"),
            "egress is left alone: {webhook}"
        );
        let metrics = t("network-policy/allow-metrics-traffic.yaml");
        assert!(metrics
            .starts_with("{{- if and .Values.networkPolicy.enabled .Values.metrics.enabled }}\n"));
        assert!(
            metrics.contains("- port: {{ .Values.metrics.port }}\n"),
            "{metrics}"
        );
        let other = t("network-policy/allow-dns.yaml");
        assert!(other.starts_with("{{- if .Values.networkPolicy.enabled }}\n"));
        assert!(other.contains("- port: 8443\n"), "{other}");
        let m = t("prometheus/controller-manager-metrics-monitor.yaml");
        assert!(
            m.contains("{{- with .Values.prometheus.labels }}\n    {{- with omit . "),
            "{m}"
        );
        assert!(m.contains("\"control-plane\""), "{m}");
        assert!(
            m.contains("{{- with .Values.prometheus.annotations }}\n  annotations: "),
            "{m}"
        );
        assert!(
            m.contains("port: {{ if .Values.metrics.secure }}https{{ else }}http{{ end }}"),
            "{m}"
        );
        assert!(
            m.contains("{{- if .Values.metrics.secure }}\n    tlsConfig:\n"),
            "{m}"
        );
        assert!(chart.has_prometheus && chart.has_network_policy);
        assert_eq!(
            values_of(&chart)["prometheus"]["enabled"],
            Value::from(true)
        );
    }

    #[test]
    fn manifests_without_the_manager_are_refused() {
        let e = convert(
            "x",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x-system\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("Deployment"), "{e}");
    }
}
