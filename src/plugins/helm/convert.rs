//! From the kustomize output to chart templates: each object of the manifests becomes a
//! template under its toggle (CRDs, RBAC, the manager, metrics, webhooks, cert-manager,
//! Prometheus, network policies), with the project's names and namespace templated.

use super::chart::{
    get, get_mut, helm_labels, render_scalar, s, template_strings, wrap, Chart, Emit, Names,
};
use super::kustomize::{kind, name, read, Manifests};
use super::manager::template_manager;
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
    let mut metrics_port = 8443u64;
    let mut webhook_port = 9443u64;
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
                    metrics_port = p;
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
                let cond = if short.contains("metrics") {
                    "and .Values.certManager.enabled .Values.metrics.enabled"
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
                let cond = if short.contains("webhook") {
                    "and .Values.networkPolicy.enabled .Values.webhook.enabled"
                } else {
                    ".Values.networkPolicy.enabled"
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
            extracted = template_manager(
                &mut obj,
                &names,
                &mut e,
                &mut chart,
                &mut metrics_port,
                &mut webhook_port,
            )?;
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
                // A conversion webhook needs the webhook service.
                if let Some(conv) = get_mut(&mut obj, &["spec", "conversion"]) {
                    if get(conv, &["strategy"]).map(s) == Some("Webhook") {
                        let text = serde_yaml::to_string(conv)?;
                        let mut lines = vec![
                            "{{- if .Values.webhook.enabled }}".to_string(),
                            "conversion:".into(),
                        ];
                        lines.extend(text.lines().map(|l| format!("  {l}")));
                        lines.push("{{- end }}".into());
                        let key = e.block_key(lines);
                        let spec = obj.get_mut("spec").and_then(Value::as_mapping_mut).unwrap();
                        spec.remove("conversion");
                        spec.insert(key, Value::Null);
                    }
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
                port_from_values(&mut obj, &mut e, ".Values.webhook.port", &mut webhook_port);
            }
            "Service" if group == "metrics" => {
                port_from_values(&mut obj, &mut e, ".Values.metrics.port", &mut metrics_port);
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
                meta.insert(
                    e.block_key(vec![
                        "{{- with .Values.serviceAccount.annotations }}".into(),
                        "annotations: {{- toYaml . | nindent {I+2} }}".into(),
                        "{{- end }}".into(),
                    ]),
                    Value::Null,
                );
                if let Some(l) = meta.get_mut("labels").and_then(Value::as_mapping_mut) {
                    l.insert(
                        e.block_key(vec![
                            "{{- with .Values.serviceAccount.labels }}".into(),
                            "{{- toYaml . | nindent {I+0} }}".into(),
                            "{{- end }}".into(),
                        ]),
                        Value::Null,
                    );
                }
            }
            _ => {}
        }
        let body = e.render(&obj)?;
        let body = match &cond {
            Some(c) => wrap(c, body),
            None => body,
        };
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
    chart.values = values(
        &chart,
        &deployment,
        &extracted,
        has_crds,
        has_cert_manager,
        metrics_port,
        webhook_port,
    );
    Ok(chart)
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
            .starts_with("{{- if .Values.certManager.enabled }}"));
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
        assert_eq!(chart.namespace, "x-system");
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
