//! The chart being made and the YAML it is written in. Objects are read and changed as
//! serde_yaml values and written back by serde_yaml; where a chart needs Helm template text that
//! is not YAML (a `{{- if }}` around lines, a `{{ .Values.x }}` in place of a scalar), a
//! placeholder goes into the value and [`Emit::render`] puts the template text in its place.

use anyhow::Result;
use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;

/// The chart computed from the manifests.
#[derive(Debug, Default)]
pub struct Chart {
    /// Template path (below `templates/`) -> content.
    pub templates: BTreeMap<String, String>,
    pub values: Vec<(String, String)>,
    pub namespace: String,
    pub has_webhooks: bool,
    /// The manager makes and keeps its own webhook certificate (`--webhook-cert-secret`, the
    /// certs.opbuilder.io plugin): its webhooks need no cert-manager.
    pub webhook_own_cert: bool,
    pub has_prometheus: bool,
    pub has_network_policy: bool,
    pub metrics_service_suffix: String,
    pub has_metrics: bool,
    pub app_version: String,
    /// The manager's health probe port (values.yaml's manager.healthProbe.port).
    pub health_port: u64,
    pub warnings: Vec<String>,
}

/// Serialises YAML with placeholders that are replaced by Helm template text afterwards: inline
/// tokens stand for a scalar, block tokens (a mapping key with a null value, or a sequence item)
/// for whole lines at the token's indentation, where `{I+n}` is that indentation plus n.
#[derive(Default)]
pub struct Emit {
    inline: Vec<String>,
    blocks: Vec<Vec<String>>,
}

impl Emit {
    pub fn inline(&mut self, text: impl Into<String>) -> Value {
        self.inline.push(text.into());
        Value::String(format!("obtplinline{}x", self.inline.len() - 1))
    }
    pub fn block_key(&mut self, lines: Vec<String>) -> Value {
        self.blocks.push(lines);
        Value::String(format!("obtplblock{}x", self.blocks.len() - 1))
    }
    pub fn fill(&self, line: &str) -> String {
        let mut l = line.to_string();
        for (i, s) in self.inline.iter().enumerate().rev() {
            l = l.replace(&format!("obtplinline{i}x"), s);
        }
        l
    }
    pub fn render(&self, v: &Value) -> Result<String> {
        let text = serde_yaml::to_string(v)?;
        let mut out = String::new();
        for line in text.lines() {
            let indent = line.len() - line.trim_start().len();
            let t = line.trim_start();
            let tok = t
                .strip_prefix("- ")
                .unwrap_or(t)
                .strip_suffix(": null")
                .unwrap_or(t.strip_prefix("- ").unwrap_or(t));
            if let Some(n) = tok
                .strip_prefix("obtplblock")
                .and_then(|r| r.strip_suffix('x'))
                .and_then(|n| n.parse::<usize>().ok())
            {
                for l in &self.blocks[n] {
                    let mut l = self.fill(l);
                    for add in [0usize, 2, 4, 6] {
                        l = l.replace(&format!("{{I+{add}}}"), &(indent + add).to_string());
                    }
                    out.push_str(&" ".repeat(indent));
                    out.push_str(&l);
                    out.push('\n');
                }
                continue;
            }
            out.push_str(&self.fill(line));
            out.push('\n');
        }
        Ok(out)
    }
}

pub fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// The container a Deployment's `kubectl.kubernetes.io/default-container` annotation names, if
/// it names one.
pub fn default_container(deployment: &Value) -> Option<&str> {
    get(
        deployment,
        &[
            "spec",
            "template",
            "metadata",
            "annotations",
            "kubectl.kubernetes.io/default-container",
        ],
    )
    .map(s)
    .filter(|n| !n.is_empty())
}

pub fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.as_mapping()?.get(*p)?;
    }
    Some(cur)
}

pub fn get_mut<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let mut cur = v;
    for p in path {
        cur = cur.as_mapping_mut()?.get_mut(*p)?;
    }
    Some(cur)
}

/// The names kustomize gave the objects (its namePrefix, the namespace), to turn into templates.
pub struct Names<'a> {
    pub chart: &'a str,
    pub prefix: &'a str,
    pub ns: &'a str,
}

impl Names<'_> {
    pub fn resource(&self, suffix: &str) -> String {
        format!(
            "{{{{ include \"{}.resourceName\" (dict \"suffix\" \"{suffix}\" \"context\" $) }}}}",
            self.chart
        )
    }
    /// A name made by kustomize's namePrefix, as a template.
    pub fn name(&self, v: &str) -> Option<String> {
        let rest = v.strip_prefix(self.prefix)?.strip_prefix('-')?;
        (!rest.is_empty()).then(|| self.resource(rest))
    }
    /// A string holding prefixed names and the namespace, as a template.
    pub fn text(&self, key: &str, v: &str) -> Option<String> {
        if key == "app.kubernetes.io/name" && v == self.chart {
            return Some(format!("{{{{ include \"{}.name\" . }}}}", self.chart));
        }
        if v == self.ns && (key == "namespace" || key == "WATCH_NAMESPACE") {
            return Some("{{ .Release.Namespace }}".into());
        }
        // ns/name (cert-manager's inject-ca-from), name.ns.svc[.cluster.local] (certificate DNS names)
        if let Some((ns, name)) = v.split_once('/') {
            if ns == self.ns {
                if let Some(n) = self.name(name) {
                    return Some(format!("{{{{ .Release.Namespace }}}}/{n}"));
                }
            }
        }
        let mut parts = v.splitn(3, '.');
        if let (Some(name), Some(ns), Some(rest)) = (parts.next(), parts.next(), parts.next()) {
            if ns == self.ns && (rest == "svc" || rest == "svc.cluster.local") {
                if let Some(n) = self.name(name) {
                    return Some(format!("{n}.{{{{ .Release.Namespace }}}}.{rest}"));
                }
            }
        }
        self.name(v)
    }
}

/// Replace prefixed names and the namespace in every string of `v`.
pub fn template_strings(v: &mut Value, key: &str, names: &Names, e: &mut Emit) {
    match v {
        Value::String(st) => {
            if let Some(t) = names.text(key, st) {
                *v = e.inline(t);
            }
        }
        Value::Mapping(m) => {
            for (k, val) in m.iter_mut() {
                template_strings(val, k.as_str().unwrap_or(""), names, e);
            }
        }
        Value::Sequence(seq) => {
            for val in seq.iter_mut() {
                template_strings(val, key, names, e);
            }
        }
        _ => {}
    }
}

/// Helm's labels in metadata.labels: managed-by is Helm, plus the chart label.
pub fn helm_labels(obj: &mut Value, e: &mut Emit) {
    // Objects the kustomize output labels (not those controller-gen writes) get Helm's labels.
    if let Some(l) = get_mut(obj, &["metadata", "labels"]).and_then(Value::as_mapping_mut) {
        add_helm_labels(l, e);
    }
}

pub fn add_helm_labels(l: &mut Mapping, e: &mut Emit) {
    l.insert(
        "app.kubernetes.io/managed-by".into(),
        e.inline("{{ .Release.Service }}"),
    );
    l.insert(
        "helm.sh/chart".into(),
        e.inline("{{ .Chart.Name }}-{{ .Chart.Version | replace \"+\" \"_\" }}"),
    );
    l.insert(
        "app.kubernetes.io/instance".into(),
        e.inline("{{ .Release.Name }}"),
    );
}

pub fn wrap(cond: &str, body: String) -> String {
    format!("{{{{- if {cond} }}}}\n{body}{{{{- end }}}}\n")
}

/// A sequence item kept only when `cond` holds.
pub fn cond_item(e: &mut Emit, cond: &str, item: &Value) -> Result<Value> {
    let text = serde_yaml::to_string(&Value::Sequence(vec![item.clone()]))?;
    let mut lines = vec![format!("{{{{- if {cond} }}}}")];
    lines.extend(text.lines().map(String::from));
    lines.push("{{- end }}".into());
    Ok(e.block_key(lines))
}

pub fn render_scalar(e: &Emit, v: &Value) -> String {
    e.fill(s(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names<'static> {
        Names {
            chart: "h1",
            prefix: "h1",
            ns: "h1-system",
        }
    }

    #[test]
    fn prefixed_names_and_the_namespace_become_templates() {
        let n = names();
        let r = |s: &str| n.resource(s);
        assert_eq!(n.text("name", "h1-manager-role"), Some(r("manager-role")));
        assert_eq!(
            n.text("namespace", "h1-system"),
            Some("{{ .Release.Namespace }}".into())
        );
        // Not a namespace field: a plain prefixed name.
        assert_eq!(n.text("value", "h1-system"), Some(r("system")));
        // ns/name must not be read as one prefixed name (the project name prefixes both).
        assert_eq!(
            n.text(
                "cert-manager.io/inject-ca-from",
                "h1-system/h1-serving-cert"
            ),
            Some(format!(
                "{{{{ .Release.Namespace }}}}/{}",
                r("serving-cert")
            ))
        );
        assert_eq!(
            n.text("x", "h1-webhook-service.h1-system.svc.cluster.local"),
            Some(format!(
                "{}.{{{{ .Release.Namespace }}}}.svc.cluster.local",
                r("webhook-service")
            ))
        );
        assert_eq!(
            n.text("app.kubernetes.io/name", "h1"),
            Some("{{ include \"h1.name\" . }}".into())
        );
        for keep in ["h1", "h1-", "other-manager-role", "manager", "h1x-role"] {
            assert_eq!(n.text("name", keep), None, "{keep}");
        }
    }

    #[test]
    fn block_tokens_expand_at_their_indentation() {
        let mut e = Emit::default();
        let mut inner = Mapping::new();
        inner.insert("a".into(), Value::from(1));
        inner.insert(
            e.block_key(vec![
                "{{- with .Values.x }}".into(),
                "x: {{- toYaml . | nindent {I+2} }}".into(),
                "{{- end }}".into(),
            ]),
            Value::Null,
        );
        let mut top = Mapping::new();
        top.insert("spec".into(), Value::Mapping(inner));
        top.insert(
            "list".into(),
            Value::Sequence(vec![e.inline("{{ .Values.y }}")]),
        );
        assert_eq!(
            e.render(&Value::Mapping(top)).unwrap(),
            "spec:\n  a: 1\n  {{- with .Values.x }}\n  x: {{- toYaml . | nindent 4 }}\n  {{- end }}\nlist:\n- {{ .Values.y }}\n"
        );
    }
}
