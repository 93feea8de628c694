#!/usr/bin/env bash
# The Rust layout's controllers for other projects' kinds (`create api --external-api-path`), on
# two real CRDs of different shapes, read from the Go module cache (`go mod download` through the
# Go module proxy, versions pinned in versions.toml):
#   - cert-manager's Certificate ([scaffold] cert_manager): one version, required fields in its
#     spec, read inside the module with --external-api-module;
#   - Gateway API's HTTPRoute ([e2e] gateway_api): two versions (v1 taken), CEL rules, a kind
#     kopium renames (HttpRoute), copied into the project first and given as a plain file;
#   - and Shelf, a cluster-scoped kind of opbuilder's own fixture (e2e/fixtures/external-crds),
#     the second document of its file.
# The types come from kopium [rust] kopium, which opbuilder finds in the cache every project on
# the machine shares (${XDG_CACHE_HOME:-~/.cache}/opbuilder/kopium/<version>), or installs there
# with cargo the first time (a cold run compiles kopium once: minutes).
#
# Checks: the CRDs' copies in external-crds/ and the types in src/external; `make external-types`
# (hack/kopium.sh) writes the types again byte for byte; `make lint` (cargo fmt --check, clippy on
# every target with warnings as errors) and `make test` (every test of the project, the two
# controllers' integration tests each reconciling an object of its kind on the control plane that
# installs the CRDs); `alpha generate` makes the same project again from PROJECT; `delete api` of
# the three kinds (the first created first) gives back the project `init` made, byte for byte; a
# refusal (a CRD of another kind) writes nothing (e2e/ui/rust-external pins the messages).
#
# Usage: rust-external.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd go make cargo git
[[ -n ${OPBUILDER_BIN:-} ]] || die "OPBUILDER_BIN is not set (run through e2e/run.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-external.XXXXXX")
trap 'rm -rf "$work"' EXIT
ob() { "$OPBUILDER_BIN" "$@"; }

cert_manager=$(pin scaffold.cert_manager)
gateway_api=$(pin e2e.gateway_api)
log_info "the CRDs: cert-manager $cert_manager and Gateway API $gateway_api from the Go module cache"
# Outside any module: `go mod download` of an exact version needs none.
module_dir() {
	(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$1") |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(d.get("Dir") or sys.exit("go mod download: " + d.get("Error", "no Dir")))'
}
cm_dir=$(module_dir "github.com/cert-manager/cert-manager@$cert_manager")
gw_dir=$(module_dir "sigs.k8s.io/gateway-api@$gateway_api")

project="$work/shop"
mkdir -p "$project"
cd "$project"
use_rust_target
ob init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name shop >/dev/null
git init -q . && git add -A && git -c user.name=e2e -c user.email=e2e@example.com commit -qm init

log_info "a CRD of another kind than asked is refused, and nothing is written"
if ob create api --group cert-manager --external-api-domain io --version v1 --kind Issuer \
	--resource=false --controller --external-api-path deploy/crds/cert-manager.io_certificates.yaml \
	--external-api-module "github.com/cert-manager/cert-manager@$cert_manager" 2>"$work/refusal"; then
	die "create api took a CRD of Certificate for Issuer"
else
	rc=$?
fi
((rc == 2)) || die "the refusal exited $rc, not 2: $(cat "$work/refusal")"
grep -q "holds no CRD of group cert-manager.io" "$work/refusal" || die "the refusal does not say why: $(cat "$work/refusal")"
[[ -z $(git status --porcelain) ]] || die "the refusal wrote: $(git status --porcelain)"

log_info "Certificate: from inside the module (kopium installed into its cache if it is not there)"
t=$SECONDS
ob create api --group cert-manager --external-api-domain io --version v1 --kind Certificate \
	--resource=false --controller --external-api-path deploy/crds/cert-manager.io_certificates.yaml \
	--external-api-module "github.com/cert-manager/cert-manager@$cert_manager"
log_info "(create api took $(fmt_duration $((SECONDS - t))))"
log_info "HTTPRoute: a file in the project"
mkdir -p crds
install -m 0644 "$gw_dir/config/crd/standard/gateway.networking.k8s.io_httproutes.yaml" crds/
ob create api --group gateway --external-api-domain networking.k8s.io --version v1 --kind HTTPRoute \
	--resource=false --controller --external-api-path crds/gateway.networking.k8s.io_httproutes.yaml >/dev/null
rm -r crds
log_info "Shelf: a cluster-scoped kind, the second document of a file of opbuilder's fixtures"
ob create api --group toys --external-api-domain example.org --version v1 --kind Shelf \
	--resource=false --controller --external-api-path "$OPBUILDER_ROOT/e2e/fixtures/external-crds/toys.example.org_widgets.yaml" >/dev/null
grep -q 'Api::all' tests/shelf_controller_test.rs || die "the Shelf test does not read a cluster-scoped kind"
for f in external-crds/cert-manager.io_certificates.yaml external-crds/gateway.networking.k8s.io_httproutes.yaml \
	src/external/cert_manager_io/v1/certificate.rs src/external/gateway_networking_k8s_io/v1/http_route.rs \
	external-crds/toys.example.org_shelves.yaml src/external/toys_example_org/v1/shelf.rs \
	tests/certificate_controller_test.rs tests/http_route_controller_test.rs tests/shelf_controller_test.rs; do
	[[ -s $f ]] || die "create api wrote no $f"
done
grep -q 'root = "HttpRoute"' src/external/gateway_networking_k8s_io/v1/http_route.rs ||
	die "kopium's HTTPRoute types are not rooted at HttpRoute"
grep -q 'external: true' PROJECT || die "PROJECT records no external resource"
git add -A && git -c user.name=e2e -c user.email=e2e@example.com commit -qm kinds

log_info "make external-types writes the same types again"
make external-types
[[ -z $(git status --porcelain) ]] || die "make external-types changed: $(git status --porcelain; git diff | head -40)"

log_info "alpha generate makes the same project again"
ob alpha generate --output-dir "$work/again" >/dev/null
diff -r -x target -x bin -x .git -x Cargo.lock "$project" "$work/again" || die "alpha generate made another project (diff above)"
log_info "delete api of the three kinds, the first created first, gives back the project of init"
git clone -q "$project" "$work/deleted"
(
	cd "$work/deleted"
	ob delete api --group cert-manager --version v1 --kind Certificate >/dev/null
	ob delete api --group gateway --version v1 --kind HTTPRoute >/dev/null
	ob delete api --group toys --version v1 --kind Shelf >/dev/null
	git add -A
	git diff --cached --quiet HEAD~1 || die "delete api did not give back the project of init: $(git diff --cached --stat HEAD~1)"
)
log_info "make lint and make test (the integration tests reconcile a Certificate and an HTTPRoute)"
"$scripts/link-envtest.sh" "$project"
make lint
make test 2>&1 | tee "$work/test.log"
for t in certificate_controller_test http_route_controller_test shelf_controller_test; do
	grep -q "Running tests/$t.rs" "$work/test.log" || die "make test did not run tests/$t.rs"
done
(($(grep -c "test a_new_object_is_reconciled ... ok" "$work/test.log") == 3)) || die "not every reconcile test passed"

log_info "rust-external: passed"
