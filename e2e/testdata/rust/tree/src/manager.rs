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

//! The manager's machinery: what every controller shares ([`Context`]), the metrics, the
//! HTTP server of the health probes and metrics, and leader election on a Lease.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::events::{Recorder, Reporter};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The name the manager reports as in events, and its field manager for server-side apply.
pub const MANAGER_NAME: &str = "guestbook-manager";

/// What every controller shares.
#[derive(Clone)]
pub struct Context {
    pub client: Client,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    pub backoff: Arc<Backoff>,
}

impl Context {
    pub fn new(client: Client, metrics: Arc<Metrics>) -> Context {
        let reporter = Reporter {
            controller: MANAGER_NAME.into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            metrics,
            backoff: Arc::default(),
        }
    }
}

/// Exponential backoff per object after failed reconciliations, as controller-runtime's rate
/// limiter: 5 ms, doubling with each failure in a row, at most 1000 s; reset by a success.
#[derive(Default)]
pub struct Backoff {
    failures: Mutex<HashMap<String, u32>>,
}

impl Backoff {
    /// The delay before retrying `key` after one more failure.
    pub fn next(&self, key: &str) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = failures.entry(key.to_string()).or_default();
        *n = n.saturating_add(1);
        let ms = 5u64.saturating_mul(1u64 << (*n - 1).min(30));
        Duration::from_millis(ms.min(1_000_000))
    }

    /// Forget the failures of `key` after a success.
    pub fn reset(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }
}

type Labels = Vec<(String, String)>;

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 12))
}

/// Prometheus metrics of the controllers, served on /metrics.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    durations: Family<Labels, Histogram, fn() -> Histogram>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::default();
        let reconciles = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let durations = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(
            duration_histogram,
        );
        registry.register(
            "controller_runtime_reconcile",
            "Reconciliations per controller",
            reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Reconciliations that failed, per controller",
            errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Time a reconciliation took, per controller",
            durations.clone(),
        );
        Metrics {
            registry,
            reconciles,
            errors,
            durations,
        }
    }
}

impl Metrics {
    /// Count one reconciliation of `controller` that started at `started`.
    pub fn reconciled(&self, controller: &str, started: Instant, ok: bool) {
        let labels = vec![("controller".to_string(), controller.to_string())];
        self.reconciles.get_or_create(&labels).inc();
        if !ok {
            self.errors.get_or_create(&labels).inc();
        }
        self.durations
            .get_or_create(&labels)
            .observe(started.elapsed().as_secs_f64());
    }

    /// The metrics in Prometheus' text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// Resolves on SIGTERM (Kubernetes stopping the pod) or Ctrl-C.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    tracing::info!("shutting down");
}

/// A shutdown signal every controller can wait on.
pub type Shutdown = futures::future::Shared<futures::future::BoxFuture<'static, ()>>;

/// A bind address as the Go manager takes it: `:8081` listens on every interface, `0` is off.
pub fn bind_address(flag: &str) -> Option<String> {
    match flag {
        "" | "0" => None,
        a if a.starts_with(':') => Some(format!("0.0.0.0{a}")),
        a => Some(a.to_string()),
    }
}

/// What the HTTP server answers: the probes, and the metrics when `metrics` is set.
#[derive(Clone)]
pub struct Endpoints {
    pub ready: Arc<AtomicBool>,
    pub metrics: Option<Arc<Metrics>>,
}

/// Serve `/healthz`, `/readyz` and (with metrics) `/metrics` over plain HTTP on `addr`.
pub async fn serve(addr: String, endpoints: Endpoints) -> anyhow::Result<()> {
    let listener = TcpListener::bind(&addr).await?;
    tracing::info!(%addr, "serving HTTP");
    loop {
        let (mut stream, _) = listener.accept().await?;
        let endpoints = endpoints.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut len = 0;
            // Read the request head (bounded); only its first line matters.
            while len < buf.len() {
                match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf[len..]))
                    .await
                {
                    Ok(Ok(n)) if n > 0 => len += n,
                    _ => break,
                }
                if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buf[..len]);
            let path = head.split_whitespace().nth(1).unwrap_or("/");
            let (status, body) = match path {
                "/healthz" => ("200 OK", "ok".to_string()),
                "/readyz" if endpoints.ready.load(Ordering::Relaxed) => {
                    ("200 OK", "ok".to_string())
                }
                "/readyz" => ("503 Service Unavailable", "not ready".to_string()),
                "/metrics" => match &endpoints.metrics {
                    Some(m) => ("200 OK", m.render()),
                    None => ("404 Not Found", "not found".to_string()),
                },
                _ => ("404 Not Found", "not found".to_string()),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        });
    }
}

/// Leader election on a coordination.k8s.io Lease, as controller-runtime does it: the holder
/// renews the Lease every `retry` period; another manager takes it over once it has not been
/// renewed for `duration`.
pub struct LeaderElection {
    api: Api<Lease>,
    name: String,
    identity: String,
    duration: Duration,
    retry: Duration,
}

impl LeaderElection {
    pub fn new(client: Client, namespace: &str, name: &str) -> LeaderElection {
        let host = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_else(|_| "manager".into());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        LeaderElection {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            identity: format!("{host}_{:08x}", nanos ^ std::process::id()),
            duration: Duration::from_secs(15),
            retry: Duration::from_secs(2),
        }
    }

    /// Wait until this manager holds the Lease.
    pub async fn acquire(&self) {
        tracing::info!(lease = %self.name, identity = %self.identity, "waiting to become the leader");
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "leader election: cannot read or write the Lease")
                }
            }
            tokio::time::sleep(self.retry).await;
        }
        tracing::info!(lease = %self.name, "became the leader");
    }

    /// Keep renewing the Lease; returns when it is lost, or could not be renewed for the lease
    /// duration (another manager may hold it by then).
    pub async fn keep(&self) {
        let mut last = Instant::now();
        loop {
            tokio::time::sleep(self.retry).await;
            match self.try_acquire_or_renew().await {
                Ok(true) => last = Instant::now(),
                Ok(false) => {
                    tracing::error!(lease = %self.name, "another manager holds the Lease now");
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "leader election: cannot renew the Lease");
                    if last.elapsed() > self.duration {
                        return;
                    }
                }
            }
        }
    }

    /// Take the Lease when it is free or expired, renew it when held: whether we hold it now.
    async fn try_acquire_or_renew(&self) -> kube::Result<bool> {
        let now = MicroTime(Timestamp::now());
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now.clone(), now, 0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let next = if holder == self.identity {
            self.spec(
                spec.acquire_time.unwrap_or(now.clone()),
                now,
                spec.lease_transitions.unwrap_or(0),
            )
        } else {
            let duration =
                SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(15)));
            let expired = spec
                .renew_time
                .as_ref()
                .is_none_or(|t| t.0 + duration < now.0);
            if !holder.is_empty() && !expired {
                return Ok(false);
            }
            self.spec(now.clone(), now, spec.lease_transitions.unwrap_or(0) + 1)
        };
        lease.spec = Some(next);
        // The resourceVersion read above makes this a compare-and-swap.
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn spec(&self, acquired: MicroTime, renewed: MicroTime, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(self.duration.as_secs() as i32),
            acquire_time: Some(acquired),
            renew_time: Some(renewed),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}
