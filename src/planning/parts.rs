//! The named parts of the `create` commands' plans (see [`crate::plan::Part`]), shared by the
//! layouts: when the file or marker a part needs is missing, `apply` leaves the part out whole and
//! says what to add by hand. Optional parts are what a project may lack by choice or by age (a
//! Kubebuilder release before it, or its owner removed it); essential ones are the wiring without
//! which the new code is never run or tested, left out only with `--allow-missing-markers`.

use crate::plan::Part;

/// test/e2e/e2e_test.go's checks of a kind's webhooks.
pub const E2E_TESTS: Part = Part::optional("the webhooks' e2e checks");
/// config/network-policy's policy that lets webhook traffic in.
pub const NETWORK_POLICY: Part = Part::optional("the network policy for webhook traffic");
/// A kind's CRD in config/crd/kustomization.yaml.
pub const CRD_KUSTOMIZATION: Part = Part::optional("the CRD's entry in config/crd");
/// A kind's sample in config/samples/kustomization.yaml.
pub const SAMPLES_KUSTOMIZATION: Part = Part::optional("the sample's entry in config/samples");
/// The CRDs in config/default/kustomization.yaml.
pub const DEFAULT_CRDS: Part = Part::optional("the CRDs in config/default");
/// The webhooks and cert-manager in config/default/kustomization.yaml.
pub const DEFAULT_WEBHOOKS: Part =
    Part::optional("the webhooks and cert-manager in config/default");
/// The conversion webhook's CA injection into the CRD, in config/default/kustomization.yaml.
pub const DEFAULT_CONVERSION: Part =
    Part::optional("the conversion webhook's CA injection in config/default");
/// The conversion webhook's patch of the CRD, in config/crd/kustomization.yaml.
pub const CRD_CONVERSION: Part = Part::optional("the conversion webhook's CRD patch in config/crd");
/// A kind's helper roles (admin, editor, viewer) in config/rbac/kustomization.yaml.
pub const RBAC_HELPER_ROLES: Part = Part::optional("the helper roles' entries in config/rbac");

/// The API package added to the manager's scheme (go/v4's cmd/main.go).
pub const SCHEME: Part = Part::essential("the API's registration in the manager's scheme");
/// The new controller or webhook set up with the manager (go/v4's cmd/main.go, the Rust
/// layout's src/controllers/mod.rs and src/webhooks/mod.rs).
pub const MANAGER_SETUP: Part = Part::essential("the manager's setup of the new code");
/// The API package and the webhooks in the envtest suite (suite_test.go, webhook_suite_test.go).
pub const ENVTEST_SUITE: Part = Part::essential("the envtest suite's setup");
/// The Rust layout's kind in its API modules and in the CRDs `make manifests` writes (src/api).
pub const RUST_API: Part = Part::essential("the kind's modules and CRD in src/api");
/// The Rust layout's modules of another project's kind (src/external, and src/lib.rs's `mod`).
pub const RUST_EXTERNAL: Part =
    Part::essential("the modules of the other project's kind in src/external and src/lib.rs");
/// The line of the Makefile's `external-types` that generates another project's kind's types.
pub const RUST_EXTERNAL_TYPES_TARGET: Part =
    Part::optional("the kind's kopium line in the Makefile's external-types target");
