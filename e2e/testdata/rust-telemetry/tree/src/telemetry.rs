/*
Copyright 2026 The Guestbook Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

//! Telemetry (telemetry.opbuilder.io/v1-alpha): OpenTelemetry traces of the reconciles, of the
//! Kubernetes API calls they make and of the admission webhooks, exported over OTLP; the trace id
//! on the log lines of a reconcile and as an exemplar on `controller_runtime_reconcile_time_seconds`;
//! and the log level changed at run time through the metrics server (`/debug/loglevel`).
//!
//! The standard OpenTelemetry environment variables configure the traces: with neither
//! OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT set (or with
//! OTEL_SDK_DISABLED=true) nothing is traced and nothing exported: the logs are as without this
//! module. Spans go to the endpoint over OTLP/HTTP with protobuf (`<endpoint>/v1/traces`, port
//! 4318 by convention) in batches; OTEL_SERVICE_NAME (default: the project's name),
//! OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG), OTEL_EXPORTER_OTLP_HEADERS and
//! OTEL_EXPORTER_OTLP_TIMEOUT are read as the specification says. Only `http/protobuf` is built
//! in: another OTEL_EXPORTER_OTLP_PROTOCOL is an error at start. An `https://` endpoint is
//! reached over TLS: the collector's certificate is checked against OTEL_EXPORTER_OTLP_CERTIFICATE
//! (a PEM file of its CA) or else the system's roots, and OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE
//! with OTEL_EXPORTER_OTLP_CLIENT_KEY give the manager's own certificate for mutual TLS (each
//! also as OTEL_EXPORTER_OTLP_TRACES_*).

use crate::manager::{LogFormat, colour, log_filter};
use crate::server::{self, Access, Reply};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use opentelemetry::trace::{TraceContextExt, TracerProvider};
use opentelemetry_http::HttpClient;
use opentelemetry_http::hyper::HyperClient;
use opentelemetry_sdk::trace::SdkTracerProvider;
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry, filter, reload};

/// The path of the log level on the metrics server: GET reads the log filter, PUT sets it (the
/// body: a level or a RUST_LOG directive, as `--zap-log-level` takes it).
pub const LOG_LEVEL_PATH: &str = "/debug/loglevel";

/// The largest log filter a PUT may send.
const MAX_FILTER: usize = 4096;

/// The reconcile-time histogram: each bucket keeps the trace id of its last traced reconcile.
pub type Durations = HistogramWithExemplars<Vec<(String, String)>>;

/// The log filter in force, changed through [`LOG_LEVEL_PATH`].
struct LogLevel {
    handle: reload::Handle<EnvFilter, Registry>,
    current: std::sync::Mutex<String>,
}

static LOG_LEVEL: OnceLock<LogLevel> = OnceLock::new();

/// The traces' exporter, flushed when the manager stops (dropped at the end of main).
#[must_use = "dropping it stops the export of traces"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            tracing::warn!(%error, "the last traces were not exported");
        }
    }
}

/// Whether the environment (`var`) names an OTLP endpoint for traces and does not disable the
/// SDK.
fn tracing_on(var: impl Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| var(name).is_some_and(|v| !v.trim().is_empty());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && (set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || set("OTEL_EXPORTER_OTLP_ENDPOINT"))
}

/// The tracer provider exporting to the OTLP endpoint of the environment.
fn provider() -> anyhow::Result<SdkTracerProvider> {
    use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig, WithHttpConfig};
    for var in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Ok(protocol) = std::env::var(var)
            && protocol.trim() != "http/protobuf"
        {
            anyhow::bail!(
                "{var}={protocol:?}: this manager exports traces over http/protobuf only; for example: {var}=http/protobuf"
            );
        }
    }
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(http_client(&|name| std::env::var(name).ok())?)
        .build()?;
    let mut resource = opentelemetry_sdk::Resource::builder();
    if std::env::var("OTEL_SERVICE_NAME").is_err() {
        resource = resource.with_service_name(env!("CARGO_PKG_NAME"));
    }
    // Batches exported from a task of the manager's runtime (the HTTP client is tokio's).
    let batches =
        opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor::builder(
            exporter,
            opentelemetry_sdk::runtime::Tokio,
        )
        .build();
    Ok(SdkTracerProvider::builder()
        .with_span_processor(batches)
        .with_resource(resource.build())
        .build())
}

/// `OTEL_EXPORTER_OTLP_TRACES_<name>` when set, else `OTEL_EXPORTER_OTLP_<name>`, as the
/// specification orders them: the variable's name and its value.
fn otlp_var(var: &impl Fn(&str) -> Option<String>, name: &str) -> Option<(String, String)> {
    [
        format!("OTEL_EXPORTER_OTLP_TRACES_{name}"),
        format!("OTEL_EXPORTER_OTLP_{name}"),
    ]
    .into_iter()
    .find_map(|v| {
        var(&v)
            .filter(|value| !value.trim().is_empty())
            .map(|value| (v, value))
    })
}

/// How long one export may take: OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT in milliseconds, else 10 s.
fn export_timeout(var: &impl Fn(&str) -> Option<String>) -> anyhow::Result<Duration> {
    let Some((name, value)) = otlp_var(var, "TIMEOUT") else {
        return Ok(Duration::from_secs(10));
    };
    value
        .trim()
        .parse()
        .map(Duration::from_millis)
        .map_err(|_| {
            anyhow::anyhow!(
                "{name}={value:?}: a whole number of milliseconds; for example: {name}=10000"
            )
        })
}

/// The certificates of the PEM file `path`, named by the variable `name`.
fn pem_certificates(name: &str, path: &str) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certificates = CertificateDer::pem_file_iter(path)
        .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            anyhow::anyhow!(
                "{name}={path:?}: {e}; it names a PEM file, for example: {name}=/etc/otel/ca.crt"
            )
        })?;
    if certificates.is_empty() {
        anyhow::bail!(
            "{name}={path:?}: the file holds no PEM certificate; for example: {name}=/etc/otel/ca.crt"
        );
    }
    Ok(certificates)
}

/// The TLS of an `https://` endpoint: the collector's certificate checked against the CA of
/// OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE, else against the system's roots; the manager's own
/// certificate and key, for mutual TLS, from OTEL_EXPORTER_OTLP_(TRACES_)CLIENT_CERTIFICATE and
/// OTEL_EXPORTER_OTLP_(TRACES_)CLIENT_KEY.
fn tls_config(var: &impl Fn(&str) -> Option<String>) -> anyhow::Result<rustls::ClientConfig> {
    let builder = rustls::ClientConfig::builder();
    let builder = match otlp_var(var, "CERTIFICATE") {
        Some((name, path)) => {
            let mut roots = rustls::RootCertStore::empty();
            for certificate in pem_certificates(&name, &path)? {
                roots
                    .add(certificate)
                    .map_err(|e| anyhow::anyhow!("{name}={path:?}: {e}"))?;
            }
            builder.with_root_certificates(roots)
        }
        None => {
            use rustls_platform_verifier::BuilderVerifierExt;
            builder.with_platform_verifier()?
        }
    };
    match (
        otlp_var(var, "CLIENT_CERTIFICATE"),
        otlp_var(var, "CLIENT_KEY"),
    ) {
        (None, None) => Ok(builder.with_no_client_auth()),
        (Some((cert_name, cert)), Some((key_name, key_path))) => {
            let chain = pem_certificates(&cert_name, &cert)?;
            let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| {
                anyhow::anyhow!(
                    "{key_name}={key_path:?}: {e}; it names the PEM file of the key of {cert_name}"
                )
            })?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                anyhow::anyhow!("{cert_name}={cert:?} and {key_name}={key_path:?}: {e}")
            })
        }
        (Some((set, _)), None) | (None, Some((set, _))) => anyhow::bail!(
            "{set} is set alone: mutual TLS needs both OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (PEM files)"
        ),
    }
}

/// The exporter's HTTP client: hyper's, over TLS for an `https://` endpoint ([`tls_config`]), with
/// the export timeout of the environment.
fn http_client(var: &impl Fn(&str) -> Option<String>) -> anyhow::Result<impl HttpClient + 'static> {
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls_config(var)?)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(HyperClient::new(connector, export_timeout(var)?, None))
}

/// What is traced: the spans of this crate (reconciles, webhooks) and, under them, those of
/// kube's client (one per API call); not the client's calls outside them (watches, leader
/// election), nor kube-runtime's own span around each reconcile (ours is the trace's root).
fn traced(
    metadata: &tracing::Metadata<'_>,
    cx: &tracing_subscriber::layer::Context<'_, Registry>,
) -> bool {
    let target = metadata.target();
    if target.starts_with("kube_client") {
        return metadata.is_span() && cx.lookup_current().is_some();
    }
    !target.starts_with("kube_runtime") && *metadata.level() <= tracing::Level::INFO
}

/// Log to stderr as `--zap-encoder` and `--zap-log-level` say (else RUST_LOG, else info), with a
/// log filter that [`LOG_LEVEL_PATH`] changes; and, when an OTLP endpoint is configured, trace.
pub fn init(format: LogFormat, level: Option<&str>) -> anyhow::Result<Telemetry> {
    use std::io::IsTerminal;
    let directive = match level {
        Some(level) => log_filter(level),
        None => std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
    };
    let filter = EnvFilter::try_new(&directive)
        .map_err(|e| anyhow::anyhow!("--zap-log-level {directive:?}: {e}; for example: info"))?;
    let (filter, handle) = reload::Layer::new(filter);
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match format {
        LogFormat::Json => logs.json().boxed(),
        LogFormat::Console => {
            let ansi = colour(
                std::io::stderr().is_terminal(),
                std::env::var_os("NO_COLOR").as_deref(),
            );
            logs.with_ansi(ansi).boxed()
        }
    };
    let provider = if tracing_on(|name| std::env::var(name).ok()) {
        Some(provider()?)
    } else {
        None
    };
    let mut layers: Vec<Box<dyn Layer<Registry> + Send + Sync>> =
        vec![logs.with_filter(filter).boxed()];
    if let Some(provider) = &provider {
        let traces = tracing_opentelemetry::layer()
            .with_tracer(provider.tracer(env!("CARGO_PKG_NAME")))
            .with_filter(filter::dynamic_filter_fn(traced));
        layers.push(traces.boxed());
    }
    tracing_subscriber::registry().with(layers).try_init()?;
    let _ = LOG_LEVEL.set(LogLevel {
        handle,
        current: std::sync::Mutex::new(directive),
    });
    if provider.is_some() {
        tracing::info!("exporting traces over OTLP");
    }
    Ok(Telemetry { provider })
}

/// The trace id of the current span, when it is traced.
fn trace_id() -> Option<String> {
    let context = tracing::Span::current().context();
    let span = context.span();
    let span = span.span_context();
    (span.is_valid() && span.is_sampled()).then(|| span.trace_id().to_string())
}

/// A reconcile starts in the current span: its trace id goes on the span's `trace_id` field,
/// which its log lines show.
pub fn reconciling() {
    if let Some(id) = trace_id() {
        tracing::Span::current().record("trace_id", tracing::field::display(id));
    }
}

/// The reconcile of the current span ended with `result`, the `result` label of its metrics:
/// the span's `reconcile.result` is `success`, `requeue` (also for `requeue_after`) or `error`,
/// which is the span's status too.
pub fn reconciled(result: &str) {
    let result = match result {
        "requeue_after" => "requeue",
        other => other,
    };
    let span = tracing::Span::current();
    span.record("reconcile.result", result);
    if result == "error" {
        span.set_status(opentelemetry::trace::Status::error("the reconcile failed"));
    }
    tracing::debug!(result, "reconciled");
}

/// The exemplar of a reconcile's time: the trace id of the current span, when it is traced.
pub fn exemplar() -> Option<Vec<(String, String)>> {
    trace_id().map(|id| vec![("trace_id".to_string(), id)])
}

/// The span of a webhook request, `webhook <path>` (a server span: the webhook's path, the
/// method, and once [`answered`], the status code). When the API server traces its requests
/// (its `--tracing-config-file`) and sends a W3C `traceparent`, the span is a child of the API
/// server's, in the same trace.
pub fn webhook_span<B>(request: &Request<B>) -> tracing::Span {
    use opentelemetry::propagation::TextMapPropagator;
    let path = request.uri().path();
    let span = tracing::info_span!(
        "webhook",
        otel.name = format!("webhook {path}"),
        otel.kind = "server",
        webhook.path = path,
        http.request.method = %request.method(),
        http.response.status_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    let caller = opentelemetry_sdk::propagation::TraceContextPropagator::new()
        .extract(&opentelemetry_http::HeaderExtractor(request.headers()));
    if caller.span().span_context().is_valid() {
        // Without an exporter (no OTEL endpoint) there is no trace to join: nothing to do.
        let _ = span.set_parent(caller);
    }
    span
}

/// `answer`, the reply to a webhook request, in the request's `span`.
pub async fn answered(span: tracing::Span, answer: impl Future<Output = Reply>) -> Reply {
    let reply = answer.instrument(span.clone()).await;
    span.record(
        "http.response.status_code",
        i64::from(reply.status().as_u16()),
    );
    if reply.status().is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
    reply
}

/// The level a PUT to [`LOG_LEVEL_PATH`] asks for: `{"level": "debug"}` (as go/v4's manager
/// takes it), or the level alone.
fn asked_level(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Asked {
        level: String,
    }
    match serde_json::from_slice::<Asked>(body) {
        Ok(asked) => asked.level,
        Err(_) => String::from_utf8_lossy(body).trim().to_string(),
    }
}

/// [`LOG_LEVEL_PATH`]: GET the log filter, PUT a new one (`{"level": "debug"}`), for whoever
/// `access` lets in: as /metrics, a token the API server authenticates, allowed to `get` (to read)
/// or `put` (to change) this path (config/rbac/loglevel_editor_role.yaml). Both answer
/// `{"level": "<the filter in force>"}`.
pub async fn log_level(request: Request<Incoming>, access: &Access) -> Reply {
    let text = |status, body: String| server::reply(status, "text/plain; charset=utf-8", body);
    let level_json = |level: &str| {
        let body = serde_json::json!({ "level": level }).to_string();
        server::reply(StatusCode::OK, "application/json", format!("{body}\n"))
    };
    if request.method() != Method::GET && request.method() != Method::PUT {
        return server::not_allowed("GET, PUT");
    }
    if let Access::Reviewed(reviewer) = access
        && let Err(refused) = reviewer
            .authorize(request.method(), LOG_LEVEL_PATH, request.headers())
            .await
    {
        return refused;
    }
    let Some(level) = LOG_LEVEL.get() else {
        return text(StatusCode::NOT_FOUND, "no log level here\n".into());
    };
    if request.method() == Method::GET {
        let current = level.current.lock().unwrap_or_else(|e| e.into_inner());
        return level_json(&current);
    }
    let body = match Limited::new(request.into_body(), MAX_FILTER)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) => return text(StatusCode::BAD_REQUEST, format!("reading the level: {e}\n")),
    };
    let asked = asked_level(&body);
    let directive = log_filter(&asked);
    let filter = match EnvFilter::try_new(&directive) {
        Ok(filter) if !asked.is_empty() => filter,
        Ok(_) => {
            return text(
                StatusCode::BAD_REQUEST,
                "no level: for example, debug\n".into(),
            );
        }
        Err(e) => {
            return text(
                StatusCode::BAD_REQUEST,
                format!("{asked:?}: {e}; for example: debug, info or info,kube=debug\n"),
            );
        }
    };
    if let Err(e) = level.handle.reload(filter) {
        return text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n"));
    }
    tracing::info!(level = %directive, "log level changed");
    *level.current.lock().unwrap_or_else(|e| e.into_inner()) = directive.clone();
    level_json(&directive)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn nothing_is_traced_without_an_endpoint_or_with_the_sdk_disabled() {
        assert!(!tracing_on(env(&[])));
        assert!(!tracing_on(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        assert!(!tracing_on(env(&[("OTEL_SERVICE_NAME", "guestbook")])));
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        assert!(tracing_on(env(&[endpoint])));
        let traces = (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://collector:4318/v1/traces",
        );
        assert!(tracing_on(env(&[traces])));
        assert!(!tracing_on(env(&[endpoint, ("OTEL_SDK_DISABLED", "true")])));
    }

    #[test]
    fn the_traces_own_variable_comes_first_and_the_timeout_is_in_milliseconds() {
        let both = env(&[
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "500"),
        ]);
        assert_eq!(export_timeout(&both).unwrap(), Duration::from_millis(500));
        let general = env(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")]);
        assert_eq!(export_timeout(&general).unwrap(), Duration::from_secs(2));
        assert_eq!(export_timeout(&env(&[])).unwrap(), Duration::from_secs(10));
        let bad = export_timeout(&env(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "10s")])).unwrap_err();
        assert!(
            bad.to_string()
                .contains("OTEL_EXPORTER_OTLP_TIMEOUT=\"10s\""),
            "{bad}"
        );
    }

    #[test]
    fn tls_settings_that_cannot_work_stop_the_manager_naming_the_variable() {
        let missing = tls_config(&env(&[(
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
            "/nonexistent/ca.crt",
        )]))
        .unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("OTEL_EXPORTER_OTLP_CERTIFICATE=\"/nonexistent/ca.crt\""),
            "{missing}"
        );
        let alone = tls_config(&env(&[(
            "OTEL_EXPORTER_OTLP_CLIENT_KEY",
            "/etc/otel/client.key",
        )]))
        .unwrap_err();
        assert!(
            alone
                .to_string()
                .contains("OTEL_EXPORTER_OTLP_CLIENT_KEY is set alone"),
            "{alone}"
        );
        // Without a variable: the system's roots, no client certificate.
        tls_config(&env(&[])).unwrap();
    }

    #[test]
    fn a_webhook_span_joins_the_trace_of_the_api_servers_traceparent() {
        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let request = |traceparent: Option<&str>| {
            let mut request = Request::post("/mutate-webapp-example-com-v1-guestbook");
            if let Some(traceparent) = traceparent {
                request = request.header("traceparent", traceparent);
            }
            request.body(()).unwrap()
        };
        tracing::subscriber::with_default(subscriber, || {
            let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
            let span = webhook_span(&request(Some(traceparent)));
            let context = span.context();
            let joined = context.span().span_context().trace_id();
            assert_eq!(joined.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
            // Without one, a trace of its own.
            let span = webhook_span(&request(None));
            let context = span.context();
            let own = context.span().span_context().trace_id();
            assert_ne!(own.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
            assert!(context.span().span_context().is_valid());
        });
    }

    #[test]
    fn a_level_is_asked_as_json_or_alone() {
        assert_eq!(asked_level(br#"{"level":"debug"}"#), "debug");
        assert_eq!(asked_level(b"info,kube=debug\n"), "info,kube=debug");
    }

    #[test]
    fn without_a_span_there_is_no_exemplar() {
        assert_eq!(exemplar(), None);
    }
}
