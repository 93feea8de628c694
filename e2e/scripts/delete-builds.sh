#!/usr/bin/env bash
# `opbuilder delete api` and `delete webhook` in projects the user has changed: what they wrote
# themselves stays, and the project still builds.
#
# go/v4: two kinds, a second version with a conversion webhook, defaulting and validation;
# the user's code in a controller, in cmd/main.go and in a package of their own that uses the
# kind that stays; its DeepCopy functions, CRDs and RBAC generated. Then one webhook type, the
# second version (a conversion's spoke), the last webhooks and the kind are deleted (a dry run
# first), and: the user's lines are all there; go mod tidy,
# make generate manifests build and go vet ./... (which compiles the tests) pass; the deleted
# kind's CRD is gone and the other's is there; kubectl kustomize config/default renders.
#
# The Rust layout: two kinds, webhooks on one; the user's code in the other's controller and a
# module of their own. Then the validating webhook, the last webhooks and the kind go, and:
# the user's lines are there; make manifests writes the one CRD left and leaves the role as
# delete wrote it; make vet (clippy on every target, warnings are errors) passes.
#
# Neither runs `make test`: what delete changes is the wiring, which build, vet and clippy check
# (the golden trees run the tests of the same templates). About a minute on warm Go and cargo
# caches (e2e/run.sh's other stages fill them).
#
# Usage: delete-builds.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd go gofmt make kubectl cargo python3
[[ -n ${OPBUILDER_BIN:-} ]] || die "OPBUILDER_BIN is not set (run through e2e/run.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-delete.XXXXXX")
trap 'rm -rf "$work"' EXIT
ob() { "$OPBUILDER_BIN" "$@"; }
# has FILE TEXT: FILE holds the line TEXT (the user's), else the stage fails.
has() {
	grep -qxF -- "$2" "$1" || die "$1 lost the user's line: $2"
}

# ------------------------------------------------------------------------------------- go/v4
go_project="$work/fleet"
mkdir -p "$go_project"
cd "$go_project"
log_info "go/v4: a project with two kinds, versions and webhooks"
ob init --domain example.com --repo example.com/fleet --project-name fleet --skip-post-steps >/dev/null
for c in \
	"create api --group ship --version v1 --kind Frigate --resource --controller" \
	"create api --group ship --version v1 --kind Cruiser --resource --controller" \
	"create api --group ship --version v2 --kind Frigate --resource --controller=false" \
	"create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation" \
	"create webhook --group ship --version v1 --kind Frigate --conversion --spoke v2" \
	"create webhook --group ship --version v1 --kind Cruiser --defaulting"; do
	# shellcheck disable=SC2086
	ob $c --skip-post-steps >/dev/null
done

log_info "go/v4: the user's code"
mine_reconcile='	logf.FromContext(ctx).Info("a cruiser changed", "name", req.Name)'
mine_main='	setupLog.Info("the fleet is ready")'
python3 - "$mine_reconcile" "$mine_main" <<'EOF'
import sys
reconcile, main = sys.argv[1], sys.argv[2]
p = "internal/controller/cruiser_controller.go"
s = open(p).read()
anchor = "\t// TODO(user): compare cruiser with what exists in the cluster"
assert anchor in s, p
s = s.replace(anchor, reconcile + "\n\n" + anchor, 1)
open(p, "w").write(s)
p = "cmd/main.go"
s = open(p).read()
anchor = '\tsetupLog.Info("Starting the manager")\n'
assert anchor in s, p
s = s.replace(anchor, main + "\n" + anchor, 1)
open(p, "w").write(s)
EOF
mkdir -p internal/fleet
cat >internal/fleet/fleet.go <<'EOF'
// Package fleet is the user's own code: it uses the kind that stays.
package fleet

import (
	shipv1 "example.com/fleet/api/v1"
)

// Flagship names the fleet's first cruiser.
func Flagship() *shipv1.Cruiser {
	return &shipv1.Cruiser{}
}
EOF

log_info "go/v4: the generated code and manifests, as the user has them"
go mod tidy
"$scripts/seed-tools.sh" "$go_project"
make generate manifests

log_info "go/v4: delete one webhook type, the second version (a spoke), the webhooks, the kind"
ob delete webhook --group ship --version v1 --kind Frigate --defaulting >/dev/null
ob delete api --group ship --version v2 --kind Frigate >/dev/null
[[ ! -e api/v2 ]] || die "the spoke's package api/v2 is still there"
grep -q 'conversion: true' PROJECT || die "the hub lost its conversion webhook with its spoke"
ob delete webhook --group ship --version v1 --kind Frigate >/dev/null
ob delete api --group ship --version v1 --kind Frigate --dry-run >"$work/plan"
grep -q 'would remove    api/v1/frigate_types.go' "$work/plan" || die "the dry run does not plan the types' removal: $(cat "$work/plan")"
[[ -f api/v1/frigate_types.go ]] || die "the dry run removed api/v1/frigate_types.go"
ob delete api --group ship --version v1 --kind Frigate >/dev/null
for f in api/v1/frigate_types.go api/v2 internal/controller/frigate_controller.go internal/webhook/v1/frigate_webhook.go; do
	[[ ! -e $f ]] || die "$f is still there after the deletion"
done
has internal/controller/cruiser_controller.go "$mine_reconcile"
has cmd/main.go "$mine_main"
[[ -f internal/fleet/fleet.go ]] || die "the user's internal/fleet/fleet.go went"

log_info "go/v4: it builds"
unformatted=$(gofmt -l api cmd internal test) || die "gofmt -l failed (above)"
[[ -z $unformatted ]] || die "delete left files that are not gofmt-clean: $unformatted"
go mod tidy
make generate manifests build
go vet ./...
[[ ! -e config/crd/bases/ship.example.com_frigates.yaml ]] || die "the deleted kind's CRD is there"
[[ -f config/crd/bases/ship.example.com_cruisers.yaml ]] || die "make manifests wrote no CRD for Cruiser"
kubectl kustomize config/default >/dev/null

# ------------------------------------------------------------------------------------- Rust
rust_project="$work/guestbook"
mkdir -p "$rust_project"
cd "$rust_project"
use_rust_target
log_info "Rust: a project with two kinds, webhooks on one"
ob init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name guestbook >/dev/null
ob create api --group webapp --version v1 --kind Guestbook --resource --controller >/dev/null
ob create api --group infra --version v1alpha1 --kind Tenant --resource --controller >/dev/null
ob create webhook --group webapp --version v1 --kind Guestbook --defaulting --programmatic-validation >/dev/null

log_info "Rust: the user's code"
mine_rust='    tracing::info!(tenant = %obj.name_any(), "a tenant changed");'
python3 - "$mine_rust" <<'EOF'
import sys
p = "src/controllers/tenant.rs"
s = open(p).read()
anchor = "    let reconciliation = ctx.metrics.start(NAME);\n"
assert anchor in s, p
s = s.replace(anchor, anchor + sys.argv[1] + "\n", 1)
open(p, "w").write(s)
p = "src/lib.rs"
s = open(p).read()
anchor = "pub mod controllers;\n"
assert anchor in s, p
s = s.replace(anchor, anchor + "pub mod fleet;\n", 1)
open(p, "w").write(s)
EOF
cat >src/fleet.rs <<'EOF'
//! The user's own code: it uses the kind that stays.

use crate::api::infra::v1alpha1::Tenant;

/// The name of a tenant.
pub fn tenant_name(t: &Tenant) -> Option<&str> {
    t.metadata.name.as_deref()
}
EOF

log_info "Rust: delete the validating webhook, the webhooks, the kind"
ob delete webhook --group webapp --version v1 --kind Guestbook --programmatic-validation >/dev/null
ob delete webhook --group webapp --version v1 --kind Guestbook >/dev/null
ob delete api --group webapp --version v1 --kind Guestbook >/dev/null
for f in src/api/webapp src/controllers/guestbook.rs src/webhooks/webapp_v1_guestbook.rs; do
	[[ ! -e $f ]] || die "$f is still there after the deletion"
done
has src/controllers/tenant.rs "$mine_rust"
has src/lib.rs "pub mod fleet;"

log_info "Rust: it builds"
cp config/rbac/role.yaml "$work/role.yaml"
make manifests
diff -u "$work/role.yaml" config/rbac/role.yaml >&2 || die "make manifests wrote another role than delete left (diff above)"
[[ ! -e config/crd/bases/webapp.example.com_guestbooks.yaml ]] || die "the deleted kind's CRD is there"
[[ -f config/crd/bases/infra.example.com_tenants.yaml ]] || die "make manifests wrote no CRD for Tenant"
cargo fmt --check
make vet
log_info "delete: both projects keep the user's code and build"
