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

//! How Frigate (ship.example.com) converts between its versions: every version converts to and
//! from the hub, v1, the version stored. The API server calls the conversion webhook
//! when a client asks for a version other than the stored one.

use crate::api::ship::{v1, v2};
use crate::webhook::Conversion;
use serde_json::Value;

/// The conversion of Frigate, registered in src/webhooks/mod.rs.
pub const CONVERSION: Conversion = Conversion {
    group: "ship.example.com",
    kind: "Frigate",
    convert,
};

/// Convert `obj` (any served version) to `api_version`, through the hub.
pub fn convert(obj: Value, api_version: &str) -> Result<Value, String> {
    let version = |v: &str| v.rsplit('/').next().unwrap_or_default().to_string();
    let from = version(obj["apiVersion"].as_str().unwrap_or_default());
    let hub: v1::Frigate = match from.as_str() {
        "v1" => serde_json::from_value(obj),
        "v2" => serde_json::from_value(obj).map(v2_to_hub),
        other => return Err(format!("Frigate has no version {other:?}")),
    }
    .map_err(|e| e.to_string())?;
    match version(api_version).as_str() {
        "v1" => serde_json::to_value(hub),
        "v2" => serde_json::to_value(hub_to_v2(hub)),
        other => return Err(format!("Frigate has no version {other:?}")),
    }
    .map_err(|e| e.to_string())
}

/// Frigate v2 to the hub. TODO(user): convert field by field; a field only
/// one version has can be kept in an annotation so that a round trip loses nothing.
pub fn v2_to_hub(spoke: v2::Frigate) -> v1::Frigate {
    let spec = v1::FrigateSpec {
        foo: spoke.spec.foo,
    };
    let mut hub = v1::Frigate::new("", spec);
    hub.metadata = spoke.metadata;
    hub.status = spoke.status.map(|s| v1::FrigateStatus {
        conditions: s.conditions,
    });
    hub
}

/// The hub to Frigate v2. TODO(user): the reverse of
/// [`v2_to_hub`].
pub fn hub_to_v2(hub: v1::Frigate) -> v2::Frigate {
    let spec = v2::FrigateSpec { foo: hub.spec.foo };
    let mut spoke = v2::Frigate::new("", spec);
    spoke.metadata = hub.metadata;
    spoke.status = hub.status.map(|s| v2::FrigateStatus {
        conditions: s.conditions,
    });
    spoke
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_round_trips_through_the_hub() {
        let mut obj = v2::Frigate::new(
            "test",
            v2::FrigateSpec {
                foo: Some("bar".into()),
            },
        );
        obj.metadata.namespace = Some("default".into());
        let value = serde_json::to_value(&obj).expect("JSON");
        let hub = convert(value.clone(), "ship.example.com/v1").expect("to the hub");
        assert_eq!(hub["apiVersion"], "ship.example.com/v1");
        let back = convert(hub, "ship.example.com/v2").expect("back");
        assert_eq!(back, value);
    }
}
