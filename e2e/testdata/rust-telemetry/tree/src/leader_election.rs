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

//! Leader election on a coordination.k8s.io Lease, as client-go does it, so that one replica of
//! the manager runs the controllers at a time:
//! - the leader renews the Lease every [`RETRY_PERIOD`]; each attempt has a time limit, and it
//!   gives up at [`RENEW_DEADLINE`] after its last renewal, before any other replica can take
//!   the Lease over ([`LEASE_DURATION`]), so two leaders never act at once;
//! - a candidate takes the Lease once nobody has renewed it for [`LEASE_DURATION`], measured
//!   on its own clock from when it saw the Lease change (never from the holder's renewTime, so
//!   clock skew between nodes does not matter), or at once when the Lease is released;
//! - a leader that stops releases the Lease, and a candidate, which watches it, takes over
//!   right away instead of after the lease duration.
//!
//! The manager stops its controllers before it gives up the lead (see src/main.rs).

use crate::rbac::Rule;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams, WatchParams};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::{Instant, sleep, timeout};

/// How long a Lease holds without renewal: another replica takes it over after that.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How long the leader keeps trying to renew before it stops acting as the leader.
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often the leader renews, and a candidate tries.
pub const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// What leader election does with Leases, in the manager's namespace: written to
/// config/rbac/leader_election_role.yaml by `make manifests`.
pub const RBAC: &[Rule] = &[Rule {
    groups: &["coordination.k8s.io"],
    resources: &["leases"],
    verbs: &["create", "get", "update", "watch"],
}];

/// Why this manager stopped leading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lost {
    /// The Lease could not be renewed within [`RENEW_DEADLINE`] (the API server is unreachable
    /// or too slow): another replica may take it over once [`LEASE_DURATION`] has passed.
    Deadline,
    /// Another manager holds the Lease.
    TakenBy(String),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::Deadline => write!(
                f,
                "the Lease could not be renewed within {}s",
                RENEW_DEADLINE.as_secs()
            ),
            Lost::TakenBy(holder) => write!(f, "{holder} holds the Lease now"),
        }
    }
}

/// The Lease as this manager last saw it, and when (on its own clock).
#[derive(Debug, Clone)]
struct Observed {
    resource_version: Option<String>,
    spec: LeaseSpec,
    at: Instant,
}

/// Whether `identity` may take (or keep) the Lease `spec`, which it saw change at `seen`: when
/// it holds it, when nobody does, or when nobody renewed it for the Lease's duration since.
fn may_take(spec: &LeaseSpec, identity: &str, seen: Instant, now: Instant) -> bool {
    let holder = spec.holder_identity.as_deref().unwrap_or_default();
    if holder.is_empty() || holder == identity {
        return true;
    }
    let seconds = spec
        .lease_duration_seconds
        .map_or(LEASE_DURATION.as_secs(), |s| u64::try_from(s).unwrap_or(0));
    now >= seen + Duration::from_secs(seconds)
}

/// Leader election on the Lease `name`.
pub struct LeaderElection {
    api: Api<Lease>,
    name: String,
    identity: String,
    observed: Mutex<Option<Observed>>,
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
        LeaderElection::with_identity(
            client,
            namespace,
            name,
            &format!("{host}_{:08x}", nanos ^ std::process::id()),
        )
    }

    /// Leader election as `identity` (unique among the replicas).
    pub fn with_identity(
        client: Client,
        namespace: &str,
        name: &str,
        identity: &str,
    ) -> LeaderElection {
        LeaderElection {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            identity: identity.to_string(),
            observed: Mutex::new(None),
        }
    }

    /// This manager's identity in the Lease.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Wait until this manager holds the Lease; returns when the attempt that took it started,
    /// for [`LeaderElection::keep`].
    pub async fn acquire(&self) -> Instant {
        tracing::info!(lease = %self.name, identity = %self.identity, "waiting to become the leader");
        let mut said = None;
        loop {
            let started = Instant::now();
            let error = match timeout(RENEW_DEADLINE, self.try_acquire_or_renew()).await {
                Ok(Ok(true)) => {
                    tracing::info!(lease = %self.name, identity = %self.identity, "became the leader");
                    return started;
                }
                Ok(Ok(false)) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some(format!(
                    "no answer from the API server in {}s",
                    RENEW_DEADLINE.as_secs()
                )),
            };
            // Each new reason is said once, not at every attempt.
            if error.is_some() && error != said {
                tracing::warn!(lease = %self.name, error = error.as_deref(), "leader election: cannot read or take the Lease");
            }
            said = error;
            self.wait_for_change().await;
        }
    }

    /// Wait until the Lease changes (a watch of it, so that a release is seen at once), or at
    /// most [`RETRY_PERIOD`].
    async fn wait_for_change(&self) {
        let version = self
            .observed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|o| o.resource_version.clone());
        let Some(version) = version else {
            sleep(RETRY_PERIOD).await;
            return;
        };
        let params = WatchParams {
            bookmarks: false,
            ..WatchParams::default()
        }
        .fields(&format!("metadata.name={}", self.name))
        .timeout(RETRY_PERIOD.as_secs() as u32);
        let change = async {
            match self.api.watch(&params, &version).await {
                Ok(events) => {
                    let mut events = events.boxed();
                    if events.next().await.is_some() {
                        return;
                    }
                }
                Err(e) => tracing::debug!(error = %e, "leader election: cannot watch the Lease"),
            }
            sleep(RETRY_PERIOD).await;
        };
        let _ = timeout(RETRY_PERIOD * 2, change).await;
    }

    /// Keep the Lease, renewing it every [`RETRY_PERIOD`]; `renewed` is when the attempt that
    /// last renewed (or took) it started. Returns when this manager must stop acting as the
    /// leader: another one holds the Lease, or it could not be renewed within
    /// [`RENEW_DEADLINE`] of `renewed`, which is before any other manager can take it over.
    pub async fn keep(&self, renewed: Instant) -> Lost {
        let mut renewed = renewed;
        loop {
            sleep(RETRY_PERIOD).await;
            loop {
                let started = Instant::now();
                let deadline = renewed + RENEW_DEADLINE;
                if started >= deadline {
                    return Lost::Deadline;
                }
                match timeout(deadline - started, self.try_acquire_or_renew()).await {
                    Ok(Ok(true)) => {
                        renewed = started;
                        break;
                    }
                    // Another manager holds the Lease; or it changed between this manager's
                    // read and write (a conflict): try again within the deadline.
                    Ok(Ok(false)) if self.holder() != self.identity => {
                        return Lost::TakenBy(self.holder());
                    }
                    Ok(Ok(false)) => {
                        let left = deadline.saturating_duration_since(Instant::now());
                        sleep(RETRY_PERIOD.min(left)).await;
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(lease = %self.name, error = %e, "leader election: cannot renew the Lease");
                        let left = deadline.saturating_duration_since(Instant::now());
                        sleep(RETRY_PERIOD.min(left)).await;
                    }
                    Err(_) => return Lost::Deadline,
                }
            }
        }
    }

    /// Give the Lease up (when this manager holds it), so that another one takes over at once:
    /// call it once the controllers have stopped.
    pub async fn release(&self) {
        let release = async {
            let Some(mut lease) = self.api.get_opt(&self.name).await? else {
                return Ok(false);
            };
            let mut spec = lease.spec.clone().unwrap_or_default();
            if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
                return Ok(false);
            }
            // As client-go: no holder, a one-second lease, the transitions kept.
            let now = MicroTime(Timestamp::now());
            spec.holder_identity = None;
            spec.lease_duration_seconds = Some(1);
            spec.acquire_time = Some(now.clone());
            spec.renew_time = Some(now);
            lease.spec = Some(spec);
            self.api
                .replace(&self.name, &PostParams::default(), &lease)
                .await
                .map(|_| true)
        };
        // Within the pod's termination grace period (10 s in config/manager).
        match timeout(RETRY_PERIOD * 2, release).await {
            Ok(Ok(true)) => tracing::info!(lease = %self.name, "released the Lease"),
            Ok(Ok(false)) => {}
            Ok(Err(e)) => {
                tracing::warn!(lease = %self.name, error = %e, "cannot release the Lease: another manager takes it over when it expires")
            }
            Err(_) => {
                tracing::warn!(lease = %self.name, "no answer when releasing the Lease: another manager takes it over when it expires")
            }
        }
    }

    /// Who held the Lease when this manager last saw it.
    fn holder(&self) -> String {
        self.observed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|o| o.spec.holder_identity.clone())
            .unwrap_or_else(|| "nobody".into())
    }

    /// Remember `lease` as seen now, when it changed since last seen; returns when it was
    /// first seen as it is.
    fn observe(&self, lease: &Lease) -> Instant {
        let now = Instant::now();
        let mut observed = self.observed.lock().unwrap_or_else(|e| e.into_inner());
        let version = lease.metadata.resource_version.clone();
        match observed.as_ref() {
            Some(o) if o.resource_version == version => o.at,
            _ => {
                *observed = Some(Observed {
                    resource_version: version,
                    spec: lease.spec.clone().unwrap_or_default(),
                    at: now,
                });
                now
            }
        }
    }

    /// Take the Lease when this manager may, renew it when it holds it: whether it holds it now.
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
                Ok(created) => {
                    self.observe(&created);
                    Ok(true)
                }
                Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
                Err(e) => Err(e),
            };
        };
        let seen = self.observe(&lease);
        let spec = lease.spec.clone().unwrap_or_default();
        if !may_take(&spec, &self.identity, seen, Instant::now()) {
            return Ok(false);
        }
        let transitions = spec.lease_transitions.unwrap_or(0);
        let next = if spec.holder_identity.as_deref() == Some(self.identity.as_str()) {
            self.spec(spec.acquire_time.unwrap_or(now.clone()), now, transitions)
        } else {
            self.spec(now.clone(), now, transitions + 1)
        };
        lease.spec = Some(next);
        // The resourceVersion read above makes this a compare-and-swap.
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(updated) => {
                self.observe(&updated);
                Ok(true)
            }
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn spec(&self, acquired: MicroTime, renewed: MicroTime, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: Some(acquired),
            renew_time: Some(renewed),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Request, Response};
    use kube::client::Body;
    use tower_test::mock::Handle;

    fn held_by(holder: &str, renewed_an_hour_ago: bool) -> LeaseSpec {
        let renewed = if renewed_an_hour_ago {
            Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_hours(1)
        } else {
            Timestamp::now()
        };
        LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(renewed)),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn a_held_lease_expires_a_lease_duration_after_it_was_seen_whatever_its_renew_time() {
        // The holder's clock is an hour behind: its renewTime says nothing on this clock.
        let spec = held_by("other", true);
        let seen = Instant::now();
        assert!(!may_take(&spec, "me", seen, seen));
        assert!(!may_take(&spec, "me", seen, seen + Duration::from_secs(14)));
        assert!(may_take(&spec, "me", seen, seen + LEASE_DURATION));
    }

    #[test]
    fn a_released_lease_or_one_of_ones_own_is_taken_at_once() {
        let seen = Instant::now();
        let mut released = held_by("other", false);
        released.holder_identity = None;
        assert!(may_take(&released, "me", seen, seen));
        assert!(may_take(&held_by("me", false), "me", seen, seen));
    }

    /// An elector whose client talks to a mocked API server, and the mock's handle.
    fn elector() -> (LeaderElection, Handle<Request<Body>, Response<Body>>) {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = Client::new(service, "default");
        let election = LeaderElection::with_identity(client, "default", "lease", "me");
        (election, handle)
    }

    fn lease(holder: &str, version: &str) -> Vec<u8> {
        let mut spec = held_by(holder, false);
        spec.lease_transitions = Some(3);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some("lease".into()),
                namespace: Some("default".into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        serde_json::to_vec(&lease).expect("JSON")
    }

    /// Keep the Lease just renewed: the leader must give up at the renew deadline, before the
    /// lease can expire for anyone else.
    async fn gives_up_at_the_renew_deadline(election: &LeaderElection) {
        let renewed = Instant::now();
        let lost = timeout(LEASE_DURATION, election.keep(renewed))
            .await
            .expect("the leader gave up before the lease expired");
        assert_eq!(lost, Lost::Deadline);
        assert!(
            renewed.elapsed() <= RENEW_DEADLINE,
            "{:?}",
            renewed.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_whose_api_server_does_not_answer_stops_before_its_lease_can_expire() {
        // The mock takes the requests and never answers, as a frozen API server.
        let (election, _handle) = elector();
        gives_up_at_the_renew_deadline(&election).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_whose_renewals_fail_stops_at_the_renew_deadline() {
        let (election, mut handle) = elector();
        let server = tokio::spawn(async move {
            while let Some((_, send)) = handle.next_request().await {
                let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"reason":"InternalError","message":"etcd is down"}"#;
                let response = Response::builder()
                    .status(500)
                    .body(Body::from(status.as_bytes().to_vec()));
                send.send_response(response.expect("a response"));
            }
        });
        gives_up_at_the_renew_deadline(&election).await;
        server.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_that_sees_another_holder_stops() {
        let (election, mut handle) = elector();
        let server = tokio::spawn(async move {
            let (request, send) = handle.next_request().await.expect("a request");
            assert_eq!(request.method(), "GET");
            send.send_response(Response::new(Body::from(lease("other", "7"))));
        });
        let lost = election.keep(Instant::now()).await;
        assert_eq!(lost, Lost::TakenBy("other".into()));
        server.await.expect("the mock server");
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_whose_renewal_conflicts_tries_again() {
        let (election, mut handle) = elector();
        let server = tokio::spawn(async move {
            let mut writes = 0;
            while let Some((request, send)) = handle.next_request().await {
                let response = if request.method() == "GET" {
                    Response::new(Body::from(lease("me", "7")))
                } else if writes == 0 {
                    writes += 1;
                    let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":409,"reason":"Conflict","message":"the object has been modified"}"#;
                    let response = Response::builder().status(409);
                    response
                        .body(Body::from(status.as_bytes().to_vec()))
                        .expect("a response")
                } else {
                    writes += 1;
                    let body = request.into_body().collect_bytes().await.expect("a body");
                    Response::new(Body::from(body.to_vec()))
                };
                send.send_response(response);
            }
            writes
        });
        // Still the leader after a conflict and a renewal: keep has not returned.
        let kept = timeout(RENEW_DEADLINE, election.keep(Instant::now())).await;
        assert!(kept.is_err(), "the leader stopped: {kept:?}");
        drop(election);
        assert!(server.await.expect("the mock server") >= 2);
    }

    #[tokio::test]
    async fn release_leaves_the_lease_without_a_holder() {
        let (election, mut handle) = elector();
        let server = tokio::spawn(async move {
            let (request, send) = handle.next_request().await.expect("a GET");
            assert_eq!(request.method(), "GET");
            send.send_response(Response::new(Body::from(lease("me", "7"))));
            let (request, send) = handle.next_request().await.expect("a PUT");
            assert_eq!(request.method(), "PUT");
            let body = request.into_body().collect_bytes().await.expect("a body");
            let released: Lease = serde_json::from_slice(&body).expect("a Lease");
            send.send_response(Response::new(Body::from(body.to_vec())));
            released
        });
        election.release().await;
        let released = server.await.expect("the mock server");
        let spec = released.spec.expect("a spec");
        assert_eq!(spec.holder_identity, None);
        assert_eq!(spec.lease_duration_seconds, Some(1));
        assert_eq!(spec.lease_transitions, Some(3));
        assert_eq!(released.metadata.resource_version.as_deref(), Some("7"));
    }

    #[tokio::test]
    async fn release_leaves_a_lease_another_manager_holds_alone() {
        let (election, mut handle) = elector();
        let server = tokio::spawn(async move {
            let (_, send) = handle.next_request().await.expect("a GET");
            send.send_response(Response::new(Body::from(lease("other", "7"))));
            // Nothing else is asked.
            handle.next_request().await.is_none()
        });
        election.release().await;
        drop(election);
        assert!(server.await.expect("the mock server"));
    }
}
