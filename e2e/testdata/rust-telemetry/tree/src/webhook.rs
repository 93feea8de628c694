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

//! The webhook server: HTTPS on `--webhook-port` with the certificate in `--webhook-cert-path`
//! (tls.crt, tls.key, as cert-manager mounts them), read again when it changes, so a renewed
//! certificate is served without a restart. Each webhook is a path and an asynchronous handler,
//! which may read the cluster ([`Cluster`]); the webhooks themselves are in src/webhooks
//! (`opbuilder create webhook` adds them). The server bounds the connections, the TLS
//! handshake, the request head and an idle connection (see src/server.rs), the body's size and
//! the time it takes to arrive, and a handler's time; at shutdown it keeps answering for
//! [`SHUTDOWN_DELAY`] (the manager is unready by then), then answers the reviews under way
//! before it stops.

use crate::manager::Caches;
use crate::server::{self, Reply, Serving};
use crate::tls::{CertFiles, Certificate};
use futures::future::BoxFuture;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Bytes};
use hyper::{Method, Request, StatusCode};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kube::core::GroupVersionKind;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use kube::core::response::{Status, StatusCause, StatusDetails};
use kube::runtime::reflector::Store;
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::hash::Hash;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::time::timeout;

/// A handler: the body of a review request and what it may read of the cluster in, the body of
/// its response out. It runs on the manager's runtime beside everything else: await what takes
/// time (the API server), and hand long computations to `tokio::task::spawn_blocking`.
pub type Handler = fn(Bytes, Cluster) -> BoxFuture<'static, Vec<u8>>;

/// What a webhook may read of the cluster: the API server, as the manager's ServiceAccount
/// (`client`; what it reads needs a rule in the RBAC of the code, such as `rbac::MANAGER`), and
/// the objects the controllers keep in memory ([`Cluster::cached`]).
#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    caches: Caches,
}

impl Cluster {
    /// The cluster of `client`, with the controllers' `caches`.
    pub fn new(client: Client, caches: Caches) -> Cluster {
        Cluster { client, caches }
    }

    /// The objects of kind `K` a controller of this replica watches (those its watch selects:
    /// its namespace, its selectors), as fresh as the last change the watch delivered. `None`
    /// where no controller of this replica has listed them: on a standby replica (only the
    /// leader runs the controllers, every replica serves the webhooks), before the first list
    /// completes, and for a kind no controller watches; read them with `client` then.
    pub fn cached<K>(&self) -> Option<Store<K>>
    where
        K: Resource + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Send + Sync,
    {
        self.caches.get()
    }

    /// A cluster whose API server answers nothing (every request fails) and without caches,
    /// for the unit tests of handlers.
    #[cfg(test)]
    pub fn offline() -> Cluster {
        let (service, _) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        Cluster::new(Client::new(service, "default"), Caches::default())
    }
}

/// One webhook of the server.
pub struct Route {
    pub path: &'static str,
    pub handler: Handler,
}

/// A label requirement of a webhook's selectors, such as `kubernetes.io/metadata.name NotIn
/// [kube-system]`.
#[derive(Debug, Clone, Copy)]
pub struct Requirement {
    pub key: &'static str,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: &'static str,
    pub values: &'static [&'static str],
}

/// The namespaces a webhook on a core type leaves alone by default: kube-system, and the
/// manager's own (labelled `app.kubernetes.io/name: guestbook` by config/manager), so that
/// the webhook can never stop the writes that the cluster, or the manager's own recovery,
/// depends on. Label another namespace `app.kubernetes.io/name: guestbook` to keep it out
/// as well, or give a webhook other requirements.
pub const OUTSIDE_SYSTEM_NAMESPACES: &[Requirement] = &[
    Requirement {
        key: "kubernetes.io/metadata.name",
        operator: "NotIn",
        values: &["kube-system"],
    },
    Requirement {
        key: "app.kubernetes.io/name",
        operator: "NotIn",
        values: &["guestbook"],
    },
];

/// A webhook as its configuration declares it: `make manifests` writes the configurations to
/// config/webhook/manifests.yaml, and the tests install them pointing at a local server.
#[derive(Debug, Clone, Copy)]
pub struct Webhook {
    /// The webhook's name in its configuration, such as `mguestbook-v1.kb.io`.
    pub name: &'static str,
    pub path: &'static str,
    /// Mutating (defaulting) or validating.
    pub mutating: bool,
    pub group: &'static str,
    pub version: &'static str,
    pub resource: &'static str,
    pub operations: &'static [&'static str],
    /// `Fail` or `Ignore`: what the API server does when the webhook cannot be called.
    pub failure_policy: &'static str,
    pub side_effects: &'static str,
    /// How long the API server waits for an answer (1 to 30 seconds); `None`: its default, 10.
    pub timeout_seconds: Option<i32>,
    /// Requirements on the labels of an object's namespace: the webhook sees only the objects
    /// of namespaces that meet them all (`&[]`: every namespace).
    pub namespace_selector: &'static [Requirement],
    /// Requirements on the labels of the object itself (`&[]`: every object).
    pub object_selector: &'static [Requirement],
}

/// The label selector of `requirements` (`None` for none: every object).
fn selector(requirements: &[Requirement]) -> Option<LabelSelector> {
    (!requirements.is_empty()).then(|| LabelSelector {
        match_expressions: Some(
            requirements
                .iter()
                .map(|r| LabelSelectorRequirement {
                    key: r.key.to_string(),
                    operator: r.operator.to_string(),
                    values: (!r.values.is_empty())
                        .then(|| r.values.iter().map(|v| v.to_string()).collect()),
                })
                .collect(),
        ),
        match_labels: None,
    })
}

/// The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of `webhooks` (each
/// `None` when it would be empty); `client` says how the API server reaches a path.
pub fn configurations(
    webhooks: &[Webhook],
    client: impl Fn(&str) -> WebhookClientConfig,
) -> (
    Option<MutatingWebhookConfiguration>,
    Option<ValidatingWebhookConfiguration>,
) {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let rules = |w: &Webhook| {
        Some(vec![RuleWithOperations {
            api_groups: Some(vec![w.group.to_string()]),
            api_versions: Some(vec![w.version.to_string()]),
            resources: Some(vec![w.resource.to_string()]),
            operations: Some(strings(w.operations)),
            ..RuleWithOperations::default()
        }])
    };
    let mutating: Vec<MutatingWebhook> = webhooks
        .iter()
        .filter(|w| w.mutating)
        .map(|w| MutatingWebhook {
            name: w.name.to_string(),
            admission_review_versions: vec!["v1".into()],
            client_config: client(w.path),
            failure_policy: Some(w.failure_policy.to_string()),
            side_effects: w.side_effects.to_string(),
            rules: rules(w),
            timeout_seconds: w.timeout_seconds,
            namespace_selector: selector(w.namespace_selector),
            object_selector: selector(w.object_selector),
            ..MutatingWebhook::default()
        })
        .collect();
    let validating: Vec<ValidatingWebhook> = webhooks
        .iter()
        .filter(|w| !w.mutating)
        .map(|w| ValidatingWebhook {
            name: w.name.to_string(),
            admission_review_versions: vec!["v1".into()],
            client_config: client(w.path),
            failure_policy: Some(w.failure_policy.to_string()),
            side_effects: w.side_effects.to_string(),
            rules: rules(w),
            timeout_seconds: w.timeout_seconds,
            namespace_selector: selector(w.namespace_selector),
            object_selector: selector(w.object_selector),
            ..ValidatingWebhook::default()
        })
        .collect();
    let meta = |name: &str| kube::api::ObjectMeta {
        name: Some(name.to_string()),
        ..Default::default()
    };
    (
        (!mutating.is_empty()).then(|| MutatingWebhookConfiguration {
            metadata: meta("mutating-webhook-configuration"),
            webhooks: Some(mutating),
        }),
        (!validating.is_empty()).then(|| ValidatingWebhookConfiguration {
            metadata: meta("validating-webhook-configuration"),
            webhooks: Some(validating),
        }),
    )
}

/// Where cert-manager mounts the serving certificate by default, as for the Go manager.
pub const DEFAULT_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

/// The largest review body the server reads: the API server limits an object to 3 MiB, and a
/// review of an update carries two.
pub const MAX_BODY: usize = 7 * 1024 * 1024;

/// How long the body of a review may take to arrive once its head has: a client that sends it
/// slower is answered 408 and its connection closed.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a handler may take: the API server waits 30 s at most (`timeout_seconds`), so an
/// answer later than that is read by nobody; the handler is stopped and 504 answered.
pub const HANDLER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the server keeps answering once the manager is stopping: the manager is unready
/// from the start of it, and the endpoints of the webhook Service drop the pod within a few
/// seconds, so that the API server does not send a review to a port that has closed.
pub const SHUTDOWN_DELAY: Duration = Duration::from_secs(4);

/// How long the reviews under way may take to be answered once the server stops: with
/// [`SHUTDOWN_DELAY`], within the pod's termination grace period (10 s in config/manager).
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The webhook server, listening.
pub struct Server {
    listener: TcpListener,
    tls: tokio_rustls::TlsAcceptor,
    routes: Arc<Vec<Route>>,
    cluster: Cluster,
}

impl Server {
    /// Listen on `address` (`[::]:port`: every address, IPv6 and IPv4) with the certificate of
    /// `files`: an error when either fails, so that a manager that cannot serve its webhooks
    /// does not start (or become ready). The handlers of `routes` read `cluster`.
    pub async fn bind(
        address: SocketAddr,
        files: CertFiles,
        routes: Vec<Route>,
        cluster: Cluster,
    ) -> anyhow::Result<Server> {
        let certificate = Certificate::from_files(files)
            .map_err(|e| anyhow::anyhow!("the webhook server's certificate: {e}"))?;
        Server::bind_certificate(address, certificate, routes, cluster).await
    }

    /// [`Server::bind`] with a certificate the manager has (`make run`'s, see
    /// [`crate::local_webhooks`]).
    pub async fn bind_certificate(
        address: SocketAddr,
        certificate: Arc<Certificate>,
        routes: Vec<Route>,
        cluster: Cluster,
    ) -> anyhow::Result<Server> {
        let listener = server::listen(address)
            .await
            .map_err(|e| anyhow::anyhow!("--webhook-port: cannot listen on {address}: {e}"))?;
        Ok(Server {
            listener,
            tls: certificate.acceptor()?,
            routes: Arc::new(routes),
            cluster,
        })
    }

    /// Where the server listens.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve the webhooks until `shutdown`; then stop accepting and answer the reviews under
    /// way (for at most [`DRAIN_TIMEOUT`]).
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let serving = Serving {
            tls: Some(self.tls),
            max_connections: 256,
            keep_alive: true,
            drain: DRAIN_TIMEOUT,
        };
        if let Ok(address) = self.listener.local_addr() {
            tracing::info!(%address, "serving webhooks");
        }
        let (routes, cluster) = (self.routes, self.cluster);
        let handler = move |request| {
            let span = crate::telemetry::webhook_span(&request);
            crate::telemetry::answered(span, respond(request, routes.clone(), cluster.clone()))
        };
        server::serve(self.listener, serving, handler, shutdown).await;
    }
}

async fn respond<B>(request: Request<B>, routes: Arc<Vec<Route>>, cluster: Cluster) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let route = routes.iter().find(|r| r.path == request.uri().path());
    let (status, body) = match route {
        Some(route) if request.method() == Method::POST => {
            let read = Limited::new(request.into_body(), MAX_BODY).collect();
            match timeout(BODY_TIMEOUT, read).await {
                Ok(Ok(body)) => {
                    let handled = (route.handler)(body.to_bytes(), cluster);
                    match timeout(HANDLER_TIMEOUT, handled).await {
                        Ok(answer) => (StatusCode::OK, answer),
                        Err(_) => {
                            tracing::error!(path = route.path, timeout = ?HANDLER_TIMEOUT, "a webhook took too long: stopped");
                            (
                                StatusCode::GATEWAY_TIMEOUT,
                                b"the webhook took too long\n".to_vec(),
                            )
                        }
                    }
                }
                Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("a review may not exceed {MAX_BODY} bytes\n").into_bytes(),
                ),
                Ok(Err(e)) => (
                    StatusCode::BAD_REQUEST,
                    format!("reading the review: {e}\n").into_bytes(),
                ),
                Err(_) => (
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the review did not arrive within {BODY_TIMEOUT:?}\n").into_bytes(),
                ),
            }
        }
        Some(_) => (StatusCode::METHOD_NOT_ALLOWED, b"POST only\n".to_vec()),
        None => (StatusCode::NOT_FOUND, b"no webhook here\n".to_vec()),
    };
    let content_type = if status == StatusCode::OK {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    server::reply(status, content_type, body)
}

fn review_body(response: AdmissionResponse) -> Vec<u8> {
    serde_json::to_vec(&response.into_review()).unwrap_or_default()
}

/// The admission request of a review's body.
fn admission_request<K>(body: &[u8]) -> Result<AdmissionRequest<K>, String>
where
    K: Resource + DeserializeOwned,
{
    let review: AdmissionReview<K> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    review
        .try_into()
        .map_err(|e: kube::core::admission::ConvertAdmissionReviewError| e.to_string())
}

/// A defaulting webhook: `default` fills in the object; the response patches the difference.
pub async fn defaulting<K>(
    body: Bytes,
    cluster: Cluster,
    default: impl AsyncFn(&mut K, &Cluster),
) -> Vec<u8>
where
    K: Resource + DeserializeOwned + Serialize + Clone,
{
    let request: AdmissionRequest<K> = match admission_request(&body) {
        Ok(r) => r,
        Err(e) => return review_body(AdmissionResponse::invalid(e)),
    };
    let mut response = AdmissionResponse::from(&request);
    if let Some(obj) = &request.object {
        let mut defaulted = obj.clone();
        default(&mut defaulted, &cluster).await;
        let (before, after) = (serde_json::to_value(obj), serde_json::to_value(&defaulted));
        if let (Ok(before), Ok(after)) = (before, after) {
            let patch = json_patch::diff(&before, &after);
            response = match response.clone().with_patch(patch) {
                Ok(r) => r,
                Err(e) => response.deny(e.to_string()),
            };
        }
    }
    review_body(response)
}

/// The path of the conversion webhook, as Kubebuilder's.
pub const CONVERSION_PATH: &str = "/convert";

/// How the objects of one kind convert between its versions: `convert(object, apiVersion)`.
#[derive(Debug, Clone, Copy)]
pub struct Conversion {
    pub group: &'static str,
    pub kind: &'static str,
    pub convert: fn(serde_json::Value, &str) -> Result<serde_json::Value, String>,
}

/// The conversion webhook: converts each object of the review with its kind's conversion.
pub fn converting(body: &[u8], conversions: &[Conversion]) -> Vec<u8> {
    use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
    let request = match serde_json::from_slice::<ConversionReview>(body)
        .map_err(|e| e.to_string())
        .and_then(|r| ConversionRequest::from_review(r).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => {
            let status = Status::failure(&e, "InvalidRequest");
            let review = ConversionResponse::invalid(status).into_review();
            return serde_json::to_vec(&review).unwrap_or_default();
        }
    };
    let desired = request.desired_api_version.clone();
    let converted: Result<Vec<_>, String> = request
        .objects
        .iter()
        .map(|obj| {
            let group = obj["apiVersion"].as_str().unwrap_or_default();
            let group = group.rsplit_once('/').map_or("", |(g, _)| g);
            let kind = obj["kind"].as_str().unwrap_or_default();
            match conversions
                .iter()
                .find(|c| c.group == group && c.kind == kind)
            {
                Some(c) => (c.convert)(obj.clone(), &desired),
                None => Err(format!("no conversion for {kind} in group {group}")),
            }
        })
        .collect();
    let response = ConversionResponse::for_request(request);
    let response = match converted {
        Ok(objects) => response.success(objects),
        Err(e) => response.failure(Status::failure(&e, "ConversionFailed")),
    };
    serde_json::to_vec(&response.into_review()).unwrap_or_default()
}

/// What a validation returns: warnings to show, or why the object is refused.
pub type Validation = Result<Vec<String>, Refusal>;

/// Why a validation refuses an object, as controller-runtime reports it to the API server.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Fields with wrong values: the API server answers 422 Invalid and lists each field (the
    /// status a Go validator returns with `apierrors.NewInvalid`).
    Invalid(Vec<FieldError>),
    /// Anything else: the API server answers 403 Forbidden with this message.
    Denied(String),
}

impl From<FieldError> for Refusal {
    fn from(error: FieldError) -> Self {
        Refusal::Invalid(vec![error])
    }
}

impl From<Vec<FieldError>> for Refusal {
    fn from(errors: Vec<FieldError>) -> Self {
        Refusal::Invalid(errors)
    }
}

impl From<String> for Refusal {
    fn from(message: String) -> Self {
        Refusal::Denied(message)
    }
}

impl From<&str> for Refusal {
    fn from(message: &str) -> Self {
        Refusal::Denied(message.to_string())
    }
}

/// One field a validation refuses, worded as Kubernetes words its own field errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's path, such as `spec.replicas`.
    pub field: String,
    /// The cause's type, such as `FieldValueInvalid`.
    pub reason: &'static str,
    /// What follows the path, such as `Invalid value: 0: must be at least 1`.
    pub message: String,
}

impl FieldError {
    /// `field` has a value that is not allowed, and `detail` says why.
    pub fn invalid(field: &str, value: impl Serialize, detail: &str) -> Self {
        let value = serde_json::to_string(&value).unwrap_or_default();
        Self::new(
            field,
            "FieldValueInvalid",
            format!("Invalid value: {value}: {detail}"),
        )
    }

    /// `field` must be set.
    pub fn required(field: &str, detail: &str) -> Self {
        Self::new(
            field,
            "FieldValueRequired",
            with_detail("Required value", detail),
        )
    }

    /// `field` may not be set, or not to this, or not changed.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self::new(
            field,
            "FieldValueForbidden",
            with_detail("Forbidden", detail),
        )
    }

    /// `field` has a value outside `supported`.
    pub fn not_supported(field: &str, value: impl Serialize, supported: &[&str]) -> Self {
        let value = serde_json::to_string(&value).unwrap_or_default();
        let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        Self::new(
            field,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {value}: supported values: {}",
                supported.join(", ")
            ),
        )
    }

    fn new(field: &str, reason: &'static str, message: String) -> Self {
        FieldError {
            field: field.to_string(),
            reason,
            message,
        }
    }
}

fn with_detail(what: &str, detail: &str) -> String {
    if detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The status of a refusal: 422 Invalid with a cause per field, or 403 Forbidden.
fn refusal_status(refusal: Refusal, kind: &GroupVersionKind, name: &str) -> Status {
    match refusal {
        Refusal::Denied(message) => Status::failure(&message, "Forbidden").with_code(403),
        Refusal::Invalid(errors) => {
            let qualified = if kind.group.is_empty() {
                kind.kind.clone()
            } else {
                format!("{}.{}", kind.kind, kind.group)
            };
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            let listed = match listed.as_slice() {
                [one] => one.clone(),
                many => format!("[{}]", many.join(", ")),
            };
            let message = format!("{qualified} {name:?} is invalid: {listed}");
            let causes = errors
                .into_iter()
                .map(|e| StatusCause {
                    reason: e.reason.to_string(),
                    message: e.message,
                    field: e.field,
                })
                .collect();
            Status::failure(&message, "Invalid")
                .with_code(422)
                .with_details(StatusDetails {
                    name: name.to_string(),
                    group: kind.group.clone(),
                    kind: kind.kind.clone(),
                    uid: String::new(),
                    causes,
                    retry_after_seconds: 0,
                })
        }
    }
}

/// A validating webhook: `validate(new, old, cluster)` for creates (no old), updates, and
/// deletes (no new).
pub async fn validating<K>(
    body: Bytes,
    cluster: Cluster,
    validate: impl AsyncFn(Option<&K>, Option<&K>, &Cluster) -> Validation,
) -> Vec<u8>
where
    K: Resource + DeserializeOwned + Serialize + Clone,
{
    let request: AdmissionRequest<K> = match admission_request(&body) {
        Ok(r) => r,
        Err(e) => return review_body(AdmissionResponse::invalid(e)),
    };
    let mut response = AdmissionResponse::from(&request);
    let (new, old) = (request.object.as_ref(), request.old_object.as_ref());
    match validate(new, old, &cluster).await {
        Ok(warnings) if warnings.is_empty() => {}
        Ok(warnings) => response.warnings = Some(warnings),
        Err(refusal) => {
            response.allowed = false;
            response.result = refusal_status(refusal, &request.kind, &request.name);
        }
    }
    review_body(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    /// A review of creating a ConfigMap named `settings`, as the API server sends it.
    fn review() -> Bytes {
        serde_json::to_vec(&serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "0001",
                "kind": { "group": "", "version": "v1", "kind": "ConfigMap" },
                "resource": { "group": "", "version": "v1", "resource": "configmaps" },
                "name": "settings",
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {},
                "object": {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": { "name": "settings", "namespace": "default" },
                    "data": { "mode": "" }
                }
            }
        }))
        .expect("a review")
        .into()
    }

    fn answer(body: Vec<u8>) -> serde_json::Value {
        let review: serde_json::Value = serde_json::from_slice(&body).expect("a review back");
        review["response"].clone()
    }

    async fn refuse_empty_mode(
        new: Option<&ConfigMap>,
        _: Option<&ConfigMap>,
        _: &Cluster,
    ) -> Validation {
        let mode = new
            .and_then(|c| c.data.as_ref())
            .and_then(|d| d.get("mode"));
        match mode.map(String::as_str) {
            Some("") => Err(vec![
                FieldError::invalid("data.mode", "", "must not be empty"),
                FieldError::required("data.owner", ""),
            ]
            .into()),
            _ => Ok(vec![]),
        }
    }

    #[tokio::test]
    async fn field_errors_refuse_as_invalid_with_a_cause_each() {
        let response = answer(validating(review(), Cluster::offline(), refuse_empty_mode).await);
        assert_eq!(response["uid"], "0001");
        assert_eq!(response["allowed"], false);
        let status = &response["status"];
        assert_eq!(status["code"], 422);
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(
            status["message"],
            r#"ConfigMap "settings" is invalid: [data.mode: Invalid value: "": must not be empty, data.owner: Required value]"#
        );
        let causes = &status["details"]["causes"];
        assert_eq!(causes[0]["field"], "data.mode");
        assert_eq!(causes[0]["reason"], "FieldValueInvalid");
        assert_eq!(causes[1]["reason"], "FieldValueRequired");
        assert_eq!(status["details"]["kind"], "ConfigMap");
    }

    #[tokio::test]
    async fn a_message_refuses_as_forbidden() {
        async fn deny(_: Option<&ConfigMap>, _: Option<&ConfigMap>, _: &Cluster) -> Validation {
            Err("not today".into())
        }
        let response = answer(validating(review(), Cluster::offline(), deny).await);
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 403);
        assert_eq!(response["status"]["reason"], "Forbidden");
        assert_eq!(response["status"]["message"], "not today");
    }

    #[tokio::test]
    async fn warnings_go_back_with_an_allowed_object() {
        async fn warn(_: Option<&ConfigMap>, _: Option<&ConfigMap>, _: &Cluster) -> Validation {
            Ok(vec!["mode is deprecated".into()])
        }
        let response = answer(validating(review(), Cluster::offline(), warn).await);
        assert_eq!(response["allowed"], true);
        assert_eq!(response["warnings"][0], "mode is deprecated");
    }

    #[tokio::test]
    async fn defaulting_answers_with_a_json_patch() {
        async fn label(obj: &mut ConfigMap, _: &Cluster) {
            obj.metadata
                .labels
                .get_or_insert_default()
                .insert("defaulted".into(), "yes".into());
        }
        let response = answer(defaulting(review(), Cluster::offline(), label).await);
        assert_eq!(response["allowed"], true);
        assert_eq!(response["patchType"], "JSONPatch");
        // kube writes the patch's bytes as a JSON array, which the API server reads as well.
        let bytes: Vec<u8> = serde_json::from_value(response["patch"].clone()).expect("a patch");
        let patch: serde_json::Value = serde_json::from_slice(&bytes).expect("a JSON patch");
        assert_eq!(patch[0]["op"], "add");
        assert_eq!(patch[0]["path"], "/metadata/labels");
        assert_eq!(patch[0]["value"]["defaulted"], "yes");
    }

    #[test]
    fn field_errors_read_like_kubernetes_ones() {
        let unsupported = FieldError::not_supported("spec.mode", "fast", &["safe", "slow"]);
        assert_eq!(
            unsupported.to_string(),
            r#"spec.mode: Unsupported value: "fast": supported values: "safe", "slow""#
        );
        let forbidden = FieldError::forbidden("spec.size", "may not change");
        assert_eq!(
            forbidden.to_string(),
            "spec.size: Forbidden: may not change"
        );
        assert_eq!(
            FieldError::invalid("spec.replicas", 0, "must be at least 1").to_string(),
            "spec.replicas: Invalid value: 0: must be at least 1"
        );
    }

    fn echo_route() -> Arc<Vec<Route>> {
        Arc::new(vec![Route {
            path: "/echo",
            handler: |body, _| Box::pin(async move { body.to_vec() }),
        }])
    }

    #[tokio::test]
    async fn a_review_larger_than_the_limit_is_refused() {
        let request = |size: usize| {
            Request::post("/echo")
                .body(http_body_util::Full::new(Bytes::from(vec![b'x'; size])))
                .expect("a request")
        };
        let reply = respond(request(MAX_BODY + 1), echo_route(), Cluster::offline()).await;
        assert_eq!(reply.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let reply = respond(request(MAX_BODY), echo_route(), Cluster::offline()).await;
        assert_eq!(reply.status(), StatusCode::OK);
    }

    #[tokio::test(start_paused = true)]
    async fn a_review_whose_body_does_not_arrive_is_answered_408() {
        // A head, then a body that never comes.
        let never = futures::stream::pending::<Result<hyper::body::Frame<Bytes>, std::io::Error>>();
        let request = Request::post("/echo")
            .body(http_body_util::StreamBody::new(never))
            .expect("a request");
        let reply = respond(request, echo_route(), Cluster::offline()).await;
        assert_eq!(reply.status(), StatusCode::REQUEST_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_handler_that_takes_too_long_is_stopped() {
        let routes = Arc::new(vec![Route {
            path: "/stuck",
            handler: |_, _| Box::pin(std::future::pending()),
        }]);
        let request = Request::post("/stuck")
            .body(http_body_util::Full::new(Bytes::from_static(b"{}")))
            .expect("a request");
        let reply = respond(request, routes, Cluster::offline()).await;
        assert_eq!(reply.status(), StatusCode::GATEWAY_TIMEOUT);
    }

    /// Refuse a ConfigMap whose `owner` names a Namespace the API server does not have.
    async fn owner_exists(
        new: Option<&ConfigMap>,
        _: Option<&ConfigMap>,
        cluster: &Cluster,
    ) -> Validation {
        use k8s_openapi::api::core::v1::Namespace;
        let owner = new.and_then(|c| c.data.as_ref()?.get("owner").cloned());
        let Some(owner) = owner else {
            return Ok(vec![]);
        };
        let namespaces: kube::Api<Namespace> = kube::Api::all(cluster.client.clone());
        match namespaces.get_opt(&owner).await {
            Ok(Some(_)) => Ok(vec![]),
            Ok(None) => Err(FieldError::invalid("data.owner", &owner, "no such Namespace").into()),
            Err(e) => Err(Refusal::Denied(format!(
                "cannot read Namespace {owner}: {e}"
            ))),
        }
    }

    #[tokio::test]
    async fn a_handler_reads_the_cluster() {
        let (service, mut handle) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        let cluster = Cluster::new(Client::new(service, "default"), Caches::default());
        let mut body: serde_json::Value = serde_json::from_slice(&review()).expect("JSON");
        body["request"]["object"]["data"]["owner"] = "team-a".into();
        let body = Bytes::from(serde_json::to_vec(&body).expect("JSON"));
        let api_server = tokio::spawn(async move {
            let (request, send) = handle.next_request().await.expect("a request");
            assert_eq!(request.uri().path(), "/api/v1/namespaces/team-a");
            let status = serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "NotFound", "code": 404, "message": "not found",
            });
            let reply = http::Response::builder()
                .status(404)
                .body(kube::client::Body::from(
                    serde_json::to_vec(&status).expect("JSON"),
                ));
            send.send_response(reply.expect("a response"));
        });
        let response = answer(validating(body, cluster, owner_exists).await);
        api_server.await.expect("the mock API server");
        assert_eq!(response["allowed"], false);
        assert_eq!(
            response["status"]["details"]["causes"][0]["field"],
            "data.owner"
        );
    }

    #[tokio::test]
    async fn a_handler_reads_the_controllers_cache() {
        let caches = Caches::default();
        let cluster = Cluster::new(Cluster::offline().client, caches.clone());
        assert!(cluster.cached::<ConfigMap>().is_none());
        let (reader, mut writer) = kube::runtime::reflector::store::<ConfigMap>();
        caches.insert(reader);
        writer.apply_watcher_event(&kube::runtime::watcher::Event::InitDone);
        let cached = cluster
            .cached::<ConfigMap>()
            .expect("the controller's cache");
        assert!(cached.is_empty());
    }

    /// Whether the slow handler has received its review.
    static SLOW_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// A handler that takes its time, then answers with the review's body.
    async fn slow(body: Bytes) -> Vec<u8> {
        SLOW_STARTED.store(true, std::sync::atomic::Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(500)).await;
        body.to_vec()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reviews_under_way_are_answered_when_the_server_stops() {
        use rustls::pki_types::{CertificateDer, ServerName};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let dir = std::env::temp_dir().join(format!("webhook-drain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let key = rcgen::KeyPair::generate().expect("a key");
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("parameters");
        let cert = params.self_signed(&key).expect("a certificate");
        std::fs::write(dir.join("tls.crt"), cert.pem()).expect("tls.crt");
        std::fs::write(dir.join("tls.key"), key.serialize_pem()).expect("tls.key");
        let routes = vec![Route {
            path: "/slow",
            handler: |body, _| Box::pin(slow(body)),
        }];
        let server = Server::bind(
            ([127, 0, 0, 1], 0).into(),
            CertFiles::new(&dir),
            routes,
            Cluster::offline(),
        )
        .await
        .expect("listening");
        let address = server.local_addr().expect("its address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve(async move {
            let _ = stopped.await;
        }));

        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from(cert.der().to_vec()))
            .expect("a root");
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let client = tokio::spawn(async move {
            let tcp = tokio::net::TcpStream::connect(address)
                .await
                .expect("connected");
            let name = ServerName::try_from("127.0.0.1").expect("a name");
            let mut tls = connector
                .connect(name, tcp)
                .await
                .expect("a TLS connection");
            let request = "POST /slow HTTP/1.1\r\nhost: test\r\ncontent-length: 6\r\n\r\nreview";
            tls.write_all(request.as_bytes()).await.expect("sent");
            let mut answer = Vec::new();
            let _ = tls.read_to_end(&mut answer).await;
            String::from_utf8_lossy(&answer).into_owned()
        });
        while !SLOW_STARTED.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The manager stops while the review is under way.
        let _ = stop.send(());
        let answer = client.await.expect("the client");
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("review"), "{answer}");
        serving.await.expect("the server stopped cleanly");
        assert!(
            tokio::net::TcpStream::connect(address).await.is_err(),
            "the server still accepts connections after it stopped"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn webhooks_on_core_types_leave_system_namespaces_alone() {
        let hook = Webhook {
            name: "mconfigmap-v1.kb.io",
            path: "/mutate--v1-configmap",
            mutating: true,
            group: "",
            version: "v1",
            resource: "configmaps",
            operations: &["CREATE"],
            failure_policy: "Fail",
            side_effects: "None",
            timeout_seconds: Some(5),
            namespace_selector: OUTSIDE_SYSTEM_NAMESPACES,
            object_selector: &[],
        };
        let (mutating, _) = configurations(&[hook], |_| WebhookClientConfig::default());
        let webhooks = mutating.and_then(|m| m.webhooks).expect("a webhook");
        let selector = webhooks[0].namespace_selector.clone().expect("a selector");
        let requirements = selector.match_expressions.expect("requirements");
        let values = |i: usize| requirements[i].values.clone().unwrap_or_default();
        assert_eq!(requirements[0].key, "kubernetes.io/metadata.name");
        assert_eq!(values(0), ["kube-system"]);
        assert_eq!(requirements[1].key, "app.kubernetes.io/name");
        assert_eq!(values(1), OUTSIDE_SYSTEM_NAMESPACES[1].values);
        assert_eq!(webhooks[0].timeout_seconds, Some(5));
        assert_eq!(webhooks[0].object_selector, None);
    }
}
