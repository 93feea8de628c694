#!/usr/bin/env bash
# Prove a generated project works with the real tools:
#   go mod tidy; gofmt -l . is empty; make generate manifests build; with typed clients,
#   check-typed-clients.sh; go vet ./...; make lint;
#   one CRD in config/crd/bases per API in PROJECT; kubectl kustomize config/default renders
#   (with certs.opbuilder.io/v1-alpha: nothing of cert-manager);
#   and, unless --no-test, `make test` against the offline envtest binaries.
# A project of the Rust layout is handed to verify-rust-project.sh.
# OPBUILDER_SKIP_LINT=REASON leaves `make lint` out and logs "make lint: skipped (REASON)"
# (check-golden.sh sets it from e2e/testdata/<tree>/lint-skip).
#
# Usage: verify-project.sh [--no-test] PROJECT_DIR
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run_tests=1
if [[ ${1:-} == --no-test ]]; then
	run_tests=0
	shift
fi
[[ $# -eq 1 && -d $1 ]] || die "usage: $0 [--no-test] PROJECT_DIR"
if grep -qx -- '- rust.opbuilder.io/v1-\(alpha\|beta\)' "$1/PROJECT" 2>/dev/null; then
	# The Rust layout has its own checks.
	if ((run_tests)); then
		exec "$scripts/verify-rust-project.sh" "$1"
	fi
	exec "$scripts/verify-rust-project.sh" --no-test "$1"
fi
need_cmd go make kubectl gofmt
dir=$(cd "$1" && pwd)
cd "$dir"
name=$(basename "$dir")
step() { log_info "[$name] $*"; }

step "go mod tidy"
go mod tidy

# unformatted: the files `gofmt -l` lists, bin/ left out. gofmt's list is taken first: in one pipe
# with `|| true`, a gofmt that failed (a file it cannot parse) left the list empty and the check
# passed.
unformatted() {
	local listed
	listed=$(gofmt -l .) || die "[$name] gofmt -l failed (above)"
	grep -v '^bin/' <<<"$listed" || true
}

step "gofmt -l (must print nothing)"
unformatted=$(unformatted)
[[ -z $unformatted ]] || die "[$name] files not gofmt-clean: $unformatted"

step "tools from the e2e cache (controller-gen, kustomize, golangci-lint)"
"$scripts/seed-tools.sh" --lint "$dir"

step "make generate manifests build"
make generate manifests build

if grep -q '^verify-client:' Makefile; then
	"$scripts/check-typed-clients.sh" "$dir"
fi

step "gofmt -l after generation"
unformatted=$(unformatted)
[[ -z $unformatted ]] || die "[$name] generated files not gofmt-clean: $unformatted"

step "go vet ./..."
go vet ./...

if [[ -n ${OPBUILDER_SKIP_LINT:-} ]]; then
	step "make lint: skipped ($OPBUILDER_SKIP_LINT)"
else
	step "make lint (golangci-lint $(pin scaffold.golangci_lint))"
	# Not the user's shared golangci-lint cache: it keys results by package content, so a copy of
	# the same tree at another, since deleted, path hands back findings for files that no longer
	# exist. check-golden.sh gives all trees of one run one fresh cache (they share their
	# dependencies' analysis); run alone, a project gets its own.
	if [[ -n ${OPBUILDER_LINT_CACHE:-} ]]; then
		GOLANGCI_LINT_CACHE=$OPBUILDER_LINT_CACHE make lint
	else
		GOLANGCI_LINT_CACHE="$dir/.golangci-cache" make lint
		rm -rf "$dir/.golangci-cache"
	fi
fi

# One CRD per group and kind that has types in PROJECT (the versions of a kind share a CRD).
# PROJECT keys are sorted, so a resource with types starts with `- api:`.
apis=$(awk '
	/^- / { if (api) seen[group "/" kind] = 1; api = ($0 ~ /^- api:/); group = ""; kind = "" }
	/^  group: / { group = $2 }
	/^  kind: / { kind = $2 }
	/^[^ -]/ { if (api) seen[group "/" kind] = 1; api = 0 }
	END { if (api) seen[group "/" kind] = 1; n = 0; for (k in seen) n++; print n }
' PROJECT)
crds=0
if [[ -d config/crd/bases ]]; then
	crds=$(find config/crd/bases -name '*.yaml' | wc -l)
fi
step "CRDs: $crds for $apis kind(s) with types in PROJECT"
[[ $crds -eq $apis ]] || die "[$name] expected $apis CRD file(s) in config/crd/bases, found $crds"

step "kubectl kustomize config/default"
kubectl kustomize config/default >"$dir/.rendered-default.yaml"
grep -q '^kind: Deployment' "$dir/.rendered-default.yaml" || die "[$name] config/default renders no Deployment"
check_own_certs "$name" "$dir/.rendered-default.yaml"
if [[ -d config/samples ]]; then
	kubectl kustomize config/samples >/dev/null
fi
rm -f "$dir/.rendered-default.yaml"

if ((run_tests)); then
	step "make test (envtest, offline binaries)"
	"$scripts/link-envtest.sh" "$dir"
	export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=${KUBEBUILDER_CONTROLPLANE_START_TIMEOUT:-180s}
	export KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT=${KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT:-60s}
	make test
fi
step "ok"
