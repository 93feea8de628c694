#!/usr/bin/env bash
# Prove a project of the Rust layout (rust.opbuilder.io/v1-beta) works with the real tools:
#   cargo fmt --check; make vet (clippy, warnings are errors); make manifests writes one CRD
#   per kind with types in PROJECT, and leaves config/rbac/role.yaml and
#   leader_election_role.yaml as opbuilder wrote them (the RBAC of the code); kubectl kustomize renders
#   config/default (with certs.opbuilder.io/v1-alpha: nothing of cert-manager) and config/samples;
#   `make test` without kube-apiserver and etcd fails saying how to get them; and, unless --no-test, `make test` (unit tests and integration tests on a
#   real kube-apiserver and etcd, the e2e control-plane binaries).
#
# Every Rust project of one run shares a cargo build directory (build.build-dir) keyed by the kube and
# k8s-openapi pins ($E2E_CACHE/rust-target/...), so the dependencies are built once.
#
# Usage: verify-rust-project.sh [--no-test] PROJECT_DIR
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
need_cmd cargo make kubectl
dir=$(cd "$1" && pwd)
cd "$dir"
name=$(basename "$dir")
step() { log_info "[$name] $*"; }
use_rust_target

step "cargo fmt --check"
cargo fmt --check

step "make vet (cargo clippy --all-targets -- -D warnings)"
make vet

step "make manifests"
rbac_files=(config/rbac/role.yaml config/rbac/leader_election_role.yaml)
for f in "${rbac_files[@]}"; do
	[[ -f $f ]] || die "[$name] opbuilder wrote no $f"
	cp "$f" "$f.scaffolded"
done
make manifests
for f in "${rbac_files[@]}"; do
	if ! diff -u "$f.scaffolded" "$f" >&2; then
		die "[$name] make manifests rewrote $f: opbuilder's RBAC differs from what the code declares (diff above)"
	fi
	rm -f "$f.scaffolded"
done
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
# A namespace-scoped manager (PROJECT namespaced: true) gets a Role, bound by a RoleBinding.
if grep -qx 'namespaced: true' PROJECT; then
	grep -qx 'kind: Role' config/rbac/role.yaml || die "[$name] make manifests wrote no Role for a namespace-scoped manager"
	grep -qx 'kind: RoleBinding' config/rbac/role_binding.yaml || die "[$name] no RoleBinding for a namespace-scoped manager"
else
	grep -q '^kind: ClusterRole' config/rbac/role.yaml || die "[$name] make manifests wrote no ClusterRole"
fi

step "kubectl kustomize config/default and config/samples"
kubectl kustomize config/default >"$dir/.rendered-default.yaml"
grep -q '^kind: Deployment' "$dir/.rendered-default.yaml" || die "[$name] config/default renders no Deployment"
check_own_certs "$name" "$dir/.rendered-default.yaml"
rm -f "$dir/.rendered-default.yaml"
if [[ -d config/samples ]]; then
	kubectl kustomize config/samples >/dev/null
fi

step "make test without kube-apiserver and etcd: refused, saying how to get them"
rm -rf bin/k8s
if out=$(env -u KUBEBUILDER_ASSETS make test 2>&1); then
	die "[$name] make test passed without a control plane"
fi
grep -q 'make envtest-from-source' <<<"$out" || die "[$name] make test did not say how to get the binaries: $out"

step "ENVTEST_ASSETS: an exact ENVTEST_K8S_VERSION names its directory, MAJOR.MINOR the newest patch"
fake=$(mktemp -d)
mkdir -p "$fake"/k8s/1.37.0-os-arch "$fake"/k8s/1.37.9-os-arch "$fake"/k8s/1.37.10-os-arch "$fake"/k8s/1.38.0-os-arch
assets() { make -s --no-print-directory --eval 'print-envtest-assets: ; @echo $(ENVTEST_ASSETS)' print-envtest-assets LOCALBIN="$fake" ENVTEST_K8S_VERSION="$1"; }
for want in 1.37:1.37.10 1.37.0:1.37.0 1.37.9:1.37.9 1.38:1.38.0; do
	got=$(assets "${want%%:*}")
	[[ $got == "$fake/k8s/${want#*:}-os-arch" ]] ||
		die "[$name] ENVTEST_K8S_VERSION=${want%%:*} made ENVTEST_ASSETS '$got', not $fake/k8s/${want#*:}-os-arch"
done
got=$(assets 1.36)
[[ -z $got ]] || die "[$name] ENVTEST_K8S_VERSION=1.36 (not there) made ENVTEST_ASSETS '$got', not empty"
rm -rf "$fake"

if ((run_tests)); then
	step "make test (unit tests, and integration tests on kube-apiserver and etcd)"
	"$scripts/link-envtest.sh" "$dir"
	make test

	# A free port taken by another process before kube-apiserver listens on it (a cold CI run
	# saw "bind: address already in use" on a busy machine): the tests' control plane starts
	# again on other ports. The first kube-apiserver of this run finds its --secure-port held by
	# a real listener; the ones after it get the ports they are given.
	step "a port taken before kube-apiserver listens on it: the tests' control plane starts again"
	taken=$(mktemp -d)
	real=$(cd bin/k8s/*/ && pwd)
	ln -s "$real/etcd" "$taken/etcd"
	cat >"$taken/kube-apiserver" <<'WRAPPER'
#!/usr/bin/env bash
# The first call: a listener on the --secure-port it is given, then the real kube-apiserver.
if mkdir "$TAKEN_DIR/first" 2>/dev/null; then
	port=$(printf '%s\n' "$@" | sed -n 's/^--secure-port=//p')
	python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
open(sys.argv[2], "w").write("held")
time.sleep(120)' "$port" "$TAKEN_DIR/first/held" &
	echo $! >"$TAKEN_DIR/first/pid"
	for _ in $(seq 50); do [[ -e $TAKEN_DIR/first/held ]] && break; sleep 0.1; done
fi
echo started >>"$TAKEN_DIR/calls"
exec "$REAL_ASSETS/kube-apiserver" "$@"
WRAPPER
	chmod +x "$taken/kube-apiserver"
	first=$(grep -l 'ControlPlane::start' tests/*.rs | sort | head -n 1)
	[[ -n $first ]] || die "[$name] no test file in tests/ starts a ControlPlane"
	first=$(basename "$first" .rs)
	rc=0
	out=$(TAKEN_DIR=$taken REAL_ASSETS=$real KUBEBUILDER_ASSETS=$taken \
		cargo test --locked --test "$first" -- --nocapture 2>&1) || rc=$?
	[[ -e $taken/first/pid ]] && { kill "$(cat "$taken/first/pid")" 2>/dev/null || true; }
	((rc == 0)) || {
		printf '%s\n' "$out" | tail -n 40 >&2
		die "[$name] tests/$first.rs failed when kube-apiserver's port was taken at its first start"
	}
	[[ -e $taken/first/held ]] || die "[$name] the listener on kube-apiserver's port never started"
	grep -q 'a port chosen for it was taken meanwhile; starting again' <<<"$out" ||
		die "[$name] tests/$first.rs passed without saying that the control plane started again: $out"
	(($(wc -l <"$taken/calls") >= 2)) || die "[$name] kube-apiserver was started once only"
	rm -rf "$taken"
fi
step "ok"
