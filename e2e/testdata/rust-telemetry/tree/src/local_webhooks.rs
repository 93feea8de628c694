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

//! The webhooks under `make run`: the manager serves them from this machine (`--webhook-dev-host`,
//! which the Makefile passes as `WEBHOOK_DEV_HOST`, default `auto`). It makes a certificate
//! authority and a serving certificate for the address at which the API server reaches this
//! machine, registers webhook configurations of its own (named after the project and this run's
//! instance, `failurePolicy: Ignore`) that call the webhook server there by URL, and points the
//! conversion of the CRDs it converts at it. When the manager stops, the configurations are
//! deleted and each CRD's conversion is put back as it was.
//!
//! A run that is killed leaves nothing that blocks the cluster's admission: its webhooks are
//! skipped once they cannot be reached (Ignore), and the next `make run` deletes them (any run
//! deletes those of another instance not renewed for five minutes). A CRD's conversion cannot
//! fail open: it stays pointed at this machine until `make install` installs the CRD again or
//! the next `make run` stops and puts it back.

use crate::tls::Certificate;
use crate::webhook::{self, Conversion, Webhook};
use anyhow::Context as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::hash::Hasher;
use std::net::{IpAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Prefixes the names of the webhook configurations make run registers.
const PROJECT_NAME: &str = "guestbook";
/// Marks the webhook configurations of make run, with the run's instance ([`instance_id`]: this
/// machine and directory) as its value.
pub const LABEL_RUN: &str = "opbuilder.io/make-run";
/// When the run that registered a configuration last renewed it.
const ANNOTATION_ALIVE: &str = "opbuilder.io/make-run-alive";
/// A CRD's conversion client config as it was before make run pointed it at this machine
/// (JSON), to be put back when make run stops.
const ANNOTATION_CONVERSION: &str = "opbuilder.io/conversion-before-make-run";
/// How long make run's certificate authority and certificate last.
const VALIDITY: Duration = Duration::from_secs(7 * 24 * 3600);
/// A run renews [`ANNOTATION_ALIVE`] this often; a configuration of another instance not
/// renewed for [`STALE_AFTER`] was left by a run that was killed: the next run deletes it.
const ALIVE_EVERY: Duration = Duration::from_secs(60);
const STALE_AFTER: Duration = Duration::from_secs(300);
/// Bounds the removal once the manager is told to stop.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The webhooks of this manager, served from this machine and registered in the cluster.
pub struct Local {
    client: Client,
    base_url: String,
    instance: String,
    ca_pem: String,
    certificate: Arc<Certificate>,
    mutating: Option<MutatingWebhookConfiguration>,
    validating: Option<ValidatingWebhookConfiguration>,
    /// The group and kind of each kind the manager converts.
    conversions: Vec<(String, String)>,
    /// The CRDs whose conversion points here.
    converted: Vec<String>,
}

impl Local {
    /// Find the address (`host` is `--webhook-dev-host`: a host, `host:port` when a tunnel
    /// forwards another port to `port`, or `auto`), make the certificate for it and the
    /// configurations of `webhooks` and `conversions` calling the webhook server there.
    pub async fn prepare(
        client: Client,
        host: &str,
        port: u16,
        webhooks: &[Webhook],
        conversions: &[Conversion],
    ) -> anyhow::Result<Local> {
        let (mut host, port) = address(host, port)?;
        if host == "auto" {
            let why;
            (host, why) = detect_host(&client).await?;
            tracing::info!(%host, reason = %why, "found the address at which the API server reaches this machine");
        }
        let base_url = match host.parse::<IpAddr>() {
            Ok(IpAddr::V6(ip)) => format!("https://[{ip}]:{port}"),
            _ => format!("https://{host}:{port}"),
        };
        let (ca_pem, cert_pem, key_pem) = certificates(&host)?;
        let certificate = Certificate::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())?;
        let instance = instance_id();
        let bundle = ByteString(ca_pem.clone().into_bytes());
        let url = |path: &str| WebhookClientConfig {
            url: Some(format!("{base_url}{path}")),
            ca_bundle: Some(bundle.clone()),
            ..WebhookClientConfig::default()
        };
        let (mut mutating, mut validating) = webhook::configurations(webhooks, url);
        let meta = metadata(&instance);
        if let Some(m) = &mut mutating {
            m.metadata = meta.clone();
            for w in m.webhooks.iter_mut().flatten() {
                w.failure_policy = Some("Ignore".into());
            }
        }
        if let Some(v) = &mut validating {
            v.metadata = meta;
            for w in v.webhooks.iter_mut().flatten() {
                w.failure_policy = Some("Ignore".into());
            }
        }
        Ok(Local {
            client,
            base_url,
            instance,
            ca_pem,
            certificate,
            mutating,
            validating,
            conversions: conversions
                .iter()
                .map(|c| (c.group.to_string(), c.kind.to_string()))
                .collect(),
            converted: Vec::new(),
        })
    }

    /// The certificate the webhook server serves.
    pub fn certificate(&self) -> Arc<Certificate> {
        self.certificate.clone()
    }

    /// Register the webhooks in the cluster (the webhook server listens already): an error when
    /// they cannot be registered (what was registered is removed first).
    pub async fn register(&mut self) -> anyhow::Result<()> {
        if let Err(e) = self.try_register().await {
            self.unregister().await;
            return Err(e.context(
                "registering the webhooks of make run in the cluster (make run ARGS=--webhook-port=-1 runs without them)",
            ));
        }
        tracing::info!(url = %self.base_url, instance = %self.instance, converted_crds = ?self.converted, "serving the webhooks from this machine until the manager stops");
        Ok(())
    }

    /// Renew the registration until `shutdown`, then remove it: the webhook server keeps
    /// answering until this returns.
    pub async fn keep(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut renew = tokio::time::interval(ALIVE_EVERY);
        renew.tick().await;
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                _ = renew.tick() => self.renew().await,
            }
        }
        self.unregister().await;
    }

    async fn try_register(&mut self) -> anyhow::Result<()> {
        self.delete_leftovers().await?;
        let params = PostParams::default();
        if let Some(m) = &self.mutating {
            Api::<MutatingWebhookConfiguration>::all(self.client.clone())
                .create(&params, m)
                .await?;
        }
        if let Some(v) = &self.validating {
            Api::<ValidatingWebhookConfiguration>::all(self.client.clone())
                .create(&params, v)
                .await?;
        }
        if self.conversions.is_empty() {
            return Ok(());
        }
        let crds = Api::<CustomResourceDefinition>::all(self.client.clone());
        for crd in crds.list(&ListParams::default()).await? {
            let spec = &crd.spec;
            if !self
                .conversions
                .iter()
                .any(|(g, k)| *g == spec.group && *k == spec.names.kind)
            {
                continue;
            }
            if spec.conversion.as_ref().map(|c| c.strategy.as_str()) != Some("Webhook") {
                tracing::info!(crd = %crd.name_any(), "leaving a CRD without webhook conversion as it is (was it installed without its config/crd/patches/webhook_in_*.yaml?)");
                continue;
            }
            self.point_conversion(&crd.name_any()).await?;
            self.converted.push(crd.name_any());
        }
        if self.converted.is_empty() {
            tracing::info!(
                "no CRD the manager converts is installed in the cluster: run make install"
            );
        }
        Ok(())
    }

    /// Delete the configurations of make run that this instance left, and those of any instance
    /// not renewed for [`STALE_AFTER`].
    async fn delete_leftovers(&self) -> anyhow::Result<()> {
        let params = ListParams::default().labels(&format!(
            "app.kubernetes.io/name={PROJECT_NAME},{LABEL_RUN}"
        ));
        let mutating = Api::<MutatingWebhookConfiguration>::all(self.client.clone());
        for o in mutating.list(&params).await? {
            if left_over(o.meta(), &self.instance, Timestamp::now()) {
                delete(&mutating, &o.name_any()).await?;
                tracing::info!(name = %o.name_any(), "deleted a webhook configuration that a killed make run left");
            }
        }
        let validating = Api::<ValidatingWebhookConfiguration>::all(self.client.clone());
        for o in validating.list(&params).await? {
            if left_over(o.meta(), &self.instance, Timestamp::now()) {
                delete(&validating, &o.name_any()).await?;
                tracing::info!(name = %o.name_any(), "deleted a webhook configuration that a killed make run left");
            }
        }
        Ok(())
    }

    /// Point the conversion webhook of the CRD `name` at this machine, keeping the client
    /// config it had (unless a killed run kept it already).
    async fn point_conversion(&self, name: &str) -> anyhow::Result<()> {
        let api = Api::<CustomResourceDefinition>::all(self.client.clone());
        let crd = serde_json::to_value(api.get(name).await?)?;
        let kept = match crd["metadata"]["annotations"][ANNOTATION_CONVERSION].as_str() {
            Some(kept) => kept.to_string(),
            None => crd["spec"]["conversion"]["webhook"]["clientConfig"].to_string(),
        };
        let client_config = json!({
            "url": format!("{}{}", self.base_url, webhook::CONVERSION_PATH),
            "caBundle": ByteString(self.ca_pem.clone().into_bytes()),
        });
        set_client_config(&api, &crd, client_config, Some(kept)).await
    }

    /// Put back the client config the conversion webhook of the CRD `name` had, unless something
    /// else has pointed it elsewhere since (make install, or another make run, which puts it
    /// back when it stops).
    async fn restore_conversion(&self, name: &str) -> anyhow::Result<()> {
        let api = Api::<CustomResourceDefinition>::all(self.client.clone());
        let Some(crd) = api.get_opt(name).await? else {
            return Ok(());
        };
        let crd = serde_json::to_value(crd)?;
        let Some(kept) = crd["metadata"]["annotations"][ANNOTATION_CONVERSION].as_str() else {
            return Ok(());
        };
        let ours = format!("{}{}", self.base_url, webhook::CONVERSION_PATH);
        if crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"].as_str() != Some(&ours) {
            return Ok(());
        }
        let before: Value = serde_json::from_str(kept)?;
        set_client_config(&api, &crd, before, None).await
    }

    /// Say that this run still serves its configurations.
    async fn renew(&self) {
        let patch = json!({ "metadata": { "annotations": { ANNOTATION_ALIVE: Timestamp::now().to_string() } } });
        let params = PatchParams::default();
        if let Some(m) = &self.mutating {
            let api = Api::<MutatingWebhookConfiguration>::all(self.client.clone());
            if let Err(e) = api
                .patch(&m.name_any(), &params, &Patch::Merge(&patch))
                .await
            {
                tracing::warn!(name = %m.name_any(), error = %e, "cannot renew a webhook configuration of make run");
            }
        }
        if let Some(v) = &self.validating {
            let api = Api::<ValidatingWebhookConfiguration>::all(self.client.clone());
            if let Err(e) = api
                .patch(&v.name_any(), &params, &Patch::Merge(&patch))
                .await
            {
                tracing::warn!(name = %v.name_any(), error = %e, "cannot renew a webhook configuration of make run");
            }
        }
    }

    /// Delete the configurations and put the CRDs' conversion back, within [`CLEANUP_TIMEOUT`].
    async fn unregister(&self) {
        let cleanup = async {
            let mut failed = false;
            if let Some(m) = &self.mutating {
                let api = Api::<MutatingWebhookConfiguration>::all(self.client.clone());
                if let Err(e) = delete(&api, &m.name_any()).await {
                    tracing::error!(name = %m.name_any(), error = %e, "cannot delete a webhook configuration of make run");
                    failed = true;
                }
            }
            if let Some(v) = &self.validating {
                let api = Api::<ValidatingWebhookConfiguration>::all(self.client.clone());
                if let Err(e) = delete(&api, &v.name_any()).await {
                    tracing::error!(name = %v.name_any(), error = %e, "cannot delete a webhook configuration of make run");
                    failed = true;
                }
            }
            for name in &self.converted {
                if let Err(e) = self.restore_conversion(name).await {
                    tracing::error!(crd = %name, error = %e, "cannot put back the conversion of a CRD");
                    failed = true;
                }
            }
            failed
        };
        match tokio::time::timeout(CLEANUP_TIMEOUT, cleanup).await {
            Ok(false) => tracing::info!("removed the webhooks of make run from the cluster"),
            Ok(true) => {}
            Err(_) => {
                tracing::error!("removing the webhooks of make run from the cluster timed out")
            }
        }
    }
}

/// Resolves on SIGHUP (the terminal of `make run` closed) when `serving` (`--webhook-dev-host`
/// given), so that the manager stops and removes its webhooks as on Ctrl-C; never otherwise.
pub async fn hangup(serving: bool) {
    use tokio::signal::unix::{SignalKind, signal};
    // Without --webhook-dev-host, SIGHUP keeps its default (it ends the process).
    match serving.then(|| signal(SignalKind::hangup())) {
        Some(Ok(mut hangup)) => {
            hangup.recv().await;
            tracing::info!("make run was hung up (SIGHUP)");
        }
        _ => std::future::pending().await,
    }
}

/// Delete the object `name` of `api`; one that is gone already is fine.
async fn delete<K>(api: &Api<K>, name: &str) -> anyhow::Result<()>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The metadata of make run's configurations.
fn metadata(instance: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(format!("{PROJECT_NAME}-make-run-{instance}")),
        labels: Some(BTreeMap::from([
            (
                "app.kubernetes.io/name".to_string(),
                PROJECT_NAME.to_string(),
            ),
            (LABEL_RUN.to_string(), instance.to_string()),
        ])),
        annotations: Some(BTreeMap::from([(
            ANNOTATION_ALIVE.to_string(),
            Timestamp::now().to_string(),
        )])),
        ..ObjectMeta::default()
    }
}

/// Whether a configuration of make run was left by a run that no longer serves it: one of this
/// instance (which is starting), or one not renewed for [`STALE_AFTER`].
fn left_over(meta: &ObjectMeta, instance: &str, now: Timestamp) -> bool {
    let label = meta.labels.as_ref().and_then(|l| l.get(LABEL_RUN));
    let alive = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(ANNOTATION_ALIVE))
        .and_then(|t| t.parse::<Timestamp>().ok());
    label.map(String::as_str) == Some(instance)
        || alive.is_none_or(|t| now.duration_since(t).unsigned_abs() >= STALE_AFTER)
}

/// Set the client config of the conversion webhook of `crd` (as JSON) to `client_config`, and
/// its annotation [`ANNOTATION_CONVERSION`] to `kept` (`None` removes it). When a field manager
/// applied the client config (server-side, as make install's kubectl does), the change is
/// applied as that manager, with what it owns: its next apply then replaces it like any of its
/// own fields, so that `make install` after a make run that was killed installs the CRD as it
/// always does. Otherwise it is a merge patch.
async fn set_client_config(
    api: &Api<CustomResourceDefinition>,
    crd: &Value,
    client_config: Value,
    kept: Option<String>,
) -> anyhow::Result<()> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let Some((manager, fields)) = client_config_applier(crd) else {
        // A merge patch merges maps: what the client config had and the new one has not, null.
        let mut replaced = client_config.clone();
        if let (Some(old), Some(new)) = (
            crd["spec"]["conversion"]["webhook"]["clientConfig"].as_object(),
            replaced.as_object_mut(),
        ) {
            for key in old.keys() {
                new.entry(key.clone()).or_insert(Value::Null);
            }
        }
        let patch = json!({
            "metadata": { "annotations": { ANNOTATION_CONVERSION: kept } },
            "spec": { "conversion": { "webhook": { "clientConfig": replaced } } },
        });
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        return Ok(());
    };
    let mut applied = owned(crd, &fields);
    applied["apiVersion"] = json!("apiextensions.k8s.io/v1");
    applied["kind"] = json!("CustomResourceDefinition");
    applied["metadata"]["name"] = json!(name);
    applied["spec"]["conversion"]["webhook"]["clientConfig"] = client_config;
    match (kept, applied["metadata"]["annotations"].as_object_mut()) {
        (Some(kept), Some(annotations)) => {
            annotations.insert(ANNOTATION_CONVERSION.into(), json!(kept));
        }
        (Some(kept), None) => {
            applied["metadata"]["annotations"] = json!({ ANNOTATION_CONVERSION: kept });
        }
        (None, Some(annotations)) => {
            annotations.remove(ANNOTATION_CONVERSION);
        }
        (None, None) => {}
    }
    api.patch(
        name,
        &PatchParams::apply(&manager).force(),
        &Patch::Apply(&applied),
    )
    .await
    .with_context(|| format!("applying the CRD {name} as {manager}"))?;
    Ok(())
}

/// The field manager that applied the client config of the conversion webhook of `crd`, and
/// the fields it owns.
fn client_config_applier(crd: &Value) -> Option<(String, Map<String, Value>)> {
    crd["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find_map(|entry| {
            let fields = entry["fieldsV1"].as_object()?;
            let owns = ["f:spec", "f:conversion", "f:webhook", "f:clientConfig"]
                .iter()
                .try_fold(&Value::Object(fields.clone()), |node, key| node.get(key))
                .is_some();
            (entry["operation"] == "Apply"
                && entry.get("subresource").is_none_or(Value::is_null)
                && owns)
                .then(|| {
                    (
                        entry["manager"].as_str().unwrap_or_default().to_string(),
                        fields.clone(),
                    )
                })
        })
}

/// What of `value` the managed fields `fields` (the FieldsV1 of one manager) cover: the object
/// that manager applied last, as the server keeps it.
fn owned(value: &Value, fields: &Map<String, Value>) -> Value {
    // A field listed without children is owned whole.
    if fields.keys().all(|k| k == ".") {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, sub) in fields {
                let (Some(field), Some(sub)) = (key.strip_prefix("f:"), sub.as_object()) else {
                    continue;
                };
                if let Some(v) = map.get(field) {
                    out.insert(field.to_string(), owned(v, sub));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for (key, sub) in fields {
                let Some(sub) = sub.as_object() else { continue };
                if let Some(k) = key.strip_prefix("k:") {
                    // An item of a list keyed by some of its fields.
                    let Ok(Value::Object(k)) = serde_json::from_str::<Value>(k) else {
                        continue;
                    };
                    out.extend(
                        items
                            .iter()
                            .filter(|item| k.iter().all(|(f, v)| item.get(f) == Some(v)))
                            .map(|item| owned(item, sub)),
                    );
                } else if let Some(v) = key.strip_prefix("v:") {
                    // An item of a set, by its value.
                    if let Ok(v) = serde_json::from_str::<Value>(v) {
                        out.push(v);
                    }
                }
            }
            Value::Array(out)
        }
        other => other.clone(),
    }
}

/// The host and port of `--webhook-dev-host`: `host`, `host:port` or `[ipv6]:port`; `port`
/// when it gives none.
fn address(flag: &str, port: u16) -> anyhow::Result<(String, u16)> {
    let bad = |why: &str| {
        anyhow::anyhow!(
            "--webhook-dev-host={flag}: {why}, as in --webhook-dev-host=127.0.0.1 or --webhook-dev-host=tunnel.example.com:9443"
        )
    };
    if flag.parse::<std::net::Ipv6Addr>().is_ok() {
        return Ok((flag.to_string(), port));
    }
    let (host, given) = match flag.rsplit_once(':') {
        Some((host, p)) => {
            let p = p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("the port must be a number from 1 to 65535"))?;
            (host.trim_start_matches('[').trim_end_matches(']'), p)
        }
        None => (flag, port),
    };
    if host.is_empty() {
        return Err(bad("give a host"));
    }
    Ok((host.to_string(), given))
}

/// A certificate authority of this run and a serving certificate for `host` (and localhost)
/// signed by it, PEM-encoded: the CA's certificate, the certificate and its key.
fn certificates(host: &str) -> anyhow::Result<(String, String, String)> {
    let not_before = SystemTime::now() - Duration::from_secs(300);
    let not_after = SystemTime::now() + VALIDITY;
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name
        .push(DnType::CommonName, format!("{PROJECT_NAME}-make-run"));
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    (ca.not_before, ca.not_after) = (not_before.into(), not_after.into());
    let ca_pem = ca.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let mut server = CertificateParams::new(vec![host.to_string(), "localhost".to_string()])?;
    server.distinguished_name.push(DnType::CommonName, host);
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    (server.not_before, server.not_after) = (not_before.into(), not_after.into());
    let cert_pem = server.signed_by(&key, &issuer)?.pem();
    Ok((ca_pem, cert_pem, key.serialize_pem()))
}

/// Tells this run's configurations from those of other machines and checkouts.
fn instance_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_default();
    let dir = std::env::current_dir().unwrap_or_default();
    // FNV-1a, 32 bits, as the Go layout's.
    let mut hash = Fnv32(0x811c_9dc5);
    hash.write(host.trim().as_bytes());
    hash.write(&[0]);
    hash.write(dir.as_os_str().as_encoded_bytes());
    format!("{:08x}", hash.0)
}

struct Fnv32(u32);

impl Hasher for Fnv32 {
    fn finish(&self) -> u64 {
        u64::from(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u32::from(*b)).wrapping_mul(0x0100_0193);
        }
    }
}

/// The address at which the API server of `client` reaches this machine, and why it was chosen
/// (see [`choose_host`]).
async fn detect_host(client: &Client) -> anyhow::Result<(String, String)> {
    let config = kube::Config::infer().await?;
    let api_host = config.cluster_url.host().unwrap_or_default().to_string();
    let api_server: Vec<IpAddr> = tokio::net::lookup_host((api_host.trim_matches(['[', ']']), 443))
        .await
        .with_context(|| format!("resolving the API server's host {api_host}"))?
        .map(|a| a.ip())
        .collect();
    // Best effort: who may not list nodes gets the rules about the API server's address.
    let nodes: Vec<IpAddr> = match Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
    {
        Ok(nodes) => nodes
            .iter()
            .flat_map(|n| n.status.iter().flat_map(|s| s.addresses.iter().flatten()))
            .filter(|a| a.type_ == "InternalIP")
            .filter_map(|a| a.address.parse().ok())
            .collect(),
        Err(_) => Vec::new(),
    };
    choose_host(&api_host, &api_server, &nodes, is_local, on_link)
}

/// Whether `ip` is one of this machine's addresses (only those can be bound).
fn is_local(ip: IpAddr) -> bool {
    ip.is_loopback() || UdpSocket::bind((ip, 0)).is_ok()
}

/// This machine's address on a network that holds `ip` directly (no router between), if one
/// does: the source address of a route to it without a gateway (Linux; elsewhere none).
fn on_link(ip: IpAddr) -> Option<IpAddr> {
    if !direct_route(ip) {
        return None;
    }
    let socket = UdpSocket::bind(match ip {
        IpAddr::V4(_) => "0.0.0.0:0",
        IpAddr::V6(_) => "[::]:0",
    })
    .ok()?;
    // Connecting a UDP socket sends nothing: it only picks the route and its source address.
    socket.connect((ip, 9)).ok()?;
    let source = socket.local_addr().ok()?.ip();
    (!source.is_loopback()).then_some(source)
}

/// Whether the kernel's routing table (/proc/net/route, /proc/net/ipv6_route) has a route to
/// `ip` through no gateway, other than a default route.
fn direct_route(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => {
            let Ok(table) = std::fs::read_to_string("/proc/net/route") else {
                return false;
            };
            let ip = u32::from_le_bytes(ip.octets());
            table.lines().skip(1).any(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let hex = |i: usize| f.get(i).and_then(|v| u32::from_str_radix(v, 16).ok());
                matches!((hex(1), hex(2), hex(7)), (Some(dest), Some(0), Some(mask)) if mask != 0 && ip & mask == dest)
            })
        }
        IpAddr::V6(ip) => {
            let Ok(table) = std::fs::read_to_string("/proc/net/ipv6_route") else {
                return false;
            };
            let ip = u128::from_be_bytes(ip.octets());
            table.lines().any(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let hex = |i: usize| f.get(i).and_then(|v| u128::from_str_radix(v, 16).ok());
                let len = f.get(1).and_then(|v| u32::from_str_radix(v, 16).ok());
                match (hex(0), len, hex(4)) {
                    (Some(dest), Some(len @ 1..=128), Some(0)) => {
                        let mask = u128::MAX << (128 - len);
                        ip & mask == dest
                    }
                    _ => false,
                }
            })
        }
    }
}

/// The rule of `auto`: this machine's address on a network that holds a node (that is not this
/// machine); the API server's address when it is this machine's (unless the nodes it lists are
/// all elsewhere: then it is only forwarded here, as kind's on Docker Desktop); this machine's
/// address on the API server's network. Else an error asking for the address.
fn choose_host(
    api_host: &str,
    api_server: &[IpAddr],
    nodes: &[IpAddr],
    is_local: impl Fn(IpAddr) -> bool,
    on_link: impl Fn(IpAddr) -> Option<IpAddr>,
) -> anyhow::Result<(String, String)> {
    for &ip in nodes {
        if !is_local(ip)
            && let Some(mine) = on_link(ip)
        {
            return Ok((
                mine.to_string(),
                format!("the node {ip} is on a network of this machine"),
            ));
        }
    }
    let node_here = nodes.iter().any(|&ip| is_local(ip));
    if let Some(&ip) = api_server.iter().find(|&&ip| is_local(ip)) {
        if let Some(node) = nodes.first().filter(|_| !node_here) {
            anyhow::bail!(
                "the API server answers on this machine ({ip}) but its nodes ({node}) are on no network of this machine: a cluster in a VM or in containers of Docker Desktop (kind, minikube)? Pass the address at which they reach this machine, as in make run WEBHOOK_DEV_HOST=host.docker.internal"
            );
        }
        return Ok((
            ip.to_string(),
            format!("the API server ({ip}) runs on this machine"),
        ));
    }
    for &ip in api_server {
        if let Some(mine) = on_link(ip) {
            return Ok((
                mine.to_string(),
                format!("the API server ({ip}) is on a network of this machine"),
            ));
        }
    }
    anyhow::bail!(
        "cannot tell at which address the API server ({api_host}) reaches this machine: forward a port of a host it reaches to this machine's webhook port (a tunnel, e.g. `ssh -R 9443:localhost:9443 HOST`) and pass that address, as in make run WEBHOOK_DEV_HOST=HOST:9443"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::pem::PemObject;

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter()
            .map(|a| a.parse().expect("an address"))
            .collect()
    }

    #[test]
    fn auto_finds_the_address_the_cluster_reaches() {
        // This machine: loopback, 10.200.0.1 and 192.168.1.10/24; kind's bridge 172.18.0.1/16.
        let local = |ip: IpAddr| {
            ip.is_loopback() || ips(&["10.200.0.1", "192.168.1.10", "172.18.0.1"]).contains(&ip)
        };
        let link = |ip: IpAddr| match ip.to_string() {
            a if a.starts_with("172.18.") => Some(ips(&["172.18.0.1"])[0]),
            a if a.starts_with("192.168.1.") => Some(ips(&["192.168.1.10"])[0]),
            _ => None,
        };
        let host = |api: &[&str], nodes: &[&str]| {
            choose_host("server", &ips(api), &ips(nodes), local, link).map(|(h, _)| h)
        };
        assert_eq!(
            host(&["127.0.0.1"], &["172.18.0.2"]).unwrap(),
            "172.18.0.1",
            "kind"
        );
        assert_eq!(
            host(&["127.0.0.1"], &[]).unwrap(),
            "127.0.0.1",
            "a control plane here"
        );
        assert_eq!(
            host(&["10.200.0.1"], &["10.200.0.1"]).unwrap(),
            "10.200.0.1",
            "a node here"
        );
        assert_eq!(
            host(&["192.168.1.50"], &[]).unwrap(),
            "192.168.1.10",
            "on the LAN"
        );
        let docker_desktop = host(&["127.0.0.1"], &["192.168.65.3"]).unwrap_err();
        assert!(
            docker_desktop
                .to_string()
                .contains("WEBHOOK_DEV_HOST=host.docker.internal")
        );
        let remote = host(&["203.0.113.10"], &["10.0.0.5"]).unwrap_err();
        assert!(
            remote.to_string().contains("WEBHOOK_DEV_HOST=HOST:9443"),
            "{remote}"
        );
    }

    #[test]
    fn the_flag_gives_a_host_and_maybe_a_port() {
        let ok = |flag: &str| address(flag, 9443).unwrap();
        assert_eq!(ok("127.0.0.1"), ("127.0.0.1".into(), 9443));
        assert_eq!(
            ok("host.docker.internal"),
            ("host.docker.internal".into(), 9443)
        );
        assert_eq!(
            ok("tunnel.example.com:443"),
            ("tunnel.example.com".into(), 443)
        );
        assert_eq!(ok("[::1]:19443"), ("::1".into(), 19443));
        assert_eq!(ok("::1"), ("::1".into(), 9443));
        for bad in ["tunnel.example.com:https", "127.0.0.1:0", ":9443"] {
            assert!(address(bad, 9443).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn the_certificate_is_made_for_the_host() {
        let (ca, cert, key) = certificates("172.18.0.1").unwrap();
        assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(Certificate::from_pem(cert.as_bytes(), key.as_bytes()).is_ok());
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        let leaf = rustls::pki_types::CertificateDer::pem_slice_iter(cert.as_bytes())
            .next()
            .unwrap()
            .unwrap();
        let now = rustls::pki_types::UnixTime::now();
        for name in ["172.18.0.1", "localhost"] {
            let name = rustls::pki_types::ServerName::try_from(name).unwrap();
            verifier
                .verify_server_cert(&leaf, &[], &name, &[], now)
                .unwrap_or_else(|e| panic!("not valid for {name:?}: {e}"));
        }
        let other = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        assert!(
            verifier
                .verify_server_cert(&leaf, &[], &other, &[], now)
                .is_err()
        );
    }

    #[test]
    fn configurations_left_by_a_killed_run_are_found() {
        let now = Timestamp::now();
        let meta = |instance: &str, alive: Option<Timestamp>| ObjectMeta {
            labels: Some(BTreeMap::from([(
                LABEL_RUN.to_string(),
                instance.to_string(),
            )])),
            annotations: alive
                .map(|t| BTreeMap::from([(ANNOTATION_ALIVE.to_string(), t.to_string())])),
            ..ObjectMeta::default()
        };
        let ago = |secs: i64| Some(now - k8s_openapi::jiff::SignedDuration::from_secs(secs));
        assert!(
            left_over(&meta("mine", Some(now)), "mine", now),
            "this instance's"
        );
        assert!(
            !left_over(&meta("theirs", ago(60)), "mine", now),
            "another run's, renewed"
        );
        assert!(
            left_over(&meta("theirs", ago(300)), "mine", now),
            "another run's, stale"
        );
        assert!(
            left_over(&meta("theirs", None), "mine", now),
            "another run's, never renewed"
        );
    }

    #[test]
    fn the_fields_a_manager_owns_are_extracted() {
        let crd = json!({
            "metadata": { "name": "ships.example.com", "annotations": { "a": "1", "b": "2" } },
            "spec": {
                "group": "example.com",
                "versions": [{ "name": "v1", "served": true }, { "name": "v2", "served": false }],
                "conversion": { "strategy": "Webhook", "webhook": { "clientConfig": { "service": { "name": "s", "port": 443 } } } },
            },
            "status": { "storedVersions": ["v1"] },
        });
        let fields = json!({
            "f:metadata": { "f:annotations": { ".": {}, "f:a": {} } },
            "f:spec": {
                "f:group": {},
                "f:versions": { "k:{\"name\":\"v1\"}": { ".": {}, "f:name": {}, "f:served": {} } },
                "f:conversion": { "f:strategy": {}, "f:webhook": { "f:clientConfig": { "f:service": { "f:name": {} } } } },
            },
        });
        let got = owned(&crd, fields.as_object().unwrap());
        assert_eq!(
            got,
            json!({
                "metadata": { "annotations": { "a": "1" } },
                "spec": {
                    "group": "example.com",
                    "versions": [{ "name": "v1", "served": true }],
                    "conversion": { "strategy": "Webhook", "webhook": { "clientConfig": { "service": { "name": "s" } } } },
                },
            })
        );
        let mut crd = crd;
        crd["metadata"]["managedFields"] = json!([
            { "manager": "kube-apiserver", "operation": "Update", "subresource": "status", "fieldsV1": { "f:status": {} } },
            { "manager": "someone", "operation": "Update", "fieldsV1": fields },
        ]);
        assert!(
            client_config_applier(&crd).is_none(),
            "nobody applied the client config"
        );
        crd["metadata"]["managedFields"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "manager": "kubectl", "operation": "Apply", "fieldsV1": fields }));
        assert_eq!(
            client_config_applier(&crd).map(|(m, _)| m).as_deref(),
            Some("kubectl")
        );
    }
}
