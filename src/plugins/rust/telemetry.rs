//! The Rust layout's part of telemetry.opbuilder.io/v1-alpha (src/plugins/telemetry.rs): the
//! module src/telemetry.rs (`scaffolds/rust/telemetry/`), which the manager's logging, metrics,
//! metrics server and webhook server call, and a span around every controller's reconcile.
//!
//! Each change to a file the layout wrote is a line inserted or replaced, so that `edit` adds
//! the plugin to a project as `init` does, reporting any line the user changed since:
//!   - Cargo.toml: the OpenTelemetry crates (versions.toml [rust]);
//!   - src/lib.rs: the module;
//!   - src/main.rs: `telemetry::init` in place of `manager::init_logging` (the same flags; its
//!     result, kept until main returns, flushes the traces at the end);
//!   - src/manager.rs: the reconcile-time histogram with exemplars, the trace id and the result
//!     recorded on the reconcile's span when a reconciliation starts and finishes;
//!   - src/server.rs: `/debug/loglevel` on the metrics server, behind the metrics' access;
//!   - src/webhook.rs: a span per webhook request;
//!   - src/controllers/<kind>.rs: `#[tracing::instrument]` on `reconcile`, now and for every
//!     later `create api` (the span `reconcile <controller>`: controller, namespace, name,
//!     result, trace id).

use super::context::RustProjectCtx;
use crate::context::ProjectCtx;
use crate::plan::{Edit, IfExists, Op};
use crate::planning::plugin::Cx;
use crate::templates;
use anyhow::Result;
use std::path::Path;

const CARGO: &str = "Cargo.toml";
const LIB: &str = "src/lib.rs";
const MAIN: &str = "src/main.rs";
const MANAGER: &str = "src/manager.rs";
const SERVER: &str = "src/server.rs";
const WEBHOOK: &str = "src/webhook.rs";
const CONTROLLERS: &str = "src/controllers";
const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";

/// The ClusterRole of the log-level endpoint, go/v4's (`scaffolds/telemetry/`).
const LOG_LEVEL_ROLE: &str = "config/rbac/loglevel_editor_role.yaml";
const METRICS_READER_ENTRY: &str = "- metrics_reader_role.yaml";

/// The start of the line of a controller module above which the span goes:
/// `pub async fn reconcile(<object>: Arc<...`.
const RECONCILE: &str = "pub async fn reconcile(";

/// The start of the span's attribute, which says a reconcile has it already.
const INSTRUMENTED: &str = "#[tracing::instrument(name = \"reconcile\"";

/// The object argument of a `reconcile` line (`obj` in the scaffold; `app` in the tutorial).
fn object_argument(line: &str) -> Option<&str> {
    let (name, rest) = line.strip_prefix(RECONCILE)?.split_once(':')?;
    let name = name.trim();
    let ident = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident && rest.trim_start().starts_with("Arc<")).then_some(name)
}

/// The span of a reconcile whose object is the argument `obj`: `reconcile <controller>` (NAME,
/// the controller's name in its module), and the fields of its attributes.
fn instrument(obj: &str) -> String {
    format!(
        "{INSTRUMENTED}, skip_all, fields(otel.name = format!(\"reconcile {{NAME}}\"), controller = NAME, \
         k8s.namespace.name = kube::ResourceExt::namespace({obj}.as_ref()), \
         k8s.object.name = kube::ResourceExt::name_any({obj}.as_ref()), reconcile.result, trace_id))]"
    )
}

/// The lines replaced, and what replaces each (file, line, text).
const REPLACED: &[(&str, &str, &str)] = &[
    (
        MANAGER,
        "fn time_histogram() -> Histogram {",
        "fn time_histogram() -> Durations {",
    ),
    (
        MANAGER,
        "Histogram::new(TIME_BUCKETS)",
        "Durations::new(TIME_BUCKETS.into_iter())",
    ),
    (
        MANAGER,
        "times: Family<Labels, Histogram, fn() -> Histogram>,",
        "times: Family<Labels, Durations, fn() -> Durations>,",
    ),
    (
        MANAGER,
        "Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(time_histogram);",
        "Family::<Labels, Durations, fn() -> Durations>::new_with_constructor(time_histogram);",
    ),
    (
        MANAGER,
        ".observe(seconds);",
        ".observe(seconds, exemplar(), None);",
    ),
    (
        MAIN,
        "manager::init_logging(flags.zap_encoder, flags.zap_log_level.as_deref())?;",
        "let _telemetry = telemetry::init(flags.zap_encoder, flags.zap_log_level.as_deref())?;",
    ),
    (
        WEBHOOK,
        "let handler = move |request| respond(request, routes.clone(), cluster.clone());",
        "let handler = move |request| {
    let span = crate::telemetry::webhook_span(&request);
    crate::telemetry::answered(span, respond(request, routes.clone(), cluster.clone()))
};",
    ),
];

/// The lines inserted after an anchor line (file, anchor, text).
const AFTER: &[(&str, &str, &str)] = &[
    (
        MANAGER,
        "pub fn start(&self, controller: &str) -> Reconciliation<'_> {",
        "        crate::telemetry::reconciling();",
    ),
    (
        MANAGER,
        "pub fn finish<E>(self, result: &Result<Action, E>) {",
        "        crate::telemetry::reconciled(result_label(result));",
    ),
    (
        SERVER,
        "pub async fn metrics(request: Request<Incoming>, metrics: Arc<Metrics>, access: Access) -> Reply {",
        "    if request.uri().path() == crate::telemetry::LOG_LEVEL_PATH {
        return crate::telemetry::log_level(request, &access).await;
    }",
    ),
];

/// The Cargo dependencies, after the last one the layout writes.
fn dependencies() -> (String, String) {
    let v = &crate::versions::pins().rust;
    (
        format!("socket2 = \"{}\"", v.socket2),
        format!(
            "# Traces (telemetry.opbuilder.io/v1-alpha, src/telemetry.rs): OpenTelemetry's API and SDK,
# its OTLP exporter over HTTP/protobuf on hyper's client (which the manager has already), and
# the bridge from tracing's spans. An https:// collector over rustls, as kube reaches the API
# server: hyper-rustls and the system's roots (the same crates kube builds).
opentelemetry = {{ version = \"{otel}\", default-features = false, features = [\"trace\"] }}
opentelemetry_sdk = {{ version = \"{sdk}\", default-features = false, features = [\"trace\", \"rt-tokio\", \"experimental_trace_batch_span_processor_with_async_runtime\"] }}
opentelemetry-otlp = {{ version = \"{otlp}\", default-features = false, features = [\"trace\", \"http-proto\"] }}
opentelemetry-http = {{ version = \"{otel_http}\", default-features = false, features = [\"hyper\"] }}
hyper-rustls = {{ version = \"{hyper_rustls}\", default-features = false, features = [\"http1\", \"ring\", \"tls12\"] }}
rustls-platform-verifier = \"{verifier}\"
tracing-opentelemetry = {{ version = \"{bridge}\", default-features = false }}",
            otel = v.opentelemetry,
            sdk = v.opentelemetry_sdk,
            otlp = v.opentelemetry_otlp,
            otel_http = v.opentelemetry_http,
            hyper_rustls = v.hyper_rustls,
            verifier = v.rustls_platform_verifier,
            bridge = v.tracing_opentelemetry,
        ),
    )
}

/// `init` and `edit` of a Rust project: the module, the RBAC of its log-level endpoint, the
/// changes to the layout's files, and the span on the reconcile of every controller there is.
/// `boilerplate`: the license header of `init` (whose file is only planned yet); `None` reads
/// the project's.
pub fn enable(cx: &mut Cx, boilerplate: Option<&str>) -> Result<()> {
    let pctx = match boilerplate {
        Some(b) => ProjectCtx::new(cx.project, Some(b.to_string())),
        None => ProjectCtx::load(cx.root, cx.project)?,
    };
    let ctx = RustProjectCtx {
        project: pctx.clone(),
        ..RustProjectCtx::new(cx.project, None)
    };
    for f in templates::render_tree("rust/telemetry", &ctx, |_| true)? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    for f in templates::render_tree("telemetry", &pctx, |t| t == LOG_LEVEL_ROLE)? {
        cx.plan.create(f.path, f.content, IfExists::Skip);
    }
    // Beside metrics-reader, whose access it shares (wherever the plugin comes, before or after
    // the kinds' roles, as `alpha generate` replays it right after `init`); at the end when
    // that entry is gone.
    let text = crate::plugins::telemetry::RBAC_ENTRIES.to_string();
    let rbac = std::fs::read_to_string(cx.root.join(RBAC_KUSTOMIZATION)).ok();
    let edit = match rbac {
        Some(r) if !r.lines().any(|l| l.trim() == METRICS_READER_ENTRY) => Edit::Append { text },
        _ => Edit::AfterLine {
            anchor: METRICS_READER_ENTRY.into(),
            text,
        },
    };
    cx.plan.update(RBAC_KUSTOMIZATION, edit);
    let (anchor, text) = dependencies();
    cx.plan.update(CARGO, Edit::AfterLine { anchor, text });
    cx.plan.update(
        LIB,
        Edit::BeforeLine {
            anchor: "pub mod tls;".into(),
            text: "pub mod telemetry;".into(),
        },
    );
    cx.plan.update(
        MAIN,
        Edit::BeforeLine {
            anchor: format!("use {}::tls::{{CertFiles, Certificate}};", ctx.lib_name),
            text: format!("use {}::telemetry;", ctx.lib_name),
        },
    );
    cx.plan.update(
        MANAGER,
        Edit::BeforeLine {
            anchor: "use futures::{FutureExt, Stream, StreamExt};".into(),
            text: "use crate::telemetry::{Durations, exemplar};".into(),
        },
    );
    for (file, anchor, text) in AFTER {
        cx.plan.update(
            *file,
            Edit::AfterLine {
                anchor: (*anchor).into(),
                text: (*text).into(),
            },
        );
    }
    for (file, line, text) in REPLACED {
        cx.plan.update(
            *file,
            Edit::ReplaceLine {
                line: (*line).into(),
                text: (*text).into(),
            },
        );
    }
    // The controllers there are already (edit): their reconcile, as the file has it now.
    for (path, line) in controllers_on_disk(cx.root)? {
        match object_argument(&line) {
            Some(obj) => cx.plan.update(
                path,
                Edit::BeforeLine {
                    text: instrument(obj),
                    anchor: line,
                },
            ),
            None => cx.notes.push(format!(
                "{path}: its reconcile does not take the object as `<name>: Arc<Kind>` first: put the span \
                 above it by hand, naming the object's argument:\n  {}",
                instrument("obj")
            )),
        }
    }
    trace_planned_controllers(cx);
    Ok(())
}

/// The controller modules under src/controllers and the line of each that declares
/// `reconcile`, for those that have one.
fn controllers_on_disk(root: &Path) -> Result<Vec<(String, String)>> {
    let dir = root.join(CONTROLLERS);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(vec![]);
    };
    let mut found = vec![];
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.ends_with(".rs") || name == "mod.rs" {
            continue;
        }
        let content = std::fs::read_to_string(entry.path())?;
        if content.contains(INSTRUMENTED) {
            continue;
        }
        if let Some(line) = content.lines().find(|l| l.starts_with(RECONCILE)) {
            found.push((format!("{CONTROLLERS}/{name}"), line.to_string()));
        }
    }
    found.sort();
    Ok(found)
}

/// The reconcile of each controller this plan creates (`create api` after the plugin, or
/// `init` with it), with its span.
pub fn trace_planned_controllers(cx: &mut Cx) {
    for op in &mut cx.plan.ops {
        let Op::Create { path, content, .. } = op else {
            continue;
        };
        if !path.starts_with(CONTROLLERS) || path.ends_with("mod.rs") {
            continue;
        }
        if let Some(traced) = instrumented(content) {
            *content = traced;
        }
    }
}

/// `content` with the span above its `reconcile`; `None` when it has none, or has it already.
fn instrumented(content: &str) -> Option<String> {
    if content.contains(INSTRUMENTED) {
        return None;
    }
    let at = content
        .match_indices(RECONCILE)
        .map(|(at, _)| at)
        .find(|&at| at == 0 || content[..at].ends_with('\n'))?;
    let line = content[at..].lines().next()?;
    let span = instrument(object_argument(line)?);
    Some(format!("{}{span}\n{}", &content[..at], &content[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_goes_above_reconcile_once() {
        let module = "use x;\n\n/// Reconcile.\npub async fn reconcile(obj: Arc<Guestbook>, ctx: Arc<Context>) -> R {\n}\n";
        let traced = instrumented(module).expect("a reconcile to trace");
        assert_eq!(
            traced,
            format!(
                "use x;\n\n/// Reconcile.\n{}\npub async fn reconcile(obj: Arc<Guestbook>, ctx: Arc<Context>) -> R {{\n}}\n",
                instrument("obj")
            )
        );
        assert_eq!(instrumented(&traced), None);
        assert_eq!(instrumented("fn other() {}\n"), None);
    }

    #[test]
    fn the_span_names_the_object_argument_of_reconcile() {
        let line =
            "pub async fn reconcile(app: Arc<App>, ctx: Arc<Context>) -> Result<Action, Error> {";
        assert_eq!(object_argument(line), Some("app"));
        assert!(instrument("app").contains("namespace(app.as_ref())"));
        assert_eq!(
            object_argument("pub async fn reconcile(ctx: Context) {"),
            None
        );
        assert_eq!(object_argument("pub async fn reconcile() {"), None);
    }
}
