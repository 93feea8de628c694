/*
Copyright 2026.

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

//! The manager's own webhook certificate in the cluster (certs.opbuilder.io/v1-alpha), in place
//! of cert-manager (`--webhook-cert-secret`, `--webhook-service`): every replica keeps one
//! certificate authority and one serving certificate in a Secret of the manager's namespace,
//! serves that certificate (swapped in the TLS server with no restart and no volume), and
//! writes the authority into the caBundle of every webhook configuration and CRD conversion
//! that calls the manager's webhook Service.
//!
//! Replicas agree through the Secret alone: a replica creates it when it is missing and
//! changes it only with the resourceVersion it read, so of two replicas racing one write wins
//! and the other reads the winner's certificate at once. No leader election is needed, and a
//! replica that is not the leader serves the same certificate.
//!
//! Rotation drops no admission request: the serving certificate is renewed under the same
//! authority (the caBundle does not change); a new authority (the old one near its expiry, or
//! the Secret deleted) joins the caBundle next to the old one first (`bundle-extended`); the
//! serving certificate moves to it only once this replica found the extended bundle in every
//! caBundle and [`ROTATION_GRACE`] has passed (`serving-moved`); the old authority leaves the
//! bundle [`ROTATION_GRACE`] after that. The Secret's keys and its annotation are those of the
//! Go layout's manager.

use crate::manager::Health;
use crate::rbac::Rule;
use crate::tls::Certificate;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ServiceReference, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use kube::{Client, ResourceExt};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// What the manager needs besides its controllers to write the caBundles (`make manifests`
/// adds it to config/rbac/role.yaml). The Secret is granted by the Role of
/// config/rbac/webhook_cert_role.yaml, in the manager's namespace only.
pub const RBAC: &[Rule] = &[
    Rule {
        groups: &["admissionregistration.k8s.io"],
        resources: &[
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
        ],
        verbs: &["get", "list", "update"],
    },
    Rule {
        groups: &["apiextensions.k8s.io"],
        resources: &["customresourcedefinitions"],
        verbs: &["get", "list", "update"],
    },
];

/// Keys of the Secret: the caBundle (one or two authorities), the authority that signs and its
/// key, and the serving certificate and key (those of a `kubernetes.io/tls` Secret).
pub const KEY_BUNDLE: &str = "ca.crt";
pub const KEY_SIGNER_CRT: &str = "signer.crt";
pub const KEY_SIGNER_KEY: &str = "signer.key";
pub const KEY_TLS_CRT: &str = "tls.crt";
pub const KEY_TLS_KEY: &str = "tls.key";
/// Records a rotation of the authority under way: its step and since when
/// (`bundle-extended 2026-01-02T03:04:05Z`, then `serving-moved ...`).
pub const ANNOTATION_ROTATION: &str = "opbuilder.io/webhook-ca-rotation";
pub const STEP_EXTENDED: &str = "bundle-extended";
pub const STEP_MOVED: &str = "serving-moved";

/// How long an authority lasts; a new one is made when a fifth of it is left.
pub const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// How long each step of an authority's rotation waits for every API server and every replica
/// to have seen the step before.
pub const ROTATION_GRACE: Duration = Duration::from_secs(60);
/// How long a serving certificate lasts; it is renewed when a third is left.
pub const SERVING_VALIDITY: Duration = Duration::from_secs(90 * 24 * 3600);
/// How often each replica reads the Secret and checks the caBundles.
pub const CHECK_EVERY: Duration = Duration::from_secs(10);
/// Certificates are valid from a little before they are made, for clocks a little behind.
const CLOCK_SKEW: Duration = Duration::from_secs(300);
/// The readiness check of this module.
const CHECK: &str = "webhook-certs";

/// Where the certificate lives and whom it serves.
#[derive(Debug, Clone)]
pub struct Options {
    /// The Secret, in the manager's namespace (`--webhook-cert-secret`).
    pub secret: String,
    /// The webhook Service, in the manager's namespace (`--webhook-service`): the certificate
    /// names it, and the caBundle goes to the webhooks and CRD conversions that call it.
    pub service: String,
    /// The manager's namespace.
    pub namespace: String,
    /// How long a serving certificate lasts.
    pub validity: Duration,
}

impl Options {
    /// The options of `--webhook-cert-secret` and `--webhook-service`, in the manager's
    /// namespace: `POD_NAMESPACE`, else its service account's.
    pub fn new(secret: &str, service: &str) -> anyhow::Result<Options> {
        let namespace = match std::env::var("POD_NAMESPACE") {
            Ok(ns) if !ns.is_empty() => ns,
            _ => std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                .map(|ns| ns.trim().to_string())
                .map_err(|e| {
                    anyhow::anyhow!(
                        "--webhook-cert-secret keeps the certificate in the manager's namespace, which is unknown outside a pod: set POD_NAMESPACE ({e})"
                    )
                })?,
        };
        Ok(Options {
            secret: secret.to_string(),
            service: service.to_string(),
            namespace,
            validity: SERVING_VALIDITY,
        })
    }

    /// The names the serving certificate holds: the Service's in-cluster names.
    fn hosts(&self) -> Vec<String> {
        let svc = format!("{}.{}.svc", self.service, self.namespace);
        vec![svc.clone(), format!("{svc}.cluster.local")]
    }
}

/// Keep the webhook certificate in the Secret of `options` until the process ends: returns the
/// certificate the webhook server presents (a stand-in until the Secret is read), and reports
/// the readiness check `webhook-certs` to `health`, which passes once this replica serves the
/// Secret's certificate and has found its bundle in every caBundle.
pub fn start(
    client: Client,
    options: Options,
    health: Arc<Health>,
) -> anyhow::Result<Arc<Certificate>> {
    let hosts = options.hosts();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let certificate = Certificate::self_signed(&names)?;
    health.set(
        CHECK,
        Some("the webhook certificate is not read from its Secret yet".into()),
    );
    tracing::info!(secret = %format!("{}/{}", options.namespace, options.secret), service = %options.service, "keeping the webhook certificate in a Secret");
    let mut keeper = Keeper {
        client,
        options,
        certificate: certificate.clone(),
        health,
        last: BTreeMap::new(),
        injected: None,
        ready: false,
    };
    tokio::spawn(async move {
        let mut every = tokio::time::interval(CHECK_EVERY);
        loop {
            every.tick().await;
            // A write that lost a race is read back at once.
            for _ in 0..3 {
                match keeper.round().await {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::error!(error = %e, "keeping the webhook certificate; trying again shortly")
                    }
                }
                break;
            }
        }
    });
    Ok(certificate)
}

/// The Secret's data, as the rotation reads and advances it.
pub type Data = BTreeMap<String, Vec<u8>>;

/// A replica's keeping of the certificate.
struct Keeper {
    client: Client,
    options: Options,
    certificate: Arc<Certificate>,
    health: Arc<Health>,
    /// The Secret's data last read: what this replica rebuilds the Secret from when it is
    /// deleted, so that the certificate it serves stays trusted through the rotation.
    last: Data,
    /// The bundle every caBundle held at the last check (`None`: some did not).
    injected: Option<Vec<u8>>,
    /// The certificate was served and its bundle found everywhere once: a caBundle that cannot
    /// be written later does not take the pod out of its Service.
    ready: bool,
}

impl Keeper {
    /// Read the Secret, advance it (creating it when missing), serve its certificate and write
    /// its bundle into the caBundles. `Ok(true)`: a write lost a race, read again.
    async fn round(&mut self) -> anyhow::Result<bool> {
        let o = &self.options;
        let secrets = Api::<Secret>::namespaced(self.client.clone(), &o.namespace);
        let read = secrets.get_opt(&o.secret).await?;
        let missing = read.is_none();
        let mut secret = read.unwrap_or_else(|| Secret {
            metadata: ObjectMeta {
                name: Some(o.secret.clone()),
                namespace: Some(o.namespace.clone()),
                ..ObjectMeta::default()
            },
            type_: Some("kubernetes.io/tls".into()),
            ..Secret::default()
        });
        let mut data: Data = match &secret.data {
            Some(d) => d.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect(),
            // Rebuilt from what this replica serves, so that it stays trusted while the new
            // authority is rolled out.
            None if missing => self
                .last
                .iter()
                .filter(|(k, _)| *k != KEY_SIGNER_CRT && *k != KEY_SIGNER_KEY)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            None => Data::new(),
        };
        let annotations = secret.metadata.annotations.get_or_insert_default();
        let mut rotation = annotations.get(ANNOTATION_ROTATION).cloned();
        let injected = !missing
            && self.injected.as_deref() == data.get(KEY_BUNDLE).map(Vec::as_slice)
            && self.injected.is_some();
        let changed = advance(
            &mut data,
            &mut rotation,
            injected,
            Timestamp::now(),
            &self.options,
        )?;
        match &rotation {
            Some(r) => annotations.insert(ANNOTATION_ROTATION.into(), r.clone()),
            None => annotations.remove(ANNOTATION_ROTATION),
        };
        secret.data = Some(
            data.iter()
                .map(|(k, v)| (k.clone(), ByteString(v.clone())))
                .collect(),
        );
        let written = if missing {
            secrets
                .create(&PostParams::default(), &secret)
                .await
                .map(drop)
        } else if changed {
            secrets
                .replace(&o.secret, &PostParams::default(), &secret)
                .await
                .map(drop)
        } else {
            Ok(())
        };
        match written {
            Err(kube::Error::Api(e)) if e.code == 409 => return Ok(true),
            Err(e) => return Err(anyhow::anyhow!("writing Secret {}: {e}", o.secret)),
            Ok(()) if missing || changed => {
                tracing::info!(secret = %o.secret, rotation = rotation.as_deref().unwrap_or(""), "wrote the webhook certificate's Secret")
            }
            Ok(()) => {}
        }

        let (cert, key) = (field(&data, KEY_TLS_CRT), field(&data, KEY_TLS_KEY));
        if self.last.get(KEY_TLS_CRT).map(Vec::as_slice) != Some(cert) {
            self.certificate
                .replace(cert, key)
                .map_err(|e| anyhow::anyhow!("the certificate in Secret {}: {e}", o.secret))?;
            tracing::info!(secret = %o.secret, "serving the Secret's webhook certificate");
        }
        let bundle = field(&data, KEY_BUNDLE).to_vec();
        let injection = self.inject(&bundle).await;
        self.last = data;
        self.injected = injection.is_ok().then_some(bundle);
        if injection.is_ok() && !self.ready {
            self.ready = true;
            self.health.set(CHECK, None);
        } else if !self.ready {
            self.health.set(
                CHECK,
                Some("the caBundles do not hold the webhook certificate's authority yet".into()),
            );
        }
        injection.map(|()| false)
    }

    /// Write `bundle` into the caBundle of every webhook and CRD conversion that calls the
    /// Service: an error unless all of them hold it.
    async fn inject(&self, bundle: &[u8]) -> anyhow::Result<()> {
        let ours = |s: Option<&ServiceReference>| {
            s.is_some_and(|s| {
                s.name == self.options.service && s.namespace == self.options.namespace
            })
        };
        let mut failed = Vec::new();
        let mutating = Api::<MutatingWebhookConfiguration>::all(self.client.clone());
        for mut o in mutating.list(&ListParams::default()).await? {
            let bundles = o
                .webhooks
                .iter_mut()
                .flatten()
                .filter(|w| ours(w.client_config.service.as_ref()))
                .map(|w| &mut w.client_config.ca_bundle);
            if set_bundles(bundles, bundle) {
                failed.extend(write(&mutating, &o).await);
            }
        }
        let validating = Api::<ValidatingWebhookConfiguration>::all(self.client.clone());
        for mut o in validating.list(&ListParams::default()).await? {
            let bundles = o
                .webhooks
                .iter_mut()
                .flatten()
                .filter(|w| ours(w.client_config.service.as_ref()))
                .map(|w| &mut w.client_config.ca_bundle);
            if set_bundles(bundles, bundle) {
                failed.extend(write(&validating, &o).await);
            }
        }
        let crds = Api::<CustomResourceDefinition>::all(self.client.clone());
        for mut o in crds.list(&ListParams::default()).await? {
            let bundles = o
                .spec
                .conversion
                .iter_mut()
                .filter_map(|c| c.webhook.as_mut()?.client_config.as_mut())
                .filter(|c| {
                    c.service.as_ref().is_some_and(|s| {
                        s.name == self.options.service && s.namespace == self.options.namespace
                    })
                })
                .map(|c| &mut c.ca_bundle);
            if set_bundles(bundles, bundle) {
                failed.extend(write(&crds, &o).await);
            }
        }
        anyhow::ensure!(failed.is_empty(), "{}", failed.join("; "));
        Ok(())
    }
}

/// Set each of `bundles` to `bundle`: whether any was different.
fn set_bundles<'a>(
    bundles: impl Iterator<Item = &'a mut Option<ByteString>>,
    bundle: &[u8],
) -> bool {
    let mut stale = false;
    for b in bundles {
        if b.as_ref().map(|b| b.0.as_slice()) != Some(bundle) {
            *b = Some(ByteString(bundle.to_vec()));
            stale = true;
        }
    }
    stale
}

/// Write `o`, whose caBundles changed: the reason when it cannot be (a conflict is left to the
/// next round).
async fn write<K>(api: &Api<K>, o: &K) -> Option<String>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    match api.replace(&o.name_any(), &PostParams::default(), o).await {
        Ok(_) => {
            tracing::info!(object = %o.name_any(), "wrote the caBundle");
            None
        }
        Err(e) => Some(format!("writing the caBundle of {}: {e}", o.name_any())),
    }
}

fn field<'a>(data: &'a Data, key: &str) -> &'a [u8] {
    data.get(key).map(Vec::as_slice).unwrap_or_default()
}

/// Bring the Secret's `data` and `rotation` (its annotation) to what they must hold at `now`:
/// an authority that is not near its expiry, a serving certificate of the bundle that is not
/// near its expiry, and the next step of a rotation under way once `injected` (every caBundle
/// holds the Secret's bundle, checked by this replica) and its grace is over. Whether anything
/// changed.
pub fn advance(
    data: &mut Data,
    rotation: &mut Option<String>,
    injected: bool,
    now: Timestamp,
    options: &Options,
) -> anyhow::Result<bool> {
    let hosts = options.hosts();
    let mut bundle = parse_bundle(field(data, KEY_BUNDLE), now);
    let signer = Authority::decode(
        field(data, KEY_SIGNER_CRT),
        field(data, KEY_SIGNER_KEY),
        &options.secret,
        now,
    )
    .filter(|a| now < a.not_after - signed(CA_VALIDITY / 5));
    let issue = |data: &mut Data, signer: &Authority| -> anyhow::Result<()> {
        let (cert, key) = signer.issue(&hosts, options.validity, now)?;
        data.insert(KEY_TLS_CRT.into(), cert.into_bytes());
        data.insert(KEY_TLS_KEY.into(), key.into_bytes());
        Ok(())
    };
    let (step, since) = rotation_step(rotation.as_deref());
    let step = step.map(str::to_string);

    let Some(signer) = signer else {
        // No authority, one that cannot be read, or one near its expiry: a new one.
        let signer = Authority::new(&options.secret, now)?;
        data.insert(KEY_SIGNER_CRT.into(), signer.pem.clone().into_bytes());
        data.insert(
            KEY_SIGNER_KEY.into(),
            signer.key.serialize_pem().into_bytes(),
        );
        let served = !bundle.is_empty() && serves_under(data, &bundle, &hosts, now, Duration::ZERO);
        bundle.push(signer.pem.clone());
        if served {
            // The serving certificate stays while some API server may not trust the new
            // authority.
            *rotation = Some(format!("{STEP_EXTENDED} {}", stamp(now)));
        } else {
            // Nothing served yet (a new install): the new authority serves at once.
            bundle = vec![signer.pem.clone()];
            *rotation = None;
            issue(data, &signer)?;
        }
        data.insert(KEY_BUNDLE.into(), bundle.concat().into_bytes());
        return Ok(true);
    };

    let mut changed = false;
    let grace_over =
        injected && since.is_some_and(|s| now.duration_since(s) >= signed(ROTATION_GRACE));
    match step.as_deref() {
        Some(STEP_EXTENDED) if grace_over => {
            // Every API server trusts the new authority: serve under it.
            issue(data, &signer)?;
            *rotation = Some(format!("{STEP_MOVED} {}", stamp(now)));
            changed = true;
        }
        Some(STEP_MOVED) if grace_over => {
            // Every replica serves under the new authority: the old one goes.
            bundle = vec![signer.pem.clone()];
            *rotation = None;
            changed = true;
        }
        None if !serves_under(
            data,
            std::slice::from_ref(&signer.pem),
            &hosts,
            now,
            options.validity / 3,
        ) =>
        {
            // A serving certificate near its expiry (or missing) is renewed under the same
            // authority: the caBundle does not change.
            issue(data, &signer)?;
            changed = true;
        }
        _ => {}
    }
    let der = |pem: &str| CertificateDer::from_pem_slice(pem.as_bytes()).ok();
    if !bundle.iter().any(|b| der(b) == der(&signer.pem)) {
        bundle.push(signer.pem.clone());
    }
    let encoded = bundle.concat().into_bytes();
    if data.get(KEY_BUNDLE) != Some(&encoded) {
        data.insert(KEY_BUNDLE.into(), encoded);
        changed = true;
    }
    Ok(changed)
}

fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

/// `now` to the second, in RFC 3339, as the annotation holds it.
fn stamp(now: Timestamp) -> String {
    Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// The step of a rotation under way and since when, from its annotation.
pub fn rotation_step(value: Option<&str>) -> (Option<&str>, Option<Timestamp>) {
    match value.and_then(|v| v.split_once(' ')) {
        Some((step, at)) => match at.parse::<Timestamp>() {
            Ok(since) => (Some(step), Some(since)),
            Err(_) => (None, None),
        },
        None => (None, None),
    }
}

fn system_time(t: Timestamp) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(t.as_second()).unwrap_or(0))
}

/// A certificate authority of the Secret: its certificate (PEM), its key and its expiry.
struct Authority {
    pem: String,
    key: KeyPair,
    not_after: Timestamp,
}

/// The parameters of an authority named `name`: the same for the authority made and the one
/// read back from the Secret, so that what it signs names it as its issuer.
fn authority_params(name: &str) -> anyhow::Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

impl Authority {
    /// A new authority named `name`, valid for [`CA_VALIDITY`] from `now`.
    fn new(name: &str, now: Timestamp) -> anyhow::Result<Authority> {
        let key = KeyPair::generate()?;
        let mut params = authority_params(name)?;
        // To the second, as the certificate holds it.
        let not_after = Timestamp::from_second((now + signed(CA_VALIDITY)).as_second())?;
        params.not_before = (system_time(now) - CLOCK_SKEW).into();
        params.not_after = system_time(not_after).into();
        let pem = params.self_signed(&key)?.pem();
        Ok(Authority {
            pem,
            key,
            not_after,
        })
    }

    /// The authority of the Secret, when it is one this module made (its key signs what its
    /// certificate's name and key verify) and it is valid at `now`.
    fn decode(cert: &[u8], key: &[u8], name: &str, now: Timestamp) -> Option<Authority> {
        let pem = String::from_utf8(cert.to_vec()).ok()?;
        let key = KeyPair::from_pem(std::str::from_utf8(key).ok()?).ok()?;
        let der = CertificateDer::from_pem_slice(cert).ok()?;
        let not_after = not_after(&der)?;
        let authority = Authority {
            pem,
            key,
            not_after,
        };
        let probe = ["probe.invalid".to_string()];
        let (leaf, _) = authority
            .issue(&probe, Duration::from_secs(3600), now)
            .ok()?;
        let trusted = verifies(leaf.as_bytes(), &[authority.pem.as_str()], &probe[0], now);
        (trusted && now < not_after && pem_names(&authority.pem, name)).then_some(authority)
    }

    /// A serving certificate for `hosts` and its key (PEM), valid for `validity` from `now`
    /// but never past the authority's own expiry.
    fn issue(
        &self,
        hosts: &[String],
        validity: Duration,
        now: Timestamp,
    ) -> anyhow::Result<(String, String)> {
        let issuer = Issuer::new(authority_params_of(&self.pem)?, &self.key);
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(hosts.to_vec())?;
        if let Some(host) = hosts.first() {
            params
                .distinguished_name
                .push(DnType::CommonName, host.as_str());
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.not_before = (system_time(now) - CLOCK_SKEW).into();
        params.not_after = system_time((now + signed(validity)).min(self.not_after)).into();
        let cert = params.signed_by(&key, &issuer)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// The parameters of the authority whose certificate is `pem` (named after its Secret).
fn authority_params_of(pem: &str) -> anyhow::Result<CertificateParams> {
    let der = CertificateDer::from_pem_slice(pem.as_bytes())?;
    let name = common_name(&der).ok_or_else(|| anyhow::anyhow!("an authority with no name"))?;
    authority_params(&name)
}

/// Whether the authority of `pem` is named `name`.
fn pem_names(pem: &str, name: &str) -> bool {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .ok()
        .and_then(|der| common_name(&der))
        .is_some_and(|n| n == name)
}

/// Whether the serving certificate of `data` is signed by one of `authorities` (PEM), names
/// every host, and is valid beyond `renew_before` from `now`.
fn serves_under(
    data: &Data,
    authorities: &[String],
    hosts: &[String],
    now: Timestamp,
    renew_before: Duration,
) -> bool {
    let (cert, key) = (field(data, KEY_TLS_CRT), field(data, KEY_TLS_KEY));
    if Certificate::from_pem(cert, key).is_err() {
        return false;
    }
    let authorities: Vec<&str> = authorities.iter().map(String::as_str).collect();
    let at = now + signed(renew_before);
    hosts
        .iter()
        .all(|h| verifies(cert, &authorities, h, at) && verifies(cert, &authorities, h, now))
}

/// Whether the first certificate of `cert` (PEM) is valid for `host` at `at` under one of
/// `authorities` (PEM), as an API server checks a webhook's.
pub fn verifies(cert: &[u8], authorities: &[&str], host: &str, at: Timestamp) -> bool {
    let mut roots = rustls::RootCertStore::empty();
    for a in authorities {
        for c in CertificateDer::pem_slice_iter(a.as_bytes()).flatten() {
            let _ = roots.add(c);
        }
    }
    let Ok(leaf) = CertificateDer::from_pem_slice(cert) else {
        return false;
    };
    let Ok(name) = ServerName::try_from(host.to_string()) else {
        return false;
    };
    let Ok(verifier) = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build() else {
        return false;
    };
    let when = UnixTime::since_unix_epoch(Duration::from_secs(
        u64::try_from(at.as_second()).unwrap_or(0),
    ));
    verifier
        .verify_server_cert(&leaf, &[], &name, &[], when)
        .is_ok()
}

/// The authorities of a caBundle (PEM blocks) that are not expired at `now`.
pub fn parse_bundle(bundle: &[u8], now: Timestamp) -> Vec<String> {
    let text = String::from_utf8_lossy(bundle);
    let mut blocks = Vec::new();
    let mut block = String::new();
    for line in text.lines().map(str::trim_end) {
        if line.starts_with("-----BEGIN ") {
            block.clear();
        }
        block.push_str(line);
        block.push('\n');
        if line.starts_with("-----END ") {
            let alive = CertificateDer::from_pem_slice(block.as_bytes())
                .ok()
                .and_then(|der| not_after(&der))
                .is_some_and(|t| now < t);
            if alive {
                blocks.push(std::mem::take(&mut block));
            }
        }
    }
    blocks
}

/// One DER element of `b`: its tag, its content and what follows it.
fn der_element(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = b.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |len, &byte| (len << 8) | usize::from(byte));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The elements of a certificate's TBSCertificate: version (when given), serial, signature
/// algorithm, issuer, validity, subject, ...
fn tbs_elements(der: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let (_, certificate, _) = der_element(der)?;
    let (_, mut tbs, _) = der_element(certificate)?;
    let mut elements = Vec::new();
    while let Some((tag, content, rest)) = der_element(tbs) {
        // The version is [0]; without it the certificate is a v1 one.
        if tag != 0xa0 {
            elements.push((tag, content));
        }
        tbs = rest;
    }
    Some(elements)
}

/// When a certificate (DER) expires.
fn not_after(der: &[u8]) -> Option<Timestamp> {
    let elements = tbs_elements(der)?;
    let (_, validity) = elements.get(3)?;
    let (_, _, rest) = der_element(validity)?;
    let (tag, time, _) = der_element(rest)?;
    let time = std::str::from_utf8(time).ok()?.strip_suffix('Z')?;
    // UTCTime (YYMMDDHHMMSS) before 2050, GeneralizedTime (YYYYMMDDHHMMSS) from 2050 on.
    let full = match (tag, time.len()) {
        (0x17, 12) => {
            let year: u32 = time[..2].parse().ok()?;
            format!("{}{time}", if year < 50 { "20" } else { "19" })
        }
        (0x18, 14) => time.to_string(),
        _ => return None,
    };
    let f = |r: std::ops::Range<usize>| full.get(r);
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        f(0..4)?,
        f(4..6)?,
        f(6..8)?,
        f(8..10)?,
        f(10..12)?,
        f(12..14)?
    )
    .parse()
    .ok()
}

/// The common name of a certificate's (DER) subject.
fn common_name(der: &[u8]) -> Option<String> {
    const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
    let elements = tbs_elements(der)?;
    let (_, mut subject) = *elements.get(4)?;
    while let Some((_, set, rest)) = der_element(subject) {
        let (_, attribute, _) = der_element(set)?;
        let (_, oid, value) = der_element(attribute)?;
        if oid == COMMON_NAME {
            let (_, name, _) = der_element(value)?;
            return String::from_utf8(name.to_vec()).ok();
        }
        subject = rest;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVICE_HOST: &str = "webhook-service.system.svc";

    fn options() -> Options {
        Options {
            secret: "webhook-server-cert".into(),
            service: "webhook-service".into(),
            namespace: "system".into(),
            validity: SERVING_VALIDITY,
        }
    }

    /// Whether the serving certificate of `data` verifies against `bundle` for the Service.
    fn trusted(data: &Data, bundle: &[u8], at: Timestamp) -> bool {
        let bundle = String::from_utf8_lossy(bundle).into_owned();
        verifies(
            field(data, KEY_TLS_CRT),
            &[bundle.as_str()],
            SERVICE_HOST,
            at,
        )
    }

    fn after(now: Timestamp, d: Duration) -> Timestamp {
        now + signed(d)
    }

    #[test]
    fn rotation_never_serves_what_the_injected_bundle_does_not_trust() {
        let o = options();
        let now = Timestamp::now();
        let (mut data, mut rotation) = (Data::new(), None);

        // A new install: an authority and a certificate under it at once.
        assert!(advance(&mut data, &mut rotation, false, now, &o).unwrap());
        assert!(trusted(&data, field(&data, KEY_BUNDLE), now));
        assert!(rotation.is_none());
        assert!(
            !advance(&mut data, &mut rotation, true, now, &o).unwrap(),
            "a Secret in order changed"
        );

        // The Secret is deleted: rebuilt from what was served, the new authority joins the
        // bundle and the certificate stays.
        let injected = data[KEY_BUNDLE].clone();
        let served = data[KEY_TLS_CRT].clone();
        let mut rebuilt: Data = data
            .iter()
            .filter(|(k, _)| *k != KEY_SIGNER_CRT && *k != KEY_SIGNER_KEY)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut rotation = None;
        assert!(advance(&mut rebuilt, &mut rotation, false, now, &o).unwrap());
        assert_eq!(rotation_step(rotation.as_deref()).0, Some(STEP_EXTENDED));
        assert_eq!(
            rebuilt[KEY_TLS_CRT], served,
            "the certificate changed before the new bundle was injected"
        );
        assert!(trusted(&rebuilt, &injected, now));
        assert_eq!(parse_bundle(&rebuilt[KEY_BUNDLE], now).len(), 2);
        let extended = rebuilt[KEY_BUNDLE].clone();

        // Not injected, or injected within the grace: nothing moves.
        let hour = Duration::from_secs(3600);
        assert!(!advance(&mut rebuilt, &mut rotation, false, after(now, hour), &o).unwrap());
        assert!(
            !advance(
                &mut rebuilt,
                &mut rotation,
                true,
                after(now, ROTATION_GRACE / 2),
                &o
            )
            .unwrap()
        );

        // Injected and the grace over: the certificate moves under the new authority, which the
        // extended bundle trusts; then the old authority leaves the bundle.
        let later = after(now, ROTATION_GRACE);
        assert!(advance(&mut rebuilt, &mut rotation, true, later, &o).unwrap());
        assert_eq!(rotation_step(rotation.as_deref()).0, Some(STEP_MOVED));
        assert!(trusted(&rebuilt, &extended, later));
        assert!(
            !trusted(&rebuilt, &injected, later),
            "the moved certificate is still under the old authority"
        );
        let later = after(later, ROTATION_GRACE);
        assert!(advance(&mut rebuilt, &mut rotation, true, later, &o).unwrap());
        assert!(rotation.is_none());
        assert_eq!(parse_bundle(&rebuilt[KEY_BUNDLE], later).len(), 1);
        assert!(trusted(&rebuilt, &rebuilt[KEY_BUNDLE], later));

        // A certificate with a third of its validity left is renewed under the same authority.
        let bundle = rebuilt[KEY_BUNDLE].clone();
        let renewal = after(later, o.validity * 2 / 3 + Duration::from_secs(60));
        assert!(advance(&mut rebuilt, &mut rotation, true, renewal, &o).unwrap());
        assert_eq!(rebuilt[KEY_BUNDLE], bundle, "a renewal changed the bundle");
        assert!(trusted(&rebuilt, &bundle, renewal));
        assert!(rotation.is_none());
    }

    #[test]
    fn an_authority_near_its_expiry_is_rotated_through_the_bundle() {
        let o = options();
        let now = Timestamp::now();
        // A serving certificate as long as the authority, so that it is still served when a
        // fifth of the authority's life is left.
        let o = Options {
            validity: CA_VALIDITY,
            ..o
        };
        let (mut data, mut rotation) = (Data::new(), None);
        advance(&mut data, &mut rotation, false, now, &o).unwrap();
        let served = data[KEY_TLS_CRT].clone();
        let late = after(now, CA_VALIDITY * 4 / 5 + Duration::from_secs(3600));
        assert!(advance(&mut data, &mut rotation, true, late, &o).unwrap());
        assert_eq!(rotation_step(rotation.as_deref()).0, Some(STEP_EXTENDED));
        assert_eq!(parse_bundle(&data[KEY_BUNDLE], late).len(), 2);
        assert_eq!(
            data[KEY_TLS_CRT], served,
            "the certificate moved before the bundle was injected"
        );
        assert!(trusted(&data, &data[KEY_BUNDLE], late));
    }

    #[test]
    fn a_secret_that_cannot_be_read_gets_a_new_authority() {
        let o = options();
        let now = Timestamp::now();
        let mut data = Data::from([
            (KEY_SIGNER_CRT.to_string(), b"not a certificate".to_vec()),
            (KEY_SIGNER_KEY.to_string(), b"not a key".to_vec()),
        ]);
        let mut rotation = Some("serving-moved garbage".to_string());
        assert!(advance(&mut data, &mut rotation, true, now, &o).unwrap());
        assert!(
            rotation.is_none(),
            "nothing was served: the new authority serves at once"
        );
        assert!(trusted(&data, &data[KEY_BUNDLE], now));
        // The authority read back is the one written.
        let signer =
            Authority::decode(&data[KEY_SIGNER_CRT], &data[KEY_SIGNER_KEY], &o.secret, now)
                .expect("the authority reads back");
        assert!(pem_names(&signer.pem, "webhook-server-cert"));
        assert!(
            Authority::decode(&data[KEY_SIGNER_CRT], &data[KEY_SIGNER_KEY], "another", now)
                .is_none()
        );
    }

    #[test]
    fn the_rotation_annotation_reads_as_it_is_written() {
        let now = Timestamp::from_second(1_767_323_045).unwrap();
        let value = format!("{STEP_EXTENDED} {}", stamp(now));
        assert_eq!(value, "bundle-extended 2026-01-02T03:04:05Z");
        assert_eq!(
            rotation_step(Some(value.as_str())),
            (Some(STEP_EXTENDED), Some(now))
        );
        assert_eq!(
            rotation_step(Some("bundle-extended yesterday")),
            (None, None)
        );
        assert_eq!(rotation_step(None), (None, None));
    }

    #[test]
    fn expired_authorities_leave_the_bundle() {
        let now = Timestamp::now();
        let a = Authority::new("a", now).unwrap();
        let bundle = format!("{}{}", a.pem, a.pem);
        assert_eq!(parse_bundle(bundle.as_bytes(), now).len(), 2);
        assert!(parse_bundle(bundle.as_bytes(), after(now, CA_VALIDITY * 2)).is_empty());
        assert_eq!(
            not_after(&CertificateDer::from_pem_slice(a.pem.as_bytes()).unwrap()),
            Some(a.not_after)
        );
    }
}
