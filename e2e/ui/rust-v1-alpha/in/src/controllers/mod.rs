//! The controllers: one module per kind. `opbuilder create api` adds each module, its run and
//! its RBAC above the marker lines; keep them.

use crate::manager::{Context, Shutdown};
use crate::rbac::Rule;
use futures::future::BoxFuture;
use std::time::Duration;

// +kubebuilder:scaffold:controller-modules

/// How long the controllers may take to finish once the manager stops: the reconciles under
/// way finish, and a controller whose first list never completed (kube-runtime holds it until
/// then) is dropped, within the pod's termination grace period (10 s in config/manager).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(4);

/// Run every controller until `shutdown`; returns once all have finished, or at most
/// [`SHUTDOWN_GRACE`] after `shutdown`.
pub async fn run_all(ctx: Context, shutdown: Shutdown) {
    let controllers: Vec<BoxFuture<'static, ()>> = vec![
        // +kubebuilder:scaffold:controllers
    ];
    if controllers.is_empty() {
        tracing::warn!("no controllers yet: add one with `opbuilder create api`");
        // Until a controller is added, `ctx` has nothing to do.
        let _ = &ctx;
        shutdown.await;
        return;
    }
    let grace = async {
        shutdown.await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        _ = futures::future::join_all(controllers) => {}
        _ = grace => tracing::warn!(
            grace = ?SHUTDOWN_GRACE,
            "the controllers had not finished when the manager stopped: stopped"
        ),
    }
}

/// The RBAC rules of every controller and of the manager: `make manifests` writes them to
/// config/rbac/role.yaml.
pub fn rbac() -> Vec<&'static [Rule]> {
    vec![
        crate::rbac::MANAGER,
        // +kubebuilder:scaffold:rbac
    ]
}
