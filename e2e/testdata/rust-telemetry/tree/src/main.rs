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

//! The manager: runs every controller of the project until it is told to stop.

use clap::Parser;
use clap::builder::BoolishValueParser;
use futures::FutureExt;
use std::net::{Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use guestbook::controllers;
use guestbook::leader_election::LeaderElection;
use guestbook::local_webhooks;
use guestbook::manager::{self, Health, LogFormat, Metrics};
use guestbook::server;
use guestbook::telemetry;
use guestbook::tls::{CertFiles, Certificate};
use guestbook::webhook::{self, Cluster};

/// The manager's flags, named as the Go manager's so that config/ works for both. The boolean
/// flags take `--flag` or `--flag=true|false`, as Go's do.
#[derive(Debug, Parser)]
#[command(version, about = "Runs the controllers of guestbook")]
struct Flags {
    /// Where the metrics endpoint listens (`:8443`); `0` switches it off.
    #[arg(long, default_value = "0")]
    metrics_bind_address: String,
    /// Serve the metrics over HTTPS to authenticated and authorized clients only (a bearer
    /// token the API server authenticates, allowed to get /metrics); `false` for plain HTTP.
    #[arg(long, default_value = "true", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = BoolishValueParser::new())]
    metrics_secure: bool,
    /// The directory of the metrics server's certificate [default: a self-signed one].
    #[arg(long)]
    metrics_cert_path: Option<PathBuf>,
    /// The certificate file in --metrics-cert-path.
    #[arg(long, default_value = "tls.crt")]
    metrics_cert_name: String,
    /// The key file in --metrics-cert-path.
    #[arg(long, default_value = "tls.key")]
    metrics_cert_key: String,
    /// Where the health probes (/healthz, /readyz) listen; `0` switches them off.
    #[arg(long, default_value = ":8081")]
    health_probe_bind_address: String,
    /// Run the controllers only while holding the leader-election Lease, so that one of
    /// several replicas is active at a time.
    #[arg(long, default_value = "false", num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = BoolishValueParser::new())]
    leader_elect: bool,
    /// Namespace of the leader-election Lease [default: the manager's own (POD_NAMESPACE),
    /// else the kubeconfig's namespace].
    #[arg(long)]
    leader_election_namespace: Option<String>,
    /// How many objects each controller reconciles at once (controller-runtime's
    /// MaxConcurrentReconciles); each object by one of them at a time.
    #[arg(long, default_value_t = controllers::MAX_CONCURRENT_RECONCILES, value_parser = clap::value_parser!(u16).range(1..))]
    max_concurrent_reconciles: u16,
    /// The port of the webhook server (when the project has webhooks); `-1` switches it off
    /// (the helm chart's `webhook.enabled: false`).
    #[arg(long, default_value_t = 9443, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-1..=65535))]
    webhook_port: i32,
    /// The directory of the webhook server's certificate; a renewed certificate there is
    /// served without a restart.
    #[arg(long, default_value = webhook::DEFAULT_CERT_DIR)]
    webhook_cert_path: PathBuf,
    /// Serve the webhooks from this machine (make run): the address at which the API server
    /// reaches it (host or host:port), or `auto` to find it. The manager makes a certificate
    /// for it and points webhook configurations of its own and the CRDs' conversion at itself
    /// until it stops (src/local_webhooks.rs).
    #[arg(long, conflicts_with = "webhook_cert_path")]
    webhook_dev_host: Option<String>,
    /// The certificate file in --webhook-cert-path.
    #[arg(long, default_value = "tls.crt")]
    webhook_cert_name: String,
    /// The key file in --webhook-cert-path.
    #[arg(long, default_value = "tls.key")]
    webhook_cert_key: String,
    /// How the logs are written (to stderr): lines of text, or JSON objects.
    #[arg(long, value_enum, default_value = "console")]
    zap_encoder: LogFormat,
    /// The log level: debug, info, error, a verbosity (1 is debug), or a RUST_LOG directive
    /// such as `info,kube=debug` [default: RUST_LOG, else info].
    #[arg(long)]
    zap_log_level: Option<String>,
}

/// The name of the leader-election Lease.
const LEADER_ELECTION_ID: &str = "5727742e.example.com";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    let _telemetry = telemetry::init(flags.zap_encoder, flags.zap_log_level.as_deref())?;
    let client = kube::Client::try_default().await?;
    let metrics = Arc::new(Metrics::default());
    let health = Arc::new(Health::default());
    // SIGTERM (Kubernetes stopping the pod) or Ctrl-C; under make run also SIGHUP.
    let hangup = local_webhooks::hangup(flags.webhook_dev_host.is_some());
    let shutdown = futures::future::select(manager::shutdown_signal().boxed(), hangup.boxed())
        .map(drop)
        .boxed()
        .shared();

    // A namespace-scoped manager (config/manager sets WATCH_NAMESPACE to its own namespace)
    // watches that namespace only, with the Role of `make manifests`.
    let watched = std::env::var("WATCH_NAMESPACE")
        .ok()
        .filter(|n| !n.is_empty());
    match &watched {
        Some(namespace) => tracing::info!(%namespace, "watching one namespace (WATCH_NAMESPACE)"),
        None => tracing::info!("watching every namespace"),
    }
    let ctx = manager::Context::new(client.clone(), metrics.clone())
        .watching(watched)
        .reconciling_at_once(flags.max_concurrent_reconciles);

    // Every port is bound before anything runs: one that is taken is an error at start.
    // With --webhook-port=-1 no webhook server starts, as the Go manager's.
    let webhook_port = u16::try_from(flags.webhook_port).ok();
    let routes = match webhook_port {
        Some(_) => guestbook::webhooks::routes(),
        None => Vec::new(),
    };
    if !routes.is_empty() {
        health.set(
            "webhooks",
            Some("the webhook server is not listening yet".into()),
        );
    }
    if let Some(listener) = server::bind(
        "--health-probe-bind-address",
        &flags.health_probe_bind_address,
    )
    .await?
    {
        let health = health.clone();
        let handler = move |request| server::probe(request, health.clone());
        tokio::spawn(server::serve(
            listener,
            server::plain(None),
            handler,
            std::future::pending(),
        ));
    }
    if let Some(listener) =
        server::bind("--metrics-bind-address", &flags.metrics_bind_address).await?
    {
        let (tls, access) = if flags.metrics_secure {
            let certificate = match &flags.metrics_cert_path {
                Some(dir) => Certificate::from_files(CertFiles {
                    dir: dir.clone(),
                    cert: flags.metrics_cert_name.clone(),
                    key: flags.metrics_cert_key.clone(),
                })
                .map_err(|e| anyhow::anyhow!("--metrics-cert-path: {e}"))?,
                None => Certificate::self_signed(&["localhost", "127.0.0.1"])?,
            };
            let access = server::Access::Reviewed(server::Reviewer::new(client.clone()));
            (Some(certificate.acceptor()?), access)
        } else {
            (None, server::Access::Anyone)
        };
        tracing::info!(address = %listener.local_addr()?, secure = flags.metrics_secure, "serving metrics");
        let handler = move |request| server::metrics(request, metrics.clone(), access.clone());
        tokio::spawn(server::serve(
            listener,
            server::plain(tls),
            handler,
            std::future::pending(),
        ));
    }
    // Webhooks are served by every replica, leader or not, as controller-runtime does, on
    // every address (IPv6 and IPv4). At shutdown the server keeps answering a few seconds while
    // the endpoints drop the unready pod, then answers the reviews under way and stops.
    let webhooks = if routes.is_empty() {
        None
    } else {
        let files = CertFiles {
            dir: flags.webhook_cert_path.clone(),
            cert: flags.webhook_cert_name.clone(),
            key: flags.webhook_cert_key.clone(),
        };
        let port = webhook_port.unwrap_or_default();
        let address = SocketAddr::from((Ipv6Addr::UNSPECIFIED, port));
        let cluster = Cluster::new(client.clone(), ctx.caches.clone());
        let (server, local) = match &flags.webhook_dev_host {
            // make run: a certificate made for this machine (src/local_webhooks.rs).
            Some(host) => {
                let local = local_webhooks::Local::prepare(
                    client.clone(),
                    host,
                    port,
                    &guestbook::webhooks::webhooks(),
                    &guestbook::webhooks::conversions(),
                )
                .await?;
                let certificate = local.certificate();
                let server =
                    webhook::Server::bind_certificate(address, certificate, routes, cluster)
                        .await?;
                (server, Some(local))
            }
            None => (
                webhook::Server::bind(address, files, routes, cluster).await?,
                None,
            ),
        };
        health.set("webhooks", None);
        match local {
            // make run: the webhooks are registered in the cluster once the server answers, and
            // the server answers until they are removed again (no endpoints to wait for).
            Some(mut local) => {
                let (removed, stopping) = tokio::sync::oneshot::channel::<()>();
                let serving = tokio::spawn(server.serve(stopping.map(drop)));
                local.register().await?;
                tokio::spawn({
                    let shutdown = shutdown.clone();
                    async move {
                        local.keep(shutdown).await;
                        let _ = removed.send(());
                    }
                });
                Some(serving)
            }
            None => {
                let stopping = shutdown
                    .clone()
                    .then(|()| tokio::time::sleep(webhook::SHUTDOWN_DELAY));
                Some(tokio::spawn(server.serve(stopping)))
            }
        }
    };
    tracing::info!("serving HTTP (probes, metrics, webhooks)");

    // From the shutdown signal on, the manager is not ready: no new traffic is sent to it.
    tokio::spawn({
        let (health, shutdown) = (health.clone(), shutdown.clone());
        async move {
            shutdown.await;
            health.set("shutdown", Some("the manager is stopping".into()));
        }
    });

    if flags.leader_elect {
        let namespace = flags
            .leader_election_namespace
            .or_else(|| std::env::var("POD_NAMESPACE").ok())
            .unwrap_or_else(|| client.default_namespace().to_string());
        let election = LeaderElection::new(client, &namespace, LEADER_ELECTION_ID);
        // A standby replica waits for the Lease; its probes and webhooks answer meanwhile.
        let renewed = tokio::select! {
            renewed = election.acquire() => Some(renewed),
            _ = shutdown.clone() => None,
        };
        if let Some(renewed) = renewed {
            tokio::select! {
                _ = controllers::run_all(ctx, shutdown.clone()) => {}
                lost = election.keep(renewed) => {
                    // As client-go: stop acting as the leader before the Lease can expire.
                    // Leaving this select has dropped the controllers, and with them every
                    // reconcile under way; the manager exits, to be restarted as a candidate.
                    tracing::error!(lease = LEADER_ELECTION_ID, reason = %lost, "leader election lost: the controllers are stopped; exiting");
                    std::process::exit(1);
                }
            }
            tracing::info!("every controller stopped");
            // The controllers have finished: hand the Lease over at once.
            election.release().await;
        }
    } else {
        controllers::run_all(ctx, shutdown.clone()).await;
        tracing::info!("every controller stopped");
    }
    if let Some(webhooks) = webhooks {
        webhooks.await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boolean_flags_read_as_gos() {
        let flags = Flags::parse_from(["manager"]);
        assert!(flags.metrics_secure);
        assert!(!flags.leader_elect);
        let flags = Flags::parse_from(["manager", "--metrics-secure=false", "--leader-elect"]);
        assert!(!flags.metrics_secure);
        assert!(flags.leader_elect);
        let flags = Flags::parse_from(["manager", "--leader-elect=true"]);
        assert!(flags.leader_elect);
    }

    #[test]
    fn each_controller_reconciles_a_bounded_number_of_objects_at_once() {
        let flags = Flags::parse_from(["manager"]);
        assert_eq!(
            flags.max_concurrent_reconciles,
            controllers::MAX_CONCURRENT_RECONCILES
        );
        let flags = Flags::parse_from(["manager", "--max-concurrent-reconciles=16"]);
        assert_eq!(flags.max_concurrent_reconciles, 16);
        // 0 would be kube-runtime's "no limit".
        assert!(Flags::try_parse_from(["manager", "--max-concurrent-reconciles=0"]).is_err());
        assert!(Flags::try_parse_from(["manager", "--max-concurrent-reconciles=65536"]).is_err());
    }

    #[test]
    fn webhook_port_minus_one_switches_the_webhook_server_off() {
        assert_eq!(Flags::parse_from(["manager"]).webhook_port, 9443);
        let flags = Flags::parse_from(["manager", "--webhook-port=-1"]);
        assert_eq!(flags.webhook_port, -1);
        assert!(u16::try_from(flags.webhook_port).is_err());
        assert!(Flags::try_parse_from(["manager", "--webhook-port=-2"]).is_err());
        assert!(Flags::try_parse_from(["manager", "--webhook-port=65536"]).is_err());
    }

    #[test]
    fn the_log_flags_are_the_go_managers() {
        let flags = Flags::parse_from(["manager", "--zap-encoder=json", "--zap-log-level=debug"]);
        assert_eq!(flags.zap_encoder, LogFormat::Json);
        assert_eq!(flags.zap_log_level.as_deref(), Some("debug"));
    }
}
