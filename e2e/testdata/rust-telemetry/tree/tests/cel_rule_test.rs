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

//! A CEL rule (a CRD's `x-kubernetes-validations`) checked twice: by kube's evaluator, without an
//! API server (kube's `cel` feature, on for the tests in Cargo.toml), then by the API server of
//! the tests' control plane. It is the rule the spec of each kind shows commented in
//! src/api/<group>/<version>/<kind>.rs: once set, `spec.foo` keeps its value. It sits on a kind of
//! this test, so the project's CRDs stay as their types declare them; when you enable a rule on
//! one of your kinds, test it the same way on that kind.

mod support;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The rule: an update may set `spec.foo` when it is not set, never change or remove it.
const RULE: &str =
    "!has(oldSelf.spec.foo) || (has(self.spec.foo) && self.spec.foo == oldSelf.spec.foo)";
/// What the API server answers when an update breaks the rule.
const MESSAGE: &str = "spec.foo cannot change once set";

/// A kind of this test only, with the rule enabled (`validation`: the derive brings `Rule` into
/// scope); `cel` gives it `validate_cel` and `validate_cel_update`, which evaluate its rules as
/// the API server would.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "rules.test.example.com",
    version = "v1",
    kind = "Ruled",
    namespaced,
    cel,
    validation = Rule::new(RULE).message(MESSAGE)
)]
struct RuledSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    foo: Option<String>,
}

/// The object `sample`, with `spec.foo` when given.
fn ruled(spec_foo: Option<&str>) -> Ruled {
    Ruled::new(
        "sample",
        RuledSpec {
            foo: spec_foo.map(String::from),
        },
    )
}

#[test]
fn the_rule_holds_without_an_api_server() {
    let set = ruled(Some("a"));
    set.validate_cel().expect("a new object passes the rule");

    for (update, what) in [(ruled(Some("b")), "changing"), (ruled(None), "removing")] {
        let refused = update
            .validate_cel_update(&set)
            .expect_err(&format!("{what} spec.foo breaks the rule"));
        assert!(
            refused.iter().any(|e| e.message == MESSAGE),
            "{what} spec.foo is refused for another reason: {refused:?}"
        );
    }
    set.validate_cel_update(&ruled(None))
        .expect("setting spec.foo where it was not set passes the rule");
    set.validate_cel_update(&set)
        .expect("keeping spec.foo passes the rule");
}

#[tokio::test]
async fn the_api_server_enforces_the_same_rule() {
    let plane = support::ControlPlane::start().await;
    plane.install_crd(&Ruled::crd()).await;
    let api: Api<Ruled> = Api::namespaced(plane.client.clone(), "default");
    api.create(&PostParams::default(), &ruled(None))
        .await
        .expect("creating an object without spec.foo");
    let set = serde_json::json!({ "spec": { "foo": "a" } });
    api.patch("sample", &PatchParams::default(), &Patch::Merge(&set))
        .await
        .expect("setting spec.foo where it was not set");

    let change = serde_json::json!({ "spec": { "foo": "b" } });
    match api
        .patch("sample", &PatchParams::default(), &Patch::Merge(&change))
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "not refused as invalid: {status:?}");
            assert!(
                status.message.contains(MESSAGE),
                "refused for another reason: {}",
                status.message
            );
        }
        other => panic!("the API server let spec.foo change: {other:?}"),
    }
    let obj = api.get("sample").await.expect("reading the object");
    assert_eq!(obj.spec.foo.as_deref(), Some("a"));
}
