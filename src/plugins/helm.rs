//! helm.kubebuilder.io/v2-alpha: a Helm chart (`dist/chart`) made from the project's kustomize
//! output, with values toggles for the manager, RBAC helpers, CRDs, metrics, cert-manager,
//! webhooks, Prometheus and network policies, plus the chart test workflow.
//!
//! Like Kubebuilder, the plugin reads the kustomize output from a manifests file. With the default
//! file (dist/install.yaml) it first runs `make build-installer`, which regenerates the CRDs and
//! RBAC (controller-gen) and writes that file: this is the one step of the command that is not part
//! of its plan, because the chart is computed from make's output. Everything else (the chart, the
//! workflow, the Makefile targets, PROJECT) is one plan, applied as one transaction. With
//! `--manifests FILE` nothing is run. A missing `make` is reported with what to do.
//!
//! Files written again on every run: the templates made from the manifests and the Prometheus
//! monitor. Kept when they exist (unless --force): values.yaml, NOTES.txt, _helpers.tpl,
//! .helmignore, the network policies and the workflow. Chart.yaml is never rewritten. A kept
//! values.yaml that lacks a top-level section the new templates read (say `webhook:` after the
//! first `create webhook`) gets that section appended; the user's edits stay as they are.

use crate::error::usage;
use crate::plan::{Edit, IfExists};
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::templates;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;
use std::path::Path;

pub const NAME: &str = "helm.kubebuilder.io";
pub const KEY: &str = "helm.kubebuilder.io/v2-alpha";
pub const DEPRECATED_KEY: &str = "helm.kubebuilder.io/v1-alpha";
pub const DEFAULT_MANIFESTS: &str = "dist/install.yaml";
pub const DEFAULT_OUTPUT: &str = "dist";

pub struct Helm;

const WORKFLOW: &str = ".github/workflows/test-chart.yml";
/// The workflow step enabled when the project has webhooks (Kubebuilder uncomments it too).
const CERT_MANAGER_STEP: &str = "      - name: Install cert-manager via Helm (wait for readiness)
        run: |
          helm repo add jetstack https://charts.jetstack.io
          helm repo update
          helm install cert-manager jetstack/cert-manager \\
            --namespace cert-manager \\
            --create-namespace \\
            --set crds.enabled=true \\
            --wait \\
            --timeout 300s
";

/// The plugin's PROJECT section (Kubebuilder's keys).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Section {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manifests: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
}

impl Plugin for Helm {
    fn key(&self) -> &'static str {
        KEY
    }

    fn edit(&self, cx: &mut Cx, args: &EditArgs) -> Result<()> {
        let manifests = args.manifests.as_deref().unwrap_or(DEFAULT_MANIFESTS);
        let output = args.output_dir.as_deref().unwrap_or(DEFAULT_OUTPUT);
        check_rel_path("--manifests", manifests, "--manifests=dist/install.yaml")?;
        check_rel_path("--output-dir", output, "--output-dir=dist")?;
        if manifests == DEFAULT_MANIFESTS && !args.dry_run && !args.skip_build_installer {
            build_installer(cx.root)?;
        }
        let text = std::fs::read_to_string(cx.root.join(manifests)).map_err(|e| {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                "there is no such file".to_string()
            } else {
                format!("cannot read it: {e}")
            };
            if manifests == DEFAULT_MANIFESTS {
                anyhow::anyhow!("{manifests}: {why}; run `make build-installer` first (neither a dry run nor --skip-build-installer runs it)")
            } else {
                anyhow::anyhow!("--manifests {manifests:?}: {why}; give the kustomize output of the project, for example --manifests=dist/install.yaml")
            }
        })?;
        let first_run = cx.project.plugin_config::<Section>(KEY)?.is_none();
        let chart = convert(&cx.project.project_name, &text)
            .with_context(|| format!("converting {manifests} into a Helm chart"))?;
        plan_files(cx, &chart, output, args.force)?;
        if first_run && cx.root.join("Makefile").is_file() {
            cx.plan.update(
                "Makefile",
                Edit::Append {
                    text: makefile_targets(&cx.project.project_name, &chart.namespace, output),
                },
            );
        }
        // The deprecated chart plugin's section goes, as Kubebuilder drops it on this edit.
        cx.project.remove_plugin_config(DEPRECATED_KEY);
        cx.project.set_plugin_config(
            KEY,
            &Section {
                manifests: manifests.into(),
                output: output.into(),
            },
        )?;
        for w in &chart.warnings {
            cx.notes.push(format!("warning: {w}"));
        }
        cx.notes.push(format!(
            "The chart is in {output}/chart. Check it with `helm lint {output}/chart`; install it with `make helm-deploy`. \
             After `create api` or `create webhook`, run `opbuilder edit --plugins={KEY}` again: the templates follow \
             the new manifests and your values.yaml is kept."
        ));
        Ok(())
    }
}

fn check_rel_path(flag: &str, value: &str, example: &str) -> Result<()> {
    let p = Path::new(value);
    if value.is_empty()
        || p.is_absolute()
        || p.components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(usage(format!(
            "invalid value {value:?} for {flag}: give a path inside the project, relative to its root \
             and without `..`; for example {example}"
        )));
    }
    Ok(())
}

/// Run `make build-installer`, which writes dist/install.yaml (Kubebuilder's plugin does the same).
fn build_installer(root: &Path) -> Result<()> {
    if !root.join("Makefile").is_file() {
        bail!(
            "the helm plugin reads the kustomize output from {DEFAULT_MANIFESTS}, made by `make build-installer`, \
             but the project has no Makefile: restore it, or write the file yourself (kustomize build config/default > \
             {DEFAULT_MANIFESTS}) and run again with --skip-build-installer (or give another file with --manifests=FILE)"
        );
    }
    crate::out::errln!("Running `make build-installer` to refresh {DEFAULT_MANIFESTS} (the chart is made from it)...");
    let status = std::process::Command::new("make")
        .arg("build-installer")
        .current_dir(root)
        .status();
    match status {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "the helm plugin needs `make` to refresh {DEFAULT_MANIFESTS} (`make build-installer`), and `make` is not \
             on PATH: install make (and Go, which the target uses), or write the kustomize output yourself and pass \
             --manifests=FILE; nothing was changed"
        ),
        Err(e) => Err(anyhow!(e).context("starting `make build-installer`")),
        Ok(s) if !s.success() => bail!(
            "`make build-installer` failed ({s}); the chart was not written. Fix the problem above and run the edit again, \
             or pass --manifests=FILE to use kustomize output you made yourself"
        ),
        Ok(_) => Ok(()),
    }
}

/// The chart computed from the manifests.
#[derive(Debug, Default)]
pub struct Chart {
    /// Template path (below `templates/`) -> content.
    pub templates: BTreeMap<String, String>,
    pub values: Vec<(String, String)>,
    pub namespace: String,
    pub has_webhooks: bool,
    pub has_prometheus: bool,
    pub has_network_policy: bool,
    pub metrics_service_suffix: String,
    pub has_metrics: bool,
    pub app_version: String,
    pub warnings: Vec<String>,
}

fn plan_files(cx: &mut Cx, chart: &Chart, output: &str, force: bool) -> Result<()> {
    let name = &cx.project.project_name;
    let chart_dir = format!("{output}/chart");
    let keep = if force {
        IfExists::Overwrite
    } else {
        IfExists::Skip
    };
    // The chart's files are Helm templates, copied as they are (no .hbs): only the chart's name
    // (@CHART@) and the metrics service (@METRICS_SERVICE@) are filled in.
    for f in templates::render_tree("helm", &(), |_| true)? {
        let t = f.template.as_str();
        let content = f
            .content
            .replace("@CHART@", name)
            .replace("@METRICS_SERVICE@", &chart.metrics_service_suffix);
        if let Some(rel) = t.strip_prefix("chart/") {
            let is_monitor = rel.starts_with("templates/prometheus/");
            let is_policy = rel.starts_with("templates/network-policy/");
            if (is_monitor && chart.has_prometheus) || (is_policy && chart.has_network_policy) {
                continue; // the manifests bring their own
            }
            if rel == "templates/network-policy/allow-webhook-traffic.yaml" && !chart.has_webhooks {
                continue;
            }
            let policy = if is_monitor {
                IfExists::Overwrite
            } else {
                keep
            };
            cx.plan
                .create(format!("{chart_dir}/{rel}"), content, policy);
        } else {
            cx.plan.create(t, content, keep);
        }
    }
    if chart.has_webhooks {
        cx.plan.update(
            WORKFLOW,
            Edit::Uncomment {
                block: CERT_MANAGER_STEP.into(),
                required: false,
            },
        );
    }
    cx.plan.create(
        format!("{chart_dir}/Chart.yaml"),
        format!(
            "apiVersion: v2\nname: {name}\ndescription: A Helm chart to install the {name} operator\ntype: application\n\
             # The chart's version: bump it with every change to the chart.\nversion: 0.1.0\n\
             # The version of the manager; the default image tag.\nappVersion: \"{}\"\n\
             keywords:\n  - kubernetes\n  - operator\n",
            chart.app_version
        ),
        IfExists::Skip,
    );
    let values_path = format!("{chart_dir}/values.yaml");
    let fresh: String = chart.values.iter().map(|(_, t)| t.as_str()).collect();
    let existing = if force {
        None
    } else {
        crate::fsx::read_text(&cx.root.join(&values_path), 1 << 20)?
    };
    match existing {
        None => cx.plan.create(values_path, fresh, IfExists::Overwrite),
        Some(old) => {
            let parsed: Value = serde_yaml::from_str(&old).with_context(|| {
                format!("{values_path} is not valid YAML; fix it, or run again with --force to write it anew")
            })?;
            let have = |k: &str| parsed.as_mapping().is_some_and(|m| m.contains_key(k));
            let missing: Vec<&(String, String)> = chart
                .values
                .iter()
                .filter(|(k, _)| !k.is_empty() && !have(k))
                .collect();
            let cm_off =
                get(&parsed, &["certManager", "enabled"]).and_then(Value::as_bool) == Some(false);
            if cm_off && chart.has_webhooks {
                cx.notes.push(format!(
                    "warning: {values_path} keeps certManager.enabled: false, but the project has webhooks now, which need \
                     cert-manager's certificates: set it to true (or install with --set certManager.enabled=true)"
                ));
            }
            if !missing.is_empty() {
                let mut text = String::from("\n## Added by `opbuilder edit --plugins=helm/v2-alpha` for the new templates\n");
                for (k, t) in &missing {
                    text.push_str(t);
                    cx.notes
                        .push(format!("{values_path}: added the missing section `{k}:`"));
                }
                cx.plan.update(values_path, Edit::Append { text });
            }
        }
    }
    for (rel, content) in &chart.templates {
        cx.plan.create(
            format!("{chart_dir}/templates/{rel}"),
            content.clone(),
            IfExists::Overwrite,
        );
    }
    Ok(())
}

fn makefile_targets(project: &str, namespace: &str, output: &str) -> String {
    format!(
        r#"
##@ Helm Deployment

## Helm command used by the targets below
HELM ?= helm
## Namespace of the Helm release
HELM_NAMESPACE ?= {namespace}
## Name of the Helm release
HELM_RELEASE ?= {project}
## The chart written by `opbuilder edit --plugins=helm/v2-alpha`
HELM_CHART_DIR ?= {output}/chart
## More arguments for the helm commands
HELM_EXTRA_ARGS ?=

.PHONY: install-helm
install-helm: ## Check that Helm is installed (see https://helm.sh/docs/intro/install/).
	@command -v $(HELM) >/dev/null 2>&1 || {{ \
		echo "$(HELM) not found: install Helm (https://helm.sh/docs/intro/install/) or set HELM=/path/to/helm"; \
		exit 1; \
	}}

.PHONY: helm-deploy
helm-deploy: install-helm ## Install or upgrade the chart on the K8s cluster. Specify an image with IMG.
	$(HELM) upgrade --install $(HELM_RELEASE) $(HELM_CHART_DIR) \
		--namespace $(HELM_NAMESPACE) \
		--create-namespace \
		--set manager.image.repository=$${{IMG%%:*}} \
		--set manager.image.tag=$${{IMG##*:}} \
		--wait \
		--timeout 5m \
		$(HELM_EXTRA_ARGS)

.PHONY: helm-uninstall
helm-uninstall: ## Remove the Helm release from the K8s cluster.
	$(HELM) uninstall $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)

.PHONY: helm-status
helm-status: ## Show the status of the Helm release.
	$(HELM) status $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)

.PHONY: helm-history
helm-history: ## Show the revisions of the Helm release.
	$(HELM) history $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)

.PHONY: helm-rollback
helm-rollback: ## Roll the Helm release back to its previous revision.
	$(HELM) rollback $(HELM_RELEASE) --namespace $(HELM_NAMESPACE)
"#
    )
}

// ---------------------------------------------------------------------------------------------
// Conversion of the kustomize output.

/// Serialises YAML with placeholders that are replaced by Helm template text afterwards: inline
/// tokens stand for a scalar, block tokens (a mapping key with a null value, or a sequence item)
/// for whole lines at the token's indentation, where `{I+n}` is that indentation plus n.
#[derive(Default)]
struct Emit {
    inline: Vec<String>,
    blocks: Vec<Vec<String>>,
}

impl Emit {
    fn inline(&mut self, text: impl Into<String>) -> Value {
        self.inline.push(text.into());
        Value::String(format!("obtplinline{}x", self.inline.len() - 1))
    }
    fn block_key(&mut self, lines: Vec<String>) -> Value {
        self.blocks.push(lines);
        Value::String(format!("obtplblock{}x", self.blocks.len() - 1))
    }
    fn fill(&self, line: &str) -> String {
        let mut l = line.to_string();
        for (i, s) in self.inline.iter().enumerate().rev() {
            l = l.replace(&format!("obtplinline{i}x"), s);
        }
        l
    }
    fn render(&self, v: &Value) -> Result<String> {
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

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.as_mapping()?.get(*p)?;
    }
    Some(cur)
}

fn get_mut<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let mut cur = v;
    for p in path {
        cur = cur.as_mapping_mut()?.get_mut(*p)?;
    }
    Some(cur)
}

struct Names<'a> {
    chart: &'a str,
    prefix: &'a str,
    ns: &'a str,
}

impl Names<'_> {
    fn resource(&self, suffix: &str) -> String {
        format!(
            "{{{{ include \"{}.resourceName\" (dict \"suffix\" \"{suffix}\" \"context\" $) }}}}",
            self.chart
        )
    }
    /// A name made by kustomize's namePrefix, as a template.
    fn name(&self, v: &str) -> Option<String> {
        let rest = v.strip_prefix(self.prefix)?.strip_prefix('-')?;
        (!rest.is_empty()).then(|| self.resource(rest))
    }
    /// A string holding prefixed names and the namespace, as a template.
    fn text(&self, key: &str, v: &str) -> Option<String> {
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
fn template_strings(v: &mut Value, key: &str, names: &Names, e: &mut Emit) {
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
fn helm_labels(obj: &mut Value, e: &mut Emit) {
    // Objects the kustomize output labels (not those controller-gen writes) get Helm's labels.
    if let Some(l) = get_mut(obj, &["metadata", "labels"]).and_then(Value::as_mapping_mut) {
        add_helm_labels(l, e);
    }
}

fn add_helm_labels(l: &mut Mapping, e: &mut Emit) {
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

fn wrap(cond: &str, body: String) -> String {
    format!("{{{{- if {cond} }}}}\n{body}{{{{- end }}}}\n")
}

/// A sequence item kept only when `cond` holds.
fn cond_item(e: &mut Emit, cond: &str, item: &Value) -> Result<Value> {
    let text = serde_yaml::to_string(&Value::Sequence(vec![item.clone()]))?;
    let mut lines = vec![format!("{{{{- if {cond} }}}}")];
    lines.extend(text.lines().map(String::from));
    lines.push("{{- end }}".into());
    Ok(e.block_key(lines))
}

pub fn convert(project: &str, manifests: &str) -> Result<Chart> {
    let mut docs = vec![];
    for d in serde_yaml::Deserializer::from_str(manifests) {
        let v = Value::deserialize(d)?;
        if v.is_mapping() {
            docs.push(v);
        }
    }
    let kind = |v: &Value| s(get(v, &["kind"]).unwrap_or(&Value::Null)).to_string();
    let name = |v: &Value| s(get(v, &["metadata", "name"]).unwrap_or(&Value::Null)).to_string();
    let deployment = docs
        .iter()
        .find(|d| kind(d) == "Deployment" && name(d).ends_with("controller-manager"))
        .or_else(|| docs.iter().find(|d| kind(d) == "Deployment"))
        .cloned();
    let Some(deployment) = deployment else {
        bail!("the manifests hold no Deployment of the manager; give the output of `kustomize build config/default`");
    };
    let dep_name = name(&deployment);
    let prefix = dep_name
        .strip_suffix("-controller-manager")
        .unwrap_or(project)
        .to_string();
    let ns = s(get(&deployment, &["metadata", "namespace"]).unwrap_or(&Value::Null)).to_string();
    let ns = if ns.is_empty() {
        format!("{project}-system")
    } else {
        ns
    };
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
                    if a.keys()
                        .any(|k| k.as_str() == Some("cert-manager.io/inject-ca-from"))
                    {
                        let v = a.remove("cert-manager.io/inject-ca-from").unwrap();
                        let line =
                            format!("cert-manager.io/inject-ca-from: {}", render_scalar(&e, &v));
                        a.insert(
                            e.block_key(vec![
                                "{{- if .Values.certManager.enabled }}".into(),
                                line,
                                "{{- end }}".into(),
                            ]),
                            Value::Null,
                        );
                    }
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
                    if let Some(v) = a.remove("cert-manager.io/inject-ca-from") {
                        let line =
                            format!("cert-manager.io/inject-ca-from: {}", render_scalar(&e, &v));
                        a.insert(
                            e.block_key(vec![
                                "{{- if .Values.certManager.enabled }}".into(),
                                line,
                                "{{- end }}".into(),
                            ]),
                            Value::Null,
                        );
                    }
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

fn render_scalar(e: &Emit, v: &Value) -> String {
    e.fill(s(v))
}

/// The service's first port: its target (the container's port) comes from values; so does its
/// own port when it equals the target (the metrics service), not otherwise (the webhook service
/// listens on 443).
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

/// The arguments of the manager that values.yaml holds (`manager.args`): all but those the
/// chart sets from other values.
fn is_value_arg(a: &str) -> bool {
    !(a.starts_with("--metrics-bind-address")
        || a.starts_with("--health-probe-bind-address")
        || a.starts_with("--webhook-cert-path")
        || a.starts_with("--metrics-cert-path")
        || a.starts_with("--metrics-secure"))
}

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

fn template_manager(
    obj: &mut Value,
    names: &Names,
    e: &mut Emit,
    chart: &mut Chart,
    metrics_port: &mut u64,
    webhook_port: &mut u64,
) -> Result<Value> {
    let project = names.chart.to_string();
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
    let cert_webhook = ".Values.certManager.enabled";
    let cert_metrics = "and .Values.certManager.enabled .Values.metrics.enabled";
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
    if let Some(containers) = pod.get_mut("containers").and_then(Value::as_sequence_mut) {
        let idx = containers
            .iter()
            .position(|c| get(c, &["name"]).map(s) == Some("manager"))
            .unwrap_or(0);
        if let Some(c) = containers.get_mut(idx).and_then(Value::as_mapping_mut) {
            image = c.get("image").map(s).unwrap_or("").to_string();
            c.insert(
                "image".into(),
                e.inline(
                    "\"{{ .Values.manager.image.repository }}{{- if not (contains \"@\" .Values.manager.image.repository) }}:{{ .Values.manager.image.tag | default .Chart.AppVersion }}{{- end }}\"",
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
                // Kubebuilder's order: metrics, health probe, the values' args, certificates.
                let (mut metrics, mut probe, mut rest) = (vec![], vec![], vec![]);
                for a in args.iter() {
                    let st = s(a).to_string();
                    if is_value_arg(&st) {
                        values_args.push(st);
                    } else if st.starts_with("--metrics-bind-address") {
                        if let Some(p) = st.rsplit(':').next().and_then(|p| p.parse().ok()) {
                            *metrics_port = p;
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
                        probe.push(a.clone());
                    } else if st.starts_with("--webhook-cert-path") {
                        rest.push(cond_item(e, cert_webhook, a)?);
                    } else if st.starts_with("--metrics-cert-path") {
                        rest.push(cond_item(e, cert_metrics, a)?);
                    }
                }
                let mut out = metrics;
                out.extend(probe);
                out.push(e.block_key(vec![
                    "{{- range .Values.manager.args }}".into(),
                    "- {{ . }}".into(),
                    "{{- end }}".into(),
                ]));
                out.extend(rest);
                *args = out;
            }
            if let Some(ports) = c.get_mut("ports").and_then(Value::as_sequence_mut) {
                for p in ports.iter_mut() {
                    if get(p, &["name"]).map(s) == Some("webhook-server") {
                        if let Some(n) = get(p, &["containerPort"]).and_then(Value::as_u64) {
                            *webhook_port = n;
                        }
                        p.as_mapping_mut().unwrap().insert(
                            "containerPort".into(),
                            e.inline("{{ .Values.webhook.port }}"),
                        );
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
    Ok(Value::Mapping(extracted))
}

/// `value` as YAML lines under a key, indented by `indent` spaces.
fn yaml_block(value: &Value, indent: usize) -> String {
    let text = serde_yaml::to_string(value).unwrap_or_default();
    text.lines()
        .map(|l| format!("{}{l}\n", " ".repeat(indent)))
        .collect()
}

fn values(
    chart: &Chart,
    deployment: &Value,
    x: &Value,
    has_crds: bool,
    has_cert_manager: bool,
    metrics_port: u64,
    webhook_port: u64,
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
    m.push_str("  ## Manager arguments (metrics, health probe and certificate flags come from the sections below)\n");
    if args.as_sequence().is_some_and(|a| !a.is_empty()) {
        m.push_str("  args:\n");
        m.push_str(&yaml_block(&args, 4));
    } else {
        m.push_str("  args: []\n");
    }
    m.push('\n');
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
        "## The manager's ServiceAccount\nserviceAccount:\n  ## false: use an existing account, named below\n  enabled: true\n  # name: \"\"\n  # annotations: {}\n  # labels: {}\n\n".into(),
    ));
    if has_crds {
        out.push((
            "crd".into(),
            "## The CustomResourceDefinitions\ncrd:\n  ## Install them with the chart\n  enabled: true\n  ## Leave them (and every custom resource) in place on `helm uninstall`\n  keep: true\n\n".into(),
        ));
    }
    out.push((
        "metrics".into(),
        format!(
            "## The manager's /metrics endpoint\nmetrics:\n  enabled: {}\n  port: {metrics_port}\n  ## HTTPS with authentication and authorization (true) or plain HTTP (false)\n  secure: true\n\n",
            chart.has_metrics
        ),
    ));
    out.push((
        "certManager".into(),
        format!(
            "## Certificates from cert-manager (must be installed in the cluster) for webhooks and metrics\ncertManager:\n  enabled: {}\n\n",
            chart.has_webhooks || has_cert_manager
        ),
    ));
    if chart.has_webhooks {
        out.push((
            "webhook".into(),
            format!("## The webhook server\nwebhook:\n  enabled: true\n  port: {webhook_port}\n\n"),
        ));
    }
    out.push((
        "prometheus".into(),
        "## A ServiceMonitor for the metrics (needs the Prometheus Operator)\nprometheus:\n  enabled: false\n\n".into(),
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

    #[test]
    fn the_fixture_converts_with_each_part_behind_its_toggle() {
        let chart = convert(
            "x",
            include_str!("../../e2e/fixtures/helm/install-webhooks.yaml"),
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
