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

//! Leader election on a real API server, as the manager's ServiceAccount with leader election's
//! Role (the RBAC the code declares): one manager holds the Lease at a time, and a Lease its
//! holder releases goes to the waiting manager at once, not after the lease duration.

mod support;

use std::time::Duration;
use tokio::time::{Instant, timeout};

use guestbook::leader_election::{LEASE_DURATION, LeaderElection, RETRY_PERIOD};

/// How long taking a free Lease may take, its RBAC reaching the API server's cache included.
const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn one_manager_leads_at_a_time_and_a_released_lease_is_taken_over_at_once() {
    let plane = support::ControlPlane::start().await;
    let client = plane.manager_client().await;
    let namespace = support::MANAGER_NAMESPACE;
    let first = LeaderElection::with_identity(client.clone(), namespace, "test-lease", "first");
    let second = LeaderElection::with_identity(client, namespace, "test-lease", "second");

    let renewed = timeout(WAIT, first.acquire())
        .await
        .expect("the first manager took the free Lease");
    // While the first renews the Lease, the second waits, longer than the lease duration.
    tokio::select! {
        _ = second.acquire() => panic!("two managers lead at once"),
        lost = first.keep(renewed) => panic!("the first manager lost the Lease: {lost}"),
        _ = tokio::time::sleep(LEASE_DURATION + RETRY_PERIOD) => {}
    }

    // The second waits, watching the Lease, when the first releases it: it takes the Lease over
    // at once, where a candidate that only tried every RETRY_PERIOD would wait for its next try.
    let (released, taken) = tokio::join!(
        async {
            tokio::time::sleep(RETRY_PERIOD / 4).await;
            first.release().await;
            Instant::now()
        },
        timeout(WAIT, second.acquire()),
    );
    taken.expect("the second manager took the released Lease over");
    let after = released.elapsed();
    assert!(
        after < RETRY_PERIOD / 2,
        "the released Lease was taken over {after:?} after the release"
    );
}
