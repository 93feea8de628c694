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
//! Files written again on every run: the templates made from the manifests. Kept when they exist
//! (unless --force): values.yaml, NOTES.txt, _helpers.tpl, .helmignore, the default network
//! policies and Prometheus monitor, and the workflow. Chart.yaml is never rewritten. A kept
//! values.yaml that lacks a top-level section the new templates read (say `webhook:` from a
//! release that wrote it only with webhooks) gets that section appended, and one whose `manager:`
//! lacks `healthProbe:` gets it inserted; the user's edits stay as they are.

mod chart;
mod convert;
mod kustomize;
mod manager;
mod values;

use crate::error::usage;
use crate::plan::{Edit, IfExists};
use crate::planning::api::ResolvedResource;
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::planning::webhook::ResolvedWebhook;
use crate::templates;
use anyhow::{anyhow, bail, Context, Result};
use chart::{get, Chart};
use convert::convert;
use serde::{Deserialize, Serialize};
use serde_yaml::Value;
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

/// What writes the chart again: the plugin's `edit` (which runs `make build-installer` first).
const REWRITE: &str = "opbuilder edit --plugins=helm/v2-alpha";

/// The chart's templates directory, when the project has a chart.
fn chart_templates(root: &Path, project: &crate::project::Project) -> Option<String> {
    let section: Section = project
        .plugin_config(KEY)
        .ok()
        .flatten()
        .unwrap_or_default();
    let output = if section.output.is_empty() {
        DEFAULT_OUTPUT.to_string()
    } else {
        section.output
    };
    let dir = format!("{output}/chart/templates");
    root.join(&dir).is_dir().then_some(dir)
}

/// The chart templates under `dir` that hold `needle`, listed for [`REWRITE`].
fn list_naming(root: &Path, dir: &str, needle: &str, undo: &mut Undo) {
    let Ok(groups) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    let mut found = vec![];
    for g in groups.flatten() {
        for f in std::fs::read_dir(g.path()).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            if text.contains(needle) {
                if let Ok(rel) = f.path().strip_prefix(root) {
                    found.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    found.sort();
    for f in found {
        // A template planned to go already (the kind's own) stays planned so.
        if !undo.generated.iter().any(|g| g.path == f) {
            undo.generated(f, false, REWRITE);
        }
    }
}

impl Plugin for Helm {
    fn key(&self) -> &'static str {
        KEY
    }

    fn joins_deletion(&self) -> bool {
        true
    }

    /// The chart's templates made from a kind that goes: its CRD and helper roles are removed
    /// with its last version (the plugin wrote them from the kustomize output, which will not
    /// hold them again); the others that name it are listed for the plugin to write again.
    fn delete_api(&self, cx: &mut Cx, res: &ResolvedResource, undo: &mut Undo) -> Result<()> {
        let Some(dir) = chart_templates(cx.root, &undo.after) else {
            return Ok(());
        };
        let ctx = crate::plugins::golang::api::context(cx.root, cx.project, res)?;
        let kind_goes = !undo
            .after
            .resources
            .iter()
            .any(|r| r.group == res.gvk.group && r.kind == res.gvk.kind && r.api.is_some());
        if res.do_resource {
            let mut own = vec![format!("{dir}/crd/{}.{}.yaml", ctx.plural, ctx.qgroup)];
            for role in ["admin", "editor", "viewer"] {
                own.push(format!(
                    "{dir}/rbac/{}{}-{role}-role.yaml",
                    ctx.role_name_prefix, ctx.kind_lower
                ));
            }
            for f in own.into_iter().filter(|f| cx.root.join(f).is_file()) {
                undo.generated(f, kind_goes, REWRITE);
            }
        }
        list_naming(cx.root, &dir, &format!("- {}\n", ctx.plural), undo);
        undo.next(REWRITE);
        Ok(())
    }

    /// The chart's webhook templates that name the kind's webhooks, listed.
    fn delete_webhook(&self, cx: &mut Cx, hook: &ResolvedWebhook, undo: &mut Undo) -> Result<()> {
        let Some(dir) = chart_templates(cx.root, &undo.after) else {
            return Ok(());
        };
        let ctx = crate::plugins::golang::webhook::context(cx.root, cx.project, hook)?;
        list_naming(
            cx.root,
            &dir,
            &format!("-{}-{}", ctx.version, ctx.kind_lower),
            undo,
        );
        undo.next(REWRITE);
        Ok(())
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
            let missing = e.kind() == std::io::ErrorKind::NotFound;
            let why = if missing {
                "there is no such file".to_string()
            } else {
                format!("cannot read it: {e}")
            };
            if manifests == DEFAULT_MANIFESTS {
                anyhow::anyhow!("{manifests}: {why}; run `make build-installer` first (neither a dry run nor --skip-build-installer runs it)")
            } else {
                let msg = format!("--manifests {manifests:?}: {why}; give the kustomize output of the project, for example --manifests=dist/install.yaml");
                // A path the user gave that names no file is bad input (exit 2); an unreadable file is not.
                if missing {
                    usage(msg)
                } else {
                    anyhow::anyhow!(msg)
                }
            }
        })?;
        let first_run = cx.project.plugin_config::<Section>(KEY)?.is_none();
        let mut chart = convert(&cx.project.project_name, &text)
            .with_context(|| format!("converting {manifests} into a Helm chart"))?;
        if cx
            .project
            .layout
            .iter()
            .any(|k| crate::project::is_rust_layout(k))
        {
            values::name_rust_flags(&mut chart.values);
        }
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
        // And from the layout (where Kubebuilder leaves it, and runs v1-alpha again on every edit).
        cx.project.layout.retain(|k| k != DEPRECATED_KEY);
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
             on PATH: install make (and what the target uses: Go for go/v4, cargo for the Rust layout), or write the kustomize output yourself and pass \
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
            // The default monitor is the user's to edit, like the policies.
            cx.plan.create(format!("{chart_dir}/{rel}"), content, keep);
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
            let webhook_off =
                get(&parsed, &["webhook", "enabled"]).and_then(Value::as_bool) == Some(false);
            if webhook_off && chart.has_webhooks {
                cx.notes.push(format!(
                    "warning: {values_path} keeps webhook.enabled: false (as written before the project had webhooks), so \
                     the chart installs none of them and starts the manager without its webhook server: set it to true \
                     (or install with --set webhook.enabled=true)"
                ));
            }
            if cm_off && chart.has_webhooks && !chart.webhook_own_cert {
                cx.notes.push(format!(
                    "warning: {values_path} keeps certManager.enabled: false, but the project has webhooks now, which need \
                     cert-manager's certificates: set it to true (or install with --set certManager.enabled=true)"
                ));
            }
            let manager_lacks_probe = parsed
                .get("manager")
                .and_then(Value::as_mapping)
                .is_some_and(|m| !m.contains_key("healthProbe"));
            if manager_lacks_probe {
                // The manager's template reads manager.healthProbe.port; the section goes first
                // under `manager:` (a block mapping at the top level, as every values.yaml this
                // plugin writes has it).
                let top_level = old
                    .lines()
                    .find(|l| l.trim() == "manager:")
                    .is_some_and(|l| l == "manager:");
                if top_level {
                    cx.plan.update(
                        values_path.clone(),
                        Edit::AfterLine {
                            anchor: "manager:".into(),
                            text: format!(
                                "  ## Added by `opbuilder edit --plugins=helm/v2-alpha`: the port of the manager's health endpoints\n  \
                                 healthProbe:\n    port: {}\n",
                                chart.health_port
                            ),
                        },
                    );
                    cx.notes.push(format!(
                        "{values_path}: added `manager.healthProbe.port: {}`",
                        chart.health_port
                    ));
                } else {
                    cx.notes.push(format!(
                        "warning: {values_path} has no `manager.healthProbe.port`, which the chart's manager template reads: \
                         add `healthProbe: {{port: {}}}` under `manager:`",
                        chart.health_port
                    ));
                }
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
	IMG="$(IMG)"; $(HELM) upgrade --install $(HELM_RELEASE) $(HELM_CHART_DIR) \
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
