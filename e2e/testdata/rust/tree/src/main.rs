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
use futures::FutureExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use guestbook::controllers;
use guestbook::manager;

/// The manager's flags, named as the Go manager's so that config/ works for both.
#[derive(Debug, Parser)]
#[command(version, about = "Runs the controllers of guestbook")]
struct Flags {
    /// Where the metrics endpoint listens (`:8080`); `0` switches it off.
    #[arg(long, default_value = "0")]
    metrics_bind_address: String,
    /// Where the health probes (/healthz, /readyz) listen.
    #[arg(long, default_value = ":8081")]
    health_probe_bind_address: String,
    /// Run the controllers only while holding the leader-election Lease, so that one of
    /// several replicas is active at a time.
    #[arg(long)]
    leader_elect: bool,
    /// Namespace of the leader-election Lease [default: the manager's own (POD_NAMESPACE),
    /// else the kubeconfig's namespace].
    #[arg(long)]
    leader_election_namespace: Option<String>,
    /// The port of the webhook server (when the project has webhooks).
    #[arg(long, default_value_t = 9443)]
    webhook_port: u16,
    /// The directory of the webhook server's certificate (tls.crt, tls.key); a renewed
    /// certificate there is served without a restart.
    #[arg(long, default_value = guestbook::webhook::DEFAULT_CERT_DIR)]
    webhook_cert_path: std::path::PathBuf,
}

/// The name of the leader-election Lease.
const LEADER_ELECTION_ID: &str = "5727742e.example.com";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let flags = Flags::parse();
    let client = kube::Client::try_default().await?;
    let metrics = Arc::new(manager::Metrics::default());
    let ready = Arc::new(AtomicBool::new(false));

    if let Some(addr) = manager::bind_address(&flags.health_probe_bind_address) {
        let endpoints = manager::Endpoints {
            ready: ready.clone(),
            metrics: None,
        };
        tokio::spawn(async move {
            if let Err(e) = manager::serve(addr, endpoints).await {
                tracing::error!(error = %e, "health probe server stopped");
            }
        });
    }
    if let Some(addr) = manager::bind_address(&flags.metrics_bind_address) {
        let endpoints = manager::Endpoints {
            ready: ready.clone(),
            metrics: Some(metrics.clone()),
        };
        tokio::spawn(async move {
            if let Err(e) = manager::serve(addr, endpoints).await {
                tracing::error!(error = %e, "metrics server stopped");
            }
        });
    }

    // Webhooks are served by every replica, leader or not, as controller-runtime does.
    let routes = guestbook::webhooks::routes();
    if !routes.is_empty() {
        let (port, dir) = (flags.webhook_port, flags.webhook_cert_path.clone());
        tokio::spawn(async move {
            if let Err(e) = guestbook::webhook::serve(port, dir, routes).await {
                tracing::error!(error = %e, "webhook server stopped");
                std::process::exit(1);
            }
        });
    }

    let election = if flags.leader_elect {
        let namespace = flags
            .leader_election_namespace
            .or_else(|| std::env::var("POD_NAMESPACE").ok())
            .unwrap_or_else(|| client.default_namespace().to_string());
        Some(manager::LeaderElection::new(
            client.clone(),
            &namespace,
            LEADER_ELECTION_ID,
        ))
    } else {
        None
    };
    // SIGTERM (Kubernetes stopping the pod) or Ctrl-C: every controller finishes the
    // reconciliations under way, then the manager exits.
    let shutdown = manager::shutdown_signal().boxed().shared();
    // The probes answer while a standby replica waits for the Lease.
    ready.store(true, Ordering::Relaxed);
    if let Some(election) = &election {
        tokio::select! {
            _ = election.acquire() => {}
            _ = shutdown.clone() => return Ok(()),
        }
    }

    let ctx = manager::Context::new(client, metrics);
    tokio::select! {
        _ = controllers::run_all(ctx, shutdown) => tracing::info!("every controller stopped"),
        _ = async {
            match &election {
                Some(e) => e.keep().await,
                None => std::future::pending().await,
            }
        } => {
            // As controller-runtime: a manager that lost its Lease exits, and is restarted.
            anyhow::bail!("lost the leader-election Lease {LEADER_ELECTION_ID}");
        }
    }
    Ok(())
}
