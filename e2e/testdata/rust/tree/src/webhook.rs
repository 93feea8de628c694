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
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
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
    use kube::core::response::Status;
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

/// What a validation returns: warnings to show, or the reason the object is refused.
pub type Validation = Result<Vec<String>, String>;

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
        Err(reason) => response = response.deny(reason),
    }
    review_body(response)
}
