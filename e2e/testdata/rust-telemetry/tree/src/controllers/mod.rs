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

//! The controllers: one module per kind. `opbuilder create api` adds each module, its run and
//! its RBAC above the marker lines; keep them.

use crate::manager::{Context, Shutdown};
use crate::rbac::Rule;
use futures::future::BoxFuture;
use std::time::Duration;

pub mod deployment;
pub mod guestbook;
// +kubebuilder:scaffold:controller-modules

/// How many objects each controller reconciles at once, unless `--max-concurrent-reconciles`
/// says otherwise (a controller may set its own: `ctx.controller_config().concurrency(n)`).
/// kube-runtime's default sets no limit: the first list of thousands of objects, and each
/// relist, would start as many reconciles at once, each with its requests to the API server
/// (kube's client holds a connection per request in flight), to be throttled there by priority
/// and fairness, with the memory of all of them in the manager. controller-runtime runs one
/// worker per controller; a reconcile spends most of its time waiting for the API server, so a
/// few keep the first sync of many objects short while the requests in flight stay few. An
/// object is never reconciled by two of them at once.
/// TODO(user): raise it for a controller with many objects and short reconciles, lower it to 1
/// for one whose reconciles must not overlap.
pub const MAX_CONCURRENT_RECONCILES: u16 = 4;

/// How long the controllers may take to finish once the manager stops: the reconciles under
/// way finish, and a controller whose first list never completed (kube-runtime holds it until
/// then) is dropped, within the pod's termination grace period (10 s in config/manager).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(4);

/// Run every controller until `shutdown`; returns once all have finished, or at most
/// [`SHUTDOWN_GRACE`] after `shutdown`.
pub async fn run_all(ctx: Context, shutdown: Shutdown) {
    let controllers: Vec<BoxFuture<'static, ()>> = vec![
        futures::FutureExt::boxed(guestbook::run(ctx.clone(), shutdown.clone())),
        futures::FutureExt::boxed(deployment::run(ctx.clone(), shutdown.clone())),
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
        guestbook::RBAC,
        deployment::RBAC,
        // +kubebuilder:scaffold:rbac
    ]
}
