//! telemetry.opbuilder.io/v1-alpha: opt-in OpenTelemetry traces for the manager (issue 49). A
//! span per reconcile (the object's key, its result, the Kubernetes API calls made under it), a
//! span per admission or conversion webhook call, the trace id on the reconcile's log lines and
//! as an exemplar of a reconcile-duration histogram, and a log level changed at run time through
//! an endpoint of the metrics server, behind the same authentication and authorization as
//! /metrics. Tracing is configured by the standard OTEL_* environment variables only: without an
//! OTLP endpoint nothing is exported and nothing is wrapped.
//!
//! On `init` or `edit` it adds the package internal/telemetry (go/v4: `scaffolds/telemetry/`),
//! wires it into cmd/main.go, wraps every controller's reconciler, pins the OpenTelemetry modules
//! in go.mod and adds a ClusterRole for the log-level endpoint. It is recorded under PROJECT's
//! `plugins:` (not in `layout`) and joins every later `create api`, whose controller it wraps.
//! In the Rust layout (`rust_part`, src/plugins/rust/telemetry.rs) it adds src/telemetry.rs,
//! wires it into the manager, and puts a span on every controller's reconcile.
//! Kubebuilder has no such plugin.

use super::rust;
use crate::context::ProjectCtx;
use crate::markers::go::imports::{insert_go_imports, ImportSpec};
use crate::plan::{Edit, IfExists, Op};
use crate::planning::api::ResolvedResource;
use crate::planning::delete::Undo;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::templates;
use crate::versions;
use anyhow::{anyhow, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub const NAME: &str = "telemetry.opbuilder.io";
pub const KEY: &str = "telemetry.opbuilder.io/v1-alpha";

pub struct Telemetry;

/// The plugin's PROJECT section: empty (`{}`); its presence keeps the plugin on.
#[derive(Serialize)]
struct Section {}

const MAIN: &str = "cmd/main.go";
const GO_MOD: &str = "go.mod";
const CONTROLLERS: &str = "internal/controller";
const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";
const METRICS_READER: &str = "config/rbac/metrics_reader_role.yaml";

/// The entry of the log-level endpoint's ClusterRole in config/rbac (both layouts).
pub(crate) const RBAC_ENTRIES: &str =
    "# Who may read and change the manager's log level at run time
# (telemetry.opbuilder.io/v1-alpha): bind loglevel-editor to them.
- loglevel_editor_role.yaml";

/// The call that says cmd/main.go is wired already.
const WIRED: &str = "telemetry.Setup(mgr,";

/// The layout's part of `init` and `edit`. `boilerplate`: the license header of `init` (whose
/// file is only planned yet); `None` reads the project's.
fn enable(cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
    if cx.project.rust_layout().is_some() {
        return rust_part(cx, boilerplate);
    }
    go_part(cx, boilerplate)
}

/// The Rust layout's part (rust.opbuilder.io/v1-beta): src/telemetry.rs and its wiring
/// (src/plugins/rust/telemetry.rs).
fn rust_part(cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
    cx.project.set_plugin_config(KEY, &Section {})?;
    rust::telemetry::enable(cx, boilerplate)
}

/// The note after `init` or `edit`: what to do next, in the project's layout.
fn wired_note(cx: &Cx, go: &str) -> String {
    if cx.project.rust_layout().is_some() {
        "Telemetry is wired in (src/telemetry.rs, the manager, every controller's reconcile) and off until \
         OTEL_EXPORTER_OTLP_ENDPOINT is set on the manager; docs/commands.md, \"Telemetry in the Rust layout\"."
            .into()
    } else {
        go.into()
    }
}

fn go_part(cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
    cx.project.set_plugin_config(KEY, &Section {})?;
    let ctx = match boilerplate {
        Some(b) => ProjectCtx::new(cx.project, Some(b.to_string())),
        None => ProjectCtx::load(cx.root, cx.project)?,
    };
    for f in templates::render_tree("telemetry", &ctx, |_| true)? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    let v = &versions::pins().scaffold;
    cx.plan.update(
        GO_MOD,
        Edit::Append {
            text: format!(
                "\n// OpenTelemetry (telemetry.opbuilder.io/v1-alpha): internal/telemetry\nrequire (\n\
                 \tgo.opentelemetry.io/contrib/instrumentation/net/http/otelhttp {c}\n\
                 \tgo.opentelemetry.io/otel {o}\n\
                 \tgo.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp {o}\n\
                 \tgo.opentelemetry.io/otel/sdk {o}\n\
                 \tgo.opentelemetry.io/otel/trace {o}\n)",
                o = v.otel,
                c = v.otel_contrib
            ),
        },
    );
    cx.plan.update(
        RBAC_KUSTOMIZATION,
        Edit::Append {
            text: RBAC_ENTRIES.into(),
        },
    );
    cx.plan.update(
        METRICS_READER,
        Edit::AfterLine {
            anchor: "  - \"/metrics\"".into(),
            text: "  - \"/metrics/openmetrics\"".into(),
        },
    );
    let module = cx.project.repo.clone();
    let name = cx.project.project_name.clone();
    // cmd/main.go: planned by init, on disk for edit.
    if let Some(content) = cx.plan.created_mut(Path::new(MAIN)) {
        *content = wire_main(content, &module, &name)?;
    } else {
        let current = read(cx.root, MAIN)?;
        if !current.contains(WIRED) {
            let wired = wire_main(&current, &module, &name)?;
            cx.plan.create(MAIN, wired, IfExists::Overwrite);
        }
    }
    Ok(())
}

fn read(root: &Path, rel: &str) -> Result<String> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| anyhow!("{rel}: cannot read it ({e})"))
}

/// Replace the one line of `content` that `find` picks with `line` as `replace` rewrites it;
/// an error naming `what` when there is none.
fn replace_line(
    content: &str,
    file: &str,
    what: &str,
    find: impl Fn(&str) -> bool,
    replace: impl Fn(&str) -> String,
) -> Result<String> {
    let mut found = false;
    let mut out = String::with_capacity(content.len() + 128);
    for line in content.split_inclusive('\n') {
        let (text, nl) = line.strip_suffix('\n').map_or((line, ""), |t| (t, "\n"));
        if !found && find(text) {
            found = true;
            out.push_str(&replace(text));
        } else {
            out.push_str(text);
        }
        out.push_str(nl);
    }
    if !found {
        return Err(anyhow!(
            "{file}: expected {what}, which {KEY} wires into; add the telemetry by hand \
             (docs/commands.md, telemetry plugin, shows each line) or restore the line"
        ));
    }
    Ok(out)
}

fn with_import(content: &str, file: &str, module: &str) -> Result<String> {
    let spec = ImportSpec::new(None, &format!("{module}/internal/telemetry"));
    insert_go_imports(content, &[spec], module)
        .map(|(c, _)| c.into_owned())
        .map_err(|e| anyhow!("{file}: cannot add the import of internal/telemetry ({e:?})"))
}

/// cmd/main.go with the telemetry: the changeable log level, traced API calls and webhooks, and
/// telemetry.Setup once the manager exists.
fn wire_main(content: &str, module: &str, name: &str) -> Result<String> {
    let c = replace_line(
        content,
        MAIN,
        "the line ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))",
        |l| l.trim() == "ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))",
        |l| {
            let indent = &l[..l.len() - l.trim_start().len()];
            format!(
                "{indent}// The log level can change while the manager runs: see {path} in internal/telemetry.\n\
                 {indent}logLevel := telemetry.LogLevel(&opts)\n{l}",
                path = "LogLevelPath"
            )
        },
    )?;
    let c = replace_line(
        &c,
        MAIN,
        "the call ctrl.NewManager(ctrl.GetConfigOrDie(), ...)",
        |l| l.contains("ctrl.NewManager(ctrl.GetConfigOrDie(),"),
        |l| {
            l.replacen(
                "ctrl.GetConfigOrDie()",
                "telemetry.WrapConfig(ctrl.GetConfigOrDie())",
                1,
            )
        },
    )?;
    let c = replace_line(
        &c,
        MAIN,
        "the manager option WebhookServer: webhookServer",
        |l| {
            l.trim_start().starts_with("WebhookServer:")
                && l.trim_end().ends_with(" webhookServer,")
        },
        |l| {
            let cut = l.trim_end().len() - "webhookServer,".len();
            format!("{}telemetry.WebhookServer(webhookServer),", &l[..cut])
        },
    )?;
    let c = replace_line(
        &c,
        MAIN,
        "the health check mgr.AddHealthzCheck(\"healthz\", healthz.Ping)",
        |l| l.trim() == "if err := mgr.AddHealthzCheck(\"healthz\", healthz.Ping); err != nil {",
        |l| {
            let i = &l[..l.len() - l.trim_start().len()];
            format!(
                "{i}// Traces of reconciles, API calls and webhooks when the OTEL_* environment asks for them,\n\
                 {i}// the log-level endpoint and the OpenMetrics exposition (telemetry.opbuilder.io/v1-alpha).\n\
                 {i}if err := telemetry.Setup(mgr, {name:?}, logLevel); err != nil {{\n\
                 {i}\tsetupLog.Error(err, \"Failed to set up telemetry\")\n\
                 {i}\tos.Exit(1)\n\
                 {i}}}\n\n{l}"
            )
        },
    )?;
    with_import(&c, MAIN, module)
}

/// A controller's file with its reconciler wrapped in telemetry.Reconciler, named as the
/// controller (`Named("...")`); `None` when it has no `Complete(r)` to wrap or is wrapped already.
fn wrap_controller(content: &str, file: &str, module: &str) -> Result<Option<String>> {
    if content.contains("telemetry.Reconciler(") {
        return Ok(None);
    }
    let Some(name) = content
        .split("Named(\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
    else {
        return Ok(None);
    };
    if !content.lines().any(|l| l.trim() == "Complete(r)") {
        return Ok(None);
    }
    let c = replace_line(
        content,
        file,
        "Complete(r)",
        |l| l.trim() == "Complete(r)",
        |l| {
            l.replacen(
                "Complete(r)",
                &format!("Complete(telemetry.Reconciler({name:?}, r))"),
                1,
            )
        },
    )?;
    with_import(&c, file, module).map(Some)
}

/// The controllers' files under internal/controller (not their tests).
fn controller_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.join(CONTROLLERS)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let n = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                dirs.push(p);
            } else if n.ends_with(".go") && !n.ends_with("_test.go") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

impl Plugin for Telemetry {
    fn key(&self) -> &'static str {
        KEY
    }

    fn follows_project(&self) -> bool {
        true
    }

    fn joins_deletion(&self) -> bool {
        true
    }

    fn init(&self, cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
        enable(cx, boilerplate)?;
        let note = wired_note(
            cx,
            "Telemetry is wired in (internal/telemetry) and off until OTEL_EXPORTER_OTLP_ENDPOINT is set; \
             run go mod tidy for its modules.",
        );
        cx.notes.push(note);
        Ok(())
    }

    fn create_api(&self, cx: &mut Cx, _res: &ResolvedResource) -> Result<()> {
        if cx
            .project
            .plugin_config::<serde_yaml::Value>(KEY)?
            .is_none()
        {
            return Ok(());
        }
        if cx.project.rust_layout().is_some() {
            rust::telemetry::trace_planned_controllers(cx);
            return Ok(());
        }
        let module = cx.project.repo.clone();
        for op in &mut cx.plan.ops {
            if let Op::Create { path, content, .. } = op {
                let file = path.to_string_lossy().into_owned();
                if file.starts_with(CONTROLLERS) && file.ends_with("_controller.go") {
                    if let Some(wrapped) = wrap_controller(content, &file, &module)? {
                        *content = wrapped;
                    }
                }
            }
        }
        Ok(())
    }

    /// `delete api` compares the controller with what `create api` wrote: the wrapped one.
    fn delete_api(&self, cx: &mut Cx, res: &ResolvedResource, _undo: &mut Undo) -> Result<()> {
        self.create_api(cx, res)
    }

    fn edit(&self, cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        enable(cx, None)?;
        if cx.project.rust_layout().is_some() {
            let note = wired_note(cx, "");
            cx.notes.push(note);
            return Ok(());
        }
        let module = cx.project.repo.clone();
        for path in controller_files(cx.root) {
            let rel = path
                .strip_prefix(cx.root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let content = read(cx.root, &rel)?;
            if let Some(wrapped) = wrap_controller(&content, &rel, &module)? {
                cx.plan.create(rel, wrapped, IfExists::Overwrite);
            }
        }
        cx.notes.push(
            "Telemetry is wired in (internal/telemetry, cmd/main.go, every controller's Complete): run go mod tidy, \
             then set OTEL_EXPORTER_OTLP_ENDPOINT on the manager to export traces."
                .into(),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTROLLER: &str = "package controller\n\nimport (\n\t\"context\"\n\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n\tshipv1 \"example.com/harbor/api/v1\"\n)\n\nfunc (r *R) SetupWithManager(mgr ctrl.Manager) error {\n\treturn ctrl.NewControllerManagedBy(mgr).\n\t\tFor(&shipv1.Frigate{}).\n\t\tNamed(\"frigate\").\n\t\tComplete(r)\n}\n";

    #[test]
    fn wraps_a_controller_once() {
        let c = wrap_controller(CONTROLLER, "c.go", "example.com/harbor")
            .unwrap()
            .unwrap();
        assert!(
            c.contains("\t\tComplete(telemetry.Reconciler(\"frigate\", r))\n"),
            "{c}"
        );
        assert!(
            c.contains("\t\"example.com/harbor/internal/telemetry\"\n"),
            "{c}"
        );
        assert_eq!(
            wrap_controller(&c, "c.go", "example.com/harbor").unwrap(),
            None
        );
    }

    #[test]
    fn main_without_its_anchors_is_refused_by_name() {
        let err = wire_main("package main\n", "example.com/harbor", "harbor").unwrap_err();
        assert!(err.to_string().contains("ctrl.SetLogger"), "{err}");
    }
}
