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

//! The Memcached controller (deploy-image/v1-alpha): runs the operand image of each Memcached
//! (cache.example.com/v1alpha1) as a Deployment the object owns, with `spec.size` replicas, and
//! reports it in the status conditions `Available` and `Degraded`.

use crate::api::cache::v1alpha1::{Memcached, MemcachedStatus};
use crate::manager::{Context, MANAGER_NAME, Shutdown};
use crate::rbac::Rule;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, PodSecurityContext, PodSpec, PodTemplateSpec, SeccompProfile,
    SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The controller's name in logs and metrics, unique among the manager's controllers.
pub const NAME: &str = "cache-memcached";

/// The name of the watch of the Deployments this controller made, in the logs and metrics.
const OWNED: &str = "cache-memcached-deployments";

/// The finalizer that makes the API server wait for [`cleanup`] before deleting an object, as
/// go/v4's deploy-image controller has it. The object, its namespace and its CRD stay
/// Terminating while no manager runs: delete the objects before the manager (`make undeploy`).
pub const FINALIZER: &str = "cache.example.com/finalizer";

/// The variable of the manager's environment holding the operand image
/// (config/manager/manager.yaml sets it).
pub const IMAGE_VAR: &str = "MEMCACHED_IMAGE";

/// The name of the operand's container, and of its port.
pub const CONTAINER: &str = "memcached";

/// The `app.kubernetes.io/managed-by` label of the Deployments this controller makes: it
/// watches only those.
pub const MANAGED_BY: &str = "MemcachedController";

/// The operand's command and its arguments.
pub const COMMAND: &[&str] = &["memcached", "--memory-limit=64", "-o", "modern", "-v"];

/// The user the operand's container runs as.
pub const RUN_AS_USER: i64 = 1001;

/// The condition types this controller sets.
pub const AVAILABLE: &str = "Available";
pub const DEGRADED: &str = "Degraded";

/// What this controller may do, written to config/rbac/role.yaml by `make manifests`: watch
/// the Memcached objects, add and remove their finalizer, apply their status; apply and watch
/// their Deployments; read Pods.
/// TODO(user): add the rules of what the reconcile reads or changes besides.
pub const RBAC: &[Rule] = &[
    Rule {
        groups: &["cache.example.com"],
        resources: &["memcacheds"],
        verbs: &["list", "patch", "watch"],
    },
    Rule {
        groups: &["cache.example.com"],
        resources: &["memcacheds/status"],
        verbs: &["patch"],
    },
    // The Deployment's owner reference blocks the object's deletion: the API server asks for
    // this where it enforces it (the OwnerReferencesPermissionEnforcement admission plugin, on
    // in OpenShift and in the tests' control plane).
    Rule {
        groups: &["cache.example.com"],
        resources: &["memcacheds/finalizers"],
        verbs: &["update"],
    },
    Rule {
        groups: &["apps"],
        resources: &["deployments"],
        verbs: &["create", "list", "patch", "watch"],
    },
    Rule {
        groups: &[""],
        resources: &["pods"],
        verbs: &["get", "list", "watch"],
    },
];

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    #[error("the environment variable {var} with the operand image is not set", var = IMAGE_VAR)]
    NoImage,
}

/// What the reconciles share: the manager's context and the operand image.
pub struct Data {
    pub ctx: Context,
    /// The operand image; `None` when the manager has no [`IMAGE_VAR`].
    pub image: Option<String>,
}

/// Run the controller until `shutdown`, with the operand image of [`IMAGE_VAR`].
pub async fn run(ctx: Context, shutdown: Shutdown) {
    run_with_image(ctx, shutdown, std::env::var(IMAGE_VAR).ok()).await
}

/// Run the controller until `shutdown`, deploying `image`.
pub async fn run_with_image(ctx: Context, shutdown: Shutdown, image: Option<String>) {
    let api = ctx.watched::<Memcached>();
    let (reader, changes) = ctx.watch(NAME, api, watcher::Config::default());
    // The Deployments this controller made: a change to one reconciles its owner. Their
    // watch's failures are reported as the controller's own watch's.
    let made =
        watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGED_BY}"));
    let deployments = watcher(ctx.watched::<Deployment>(), made).default_backoff();
    let deployments = ctx.observe(OWNED, deployments).touched_objects();
    let controller = Controller::for_stream(changes, reader)
        .owns_stream(deployments)
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(shutdown);
    let data = Arc::new(Data { ctx, image });
    data.ctx
        .drive(NAME, controller.run(reconcile, error_policy, data.clone()))
        .await;
}

/// Bring the operand closer to what `obj` asks for: [`apply`] while it exists, [`cleanup`] once
/// it is being deleted (the finalizer holds the deletion until then).
pub async fn reconcile(obj: Arc<Memcached>, data: Arc<Data>) -> Result<Action, Error> {
    let ctx = &data.ctx;
    let reconciliation = ctx.metrics.start(NAME);
    let key = ObjectRef::from_obj(&*obj).to_string();
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<Memcached> = Api::namespaced(ctx.client.clone(), &namespace);
    let result = finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Finalizer::Apply(obj) => apply(obj, &data).await,
            Finalizer::Cleanup(obj) => cleanup(obj, ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)));
    if result.is_ok() {
        ctx.backoff.reset(&key);
    }
    reconciliation.finish(&result);
    result
}

/// The object exists: apply its Deployment (created, or brought back to the object's size,
/// image, command, port and user), then report it as Available.
async fn apply(obj: Arc<Memcached>, data: &Data) -> Result<Action, Error> {
    let ctx = &data.ctx;
    let mut conditions = Conditions::of(&obj);
    if conditions.list.is_empty() {
        // A new object starts with an Unknown availability.
        let starting = "Starting reconciliation";
        conditions.set(AVAILABLE, "Unknown", "Reconciling", starting);
        conditions.apply(&obj, ctx).await?;
    }
    let Some(image) = &data.image else {
        let name = obj.name_any();
        let why = Error::NoImage;
        let message = format!("Failed to create the Deployment for {name}: {why}");
        conditions.set(AVAILABLE, "False", "Reconciling", &message);
        conditions.apply(&obj, ctx).await?;
        return Err(Error::NoImage);
    };
    let deployment = deployment_for(&obj, image);
    let namespace = obj.namespace().unwrap_or_default();
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &namespace);
    // Server-side apply: the manager owns exactly the fields it sets, so a change another
    // writer made to them is undone, and the rest of the Deployment is left alone.
    let params = PatchParams::apply(MANAGER_NAME).force();
    let name = obj.name_any();
    if let Err(error) = deployments
        .patch(&name, &params, &Patch::Apply(&deployment))
        .await
    {
        let message = format!("Failed to apply the Deployment for {name}: {error}");
        conditions.set(AVAILABLE, "False", "Reconciling", &message);
        conditions.apply(&obj, ctx).await?;
        return Err(error.into());
    }
    let replicas = size(&obj);
    let message = format!("Deployment for {name} with {replicas} replicas created successfully");
    if conditions.set(AVAILABLE, "True", "Reconciling", &message) {
        conditions.apply(&obj, ctx).await?;
    }
    // A change of the object or of its Deployment brings it back.
    Ok(Action::await_change())
}

/// The object is being deleted: report it as Degraded while the finalizer runs.
async fn cleanup(obj: Arc<Memcached>, ctx: &Context) -> Result<Action, Error> {
    let mut conditions = Conditions::of(&obj);
    let name = obj.name_any();
    let message = format!("Performing finalizer operations for {name}");
    conditions.set(DEGRADED, "Unknown", "Finalizing", &message);
    conditions.apply(&obj, ctx).await?;
    // TODO(user): the cleanup the operator needs before the object goes away, such as taking a
    // backup or deleting what it does not own (a PersistentVolumeClaim, say). The Deployment it
    // owns needs none: the garbage collector deletes it with the object.
    let event = Event {
        type_: EventType::Warning,
        reason: "Deleting".into(),
        note: Some(format!(
            "Custom Resource {name} is being deleted from the namespace {}",
            obj.namespace().unwrap_or_default()
        )),
        action: "DeleteCR".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &obj.object_ref(&())).await {
        tracing::warn!(controller = NAME, error = %e, "cannot publish an event");
    }
    let message = format!("Finalizer operations for {name} were successfully accomplished");
    conditions.set(DEGRADED, "True", "Finalizing", &message);
    conditions.apply(&obj, ctx).await?;
    Ok(Action::await_change())
}

/// The number of replicas `obj` asks for.
pub fn size(obj: &Memcached) -> i32 {
    obj.spec.size.unwrap_or(1)
}

/// The labels of the operand's Deployment and Pods: `instance` tells the operands of two
/// objects in one namespace apart.
/// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
pub fn labels_for(obj: &Memcached, image: &str) -> BTreeMap<String, String> {
    // The tag follows the last colon after the last slash (a registry may have a port).
    let name = image.rsplit('/').next().unwrap_or(image);
    let tag = match name.rsplit_once(':') {
        Some((_, tag)) if !name.contains('@') => tag,
        _ => "",
    };
    [
        ("app.kubernetes.io/name", "guestbook"),
        ("app.kubernetes.io/instance", obj.name_any().as_str()),
        ("app.kubernetes.io/version", tag),
        ("app.kubernetes.io/managed-by", MANAGED_BY),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The Deployment of the operand of `obj`, owned by it.
pub fn deployment_for(obj: &Memcached, image: &str) -> Deployment {
    let labels = labels_for(obj, image);
    Deployment {
        metadata: ObjectMeta {
            name: Some(obj.name_any()),
            namespace: obj.namespace(),
            labels: Some(labels.clone()),
            // The object owns its Deployment: the Deployment is deleted with it, and its
            // changes reconcile the object (see `owns_stream` in `run_with_image`). As
            // controller-runtime's controller references, it blocks the owner's deletion: a
            // foreground deletion of the object waits for the Deployment to go (which needs
            // `update` on the owner's finalizers: see RBAC).
            owner_references: obj.controller_owner_ref(&()).map(|owner| {
                vec![OwnerReference {
                    block_owner_deletion: Some(true),
                    ..owner
                }]
            }),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(size(obj)),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    // TODO(user): to run the operand on the platforms it supports only, add a
                    // node affinity on the kubernetes.io/arch and kubernetes.io/os labels.
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..SeccompProfile::default()
                        }),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![Container {
                        name: CONTAINER.into(),
                        image: Some(image.into()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        // The "restricted" Pod Security Standard.
                        security_context: Some(SecurityContext {
                            run_as_non_root: Some(true),
                            run_as_user: Some(RUN_AS_USER),
                            allow_privilege_escalation: Some(false),
                            capabilities: Some(Capabilities {
                                drop: Some(vec!["ALL".into()]),
                                ..Capabilities::default()
                            }),
                            ..SecurityContext::default()
                        }),
                        ports: Some(vec![k8s_openapi::api::core::v1::ContainerPort {
                            container_port: obj.spec.container_port,
                            name: Some(CONTAINER.into()),
                            ..Default::default()
                        }]),
                        command: Some(COMMAND.iter().map(|s| s.to_string()).collect()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// The conditions this controller owns on an object (Available and Degraded), as it last
/// applied them.
struct Conditions {
    /// The object's generation, which the conditions are set for.
    generation: Option<i64>,
    list: Vec<Condition>,
}

impl Conditions {
    fn of(obj: &Memcached) -> Conditions {
        let mine = |c: &&Condition| c.type_ == AVAILABLE || c.type_ == DEGRADED;
        let conditions = obj.status.iter().flat_map(|s| s.conditions.iter());
        Conditions {
            generation: obj.metadata.generation,
            list: conditions.filter(mine).cloned().collect(),
        }
    }

    /// Set condition `type_`; its transition time moves only when its status changes. Returns
    /// whether anything changed.
    fn set(&mut self, type_: &str, status: &str, reason: &str, message: &str) -> bool {
        let previous = self.list.iter().position(|c| c.type_ == type_);
        let since = match previous.map(|i| &self.list[i]) {
            Some(c) if c.status == status => c.last_transition_time.clone(),
            _ => Time(Timestamp::now()),
        };
        let condition = Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            observed_generation: self.generation,
            last_transition_time: since,
        };
        match previous {
            Some(i) if self.list[i] == condition => false,
            Some(i) => {
                self.list[i] = condition;
                true
            }
            None => {
                self.list.push(condition);
                true
            }
        }
    }

    /// Apply them as the object's status (server-side apply: the manager owns exactly these
    /// conditions, another writer's stay).
    async fn apply(&self, obj: &Memcached, ctx: &Context) -> Result<(), Error> {
        let status = MemcachedStatus {
            conditions: self.list.clone(),
        };
        let patch = serde_json::json!({
            "apiVersion": Memcached::api_version(&()),
            "kind": Memcached::kind(&()),
            "status": status,
        });
        let namespace = obj.namespace().unwrap_or_default();
        let api: Api<Memcached> = Api::namespaced(ctx.client.clone(), &namespace);
        let params = PatchParams::apply(MANAGER_NAME).force();
        api.patch_status(&obj.name_any(), &params, &Patch::Apply(&patch))
            .await?;
        Ok(())
    }
}

/// After a failed reconciliation: retry with exponential backoff.
pub fn error_policy(obj: Arc<Memcached>, error: &Error, data: Arc<Data>) -> Action {
    let key = ObjectRef::from_obj(&*obj).to_string();
    let delay = data.ctx.backoff.next(&key);
    tracing::warn!(controller = NAME, name = %obj.name_any(), %error, ?delay, "reconcile failed; retrying");
    Action::requeue(delay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cache::v1alpha1::MemcachedSpec;

    const IMAGE: &str = "registry.example.com:5000/operand:1.2.3";

    fn object() -> Memcached {
        let spec = serde_json::json!({ "size": 3, "containerPort": 11211 });
        let spec: MemcachedSpec = serde_json::from_value(spec).expect("a spec");
        let mut obj = Memcached::new("test", spec);
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("0000-1111".into());
        obj
    }

    #[test]
    fn the_deployment_runs_the_image_as_the_object_asks_and_is_owned_by_it() {
        let obj = object();
        let deployment = deployment_for(&obj, IMAGE);
        let owners = deployment.owner_references();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].uid, "0000-1111");
        assert_eq!(owners[0].controller, Some(true));
        assert_eq!(owners[0].block_owner_deletion, Some(true));
        let spec = deployment.spec;
        assert_eq!(spec.replicas, Some(3));
        let labels = spec.selector.match_labels.expect("a selector");
        assert_eq!(labels["app.kubernetes.io/version"], "1.2.3");
        assert_eq!(labels["app.kubernetes.io/instance"], "test");
        let pod = spec.template.spec.expect("a pod spec");
        let container = &pod.containers[0];
        assert_eq!(container.image.as_deref(), Some(IMAGE));
        let security = container.security_context.clone().unwrap_or_default();
        assert_eq!(security.allow_privilege_escalation, Some(false));
        let ports = container.ports.clone().unwrap_or_default();
        assert_eq!(ports.first().map(|p| p.container_port), Some(11211));
        assert_eq!(security.run_as_user, Some(RUN_AS_USER));
        let command = container.command.clone().unwrap_or_default();
        assert_eq!(command, COMMAND);
    }

    #[test]
    fn an_image_by_digest_has_no_version_label() {
        let labels = labels_for(&object(), "operand@sha256:0123");
        assert_eq!(labels["app.kubernetes.io/version"], "");
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let obj = object();
        let mut conditions = Conditions::of(&obj);
        assert!(conditions.set(AVAILABLE, "True", "Reconciling", "ok"));
        let since = conditions.list[0].last_transition_time.clone();
        assert!(!conditions.set(AVAILABLE, "True", "Reconciling", "ok"));
        assert!(conditions.set(AVAILABLE, "True", "Reconciling", "resized"));
        assert_eq!(conditions.list[0].last_transition_time, since);
        assert!(conditions.set(DEGRADED, "Unknown", "Finalizing", "deleting"));
        assert_eq!(conditions.list.len(), 2);
    }
}
