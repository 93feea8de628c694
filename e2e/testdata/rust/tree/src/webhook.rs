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
//! certificate is served without a restart. Each webhook is a path and a handler; the webhooks
//! themselves are in src/webhooks (`opbuilder create webhook` adds them).

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use kube::Resource;
use kube::core::GroupVersionKind;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use kube::core::response::{Status, StatusCause, StatusDetails};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// A handler: the body of a review request in, the body of its response out.
pub type Handler = fn(&[u8]) -> Vec<u8>;

/// One webhook of the server.
pub struct Route {
    pub path: &'static str,
    pub handler: Handler,
}

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

fn load(dir: &Path) -> anyhow::Result<CertifiedKey> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs =
        CertificateDer::pem_file_iter(dir.join("tls.crt"))?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(dir.join("tls.key"))?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&key)?;
    Ok(CertifiedKey::new(certs, signer))
}

fn modified(dir: &Path) -> Option<SystemTime> {
    std::fs::metadata(dir.join("tls.crt"))
        .and_then(|m| m.modified())
        .ok()
}

/// The serving certificate, read again when tls.crt changes.
#[derive(Debug)]
struct Certificate {
    dir: PathBuf,
    current: RwLock<(Option<SystemTime>, Arc<CertifiedKey>)>,
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let now = modified(&self.dir);
        let stale = self.current.read().map(|c| c.0 != now).unwrap_or(true);
        if stale {
            match load(&self.dir) {
                Ok(key) => {
                    if let Ok(mut c) = self.current.write() {
                        *c = (now, Arc::new(key));
                        tracing::info!(dir = %self.dir.display(), "loaded the webhook certificate");
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the renewed webhook certificate; serving the previous one")
                }
            }
        }
        self.current.read().ok().map(|c| c.1.clone())
    }
}

/// Serve `routes` over HTTPS on `port` with the certificate of `cert_dir`.
pub async fn serve(port: u16, cert_dir: PathBuf, routes: Vec<Route>) -> anyhow::Result<()> {
    let key = load(&cert_dir).map_err(|e| {
        anyhow::anyhow!(
            "reading the webhook certificate in {}: {e}",
            cert_dir.display()
        )
    })?;
    let resolver = Certificate {
        current: RwLock::new((modified(&cert_dir), Arc::new(key))),
        dir: cert_dir,
    };
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let routes = Arc::new(routes);
    let listener = TcpListener::bind(("0.0.0.0", port)).await?;
    tracing::info!(port, "serving webhooks");
    loop {
        let (stream, _) = listener.accept().await?;
        let (acceptor, routes) = (acceptor.clone(), routes.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| respond(req, routes.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn respond(
    req: Request<Incoming>,
    routes: Arc<Vec<Route>>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let route = routes.iter().find(|r| r.path == req.uri().path());
    let (status, body) = match route {
        Some(route) if req.method() == Method::POST => {
            let body = req.into_body().collect().await?.to_bytes();
            (StatusCode::OK, (route.handler)(&body))
        }
        Some(_) => (StatusCode::METHOD_NOT_ALLOWED, b"POST only".to_vec()),
        None => (StatusCode::NOT_FOUND, b"no webhook here".to_vec()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    Ok(response)
}

fn review_body(response: AdmissionResponse) -> Vec<u8> {
    serde_json::to_vec(&response.into_review()).unwrap_or_default()
}

/// A defaulting webhook: `default` fills in the object; the response patches the difference.
pub fn defaulting<K>(body: &[u8], default: fn(&mut K)) -> Vec<u8>
where
    K: Resource + DeserializeOwned + Serialize + Clone,
{
    let request: AdmissionRequest<K> = match serde_json::from_slice::<AdmissionReview<K>>(body)
        .map_err(|e| e.to_string())
        .and_then(|r| {
            r.try_into()
                .map_err(|e: kube::core::admission::ConvertAdmissionReviewError| e.to_string())
        }) {
        Ok(r) => r,
        Err(e) => return review_body(AdmissionResponse::invalid(e)),
    };
    let mut response = AdmissionResponse::from(&request);
    if let Some(obj) = &request.object {
        let mut defaulted = obj.clone();
        default(&mut defaulted);
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

/// A validating webhook: `validate(new, old)` for creates (no old), updates, and deletes (no new).
pub fn validating<K>(body: &[u8], validate: fn(Option<&K>, Option<&K>) -> Validation) -> Vec<u8>
where
    K: Resource + DeserializeOwned + Serialize + Clone,
{
    let request: AdmissionRequest<K> = match serde_json::from_slice::<AdmissionReview<K>>(body)
        .map_err(|e| e.to_string())
        .and_then(|r| {
            r.try_into()
                .map_err(|e: kube::core::admission::ConvertAdmissionReviewError| e.to_string())
        }) {
        Ok(r) => r,
        Err(e) => return review_body(AdmissionResponse::invalid(e)),
    };
    let mut response = AdmissionResponse::from(&request);
    match validate(request.object.as_ref(), request.old_object.as_ref()) {
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
    fn review() -> Vec<u8> {
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
    }

    fn answer(body: Vec<u8>) -> serde_json::Value {
        let review: serde_json::Value = serde_json::from_slice(&body).expect("a review back");
        review["response"].clone()
    }

    fn refuse_empty_mode(new: Option<&ConfigMap>, _: Option<&ConfigMap>) -> Validation {
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

    #[test]
    fn field_errors_refuse_as_invalid_with_a_cause_each() {
        let response = answer(validating(&review(), refuse_empty_mode));
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

    #[test]
    fn a_message_refuses_as_forbidden() {
        fn deny(_: Option<&ConfigMap>, _: Option<&ConfigMap>) -> Validation {
            Err("not today".into())
        }
        let response = answer(validating(&review(), deny));
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 403);
        assert_eq!(response["status"]["reason"], "Forbidden");
        assert_eq!(response["status"]["message"], "not today");
    }

    #[test]
    fn warnings_go_back_with_an_allowed_object() {
        fn warn(_: Option<&ConfigMap>, _: Option<&ConfigMap>) -> Validation {
            Ok(vec!["mode is deprecated".into()])
        }
        let response = answer(validating(&review(), warn));
        assert_eq!(response["allowed"], true);
        assert_eq!(response["warnings"][0], "mode is deprecated");
    }

    #[test]
    fn defaulting_answers_with_a_json_patch() {
        fn label(obj: &mut ConfigMap) {
            obj.metadata
                .labels
                .get_or_insert_default()
                .insert("defaulted".into(), "yes".into());
        }
        let response = answer(defaulting(&review(), label));
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
}
