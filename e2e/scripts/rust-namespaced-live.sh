#!/usr/bin/env bash
# A namespace-scoped manager of the Rust layout on a live control plane, from the golden tree
# e2e/testdata/rust-namespaced (`init --namespaced`). The manager runs as the ServiceAccount
# config/ deploys, with the RBAC of `kubectl kustomize config/default`, through a token:
#   - the manager's RBAC has no cluster-wide rule for the kinds it reconciles: manager-role is a
#     Role of fleet-system bound by a RoleBinding, and no ClusterRole bound to the ServiceAccount
#     names the kinds' API groups;
#   - with WATCH_NAMESPACE=fleet-system (what config/manager sets from the Pod's namespace) it
#     becomes ready, reconciles a Frigate of fleet-system (Available, no finalizer) and lets it
#     be deleted at once, and leaves alone a Frigate of another namespace;
#   - without WATCH_NAMESPACE the same RBAC cannot watch the cluster: the manager logs the
#     failing watch (forbidden) and stays ready (its webhooks would answer).
# Needs python3 with PyYAML (Debian: python3-yaml).
#
# Usage: rust-namespaced-live.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd cargo make kubectl curl
need_pyyaml

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-rust-namespaced.XXXXXX")
cp_dir="$work/plane"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$scripts/control-plane.sh" stop "$cp_dir" || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dir="$work/fleet"
cp -r "$OPBUILDER_ROOT/e2e/testdata/rust-namespaced/tree" "$dir"
cd "$dir"
"$scripts/seed-tools.sh" "$dir"
use_rust_target
log_info "make manifests; cargo build (the manager)"
make manifests
cargo build --quiet --bin fleet
manager="$dir/target/debug/fleet"
namespace=fleet-system

fail() {
	for f in "$work"/*.log; do
		[[ -e $f ]] || continue
		echo "---- $f"
		tail -30 "$f"
	done
	die "$*"
}

log_info "the manager's RBAC as config/default deploys it: a Role for the kinds, nothing cluster-wide"
kubectl kustomize config/default >"$work/default.yaml"
python3 - "$work/default.yaml" "$namespace" <<'PY'
import sys, yaml
path, namespace = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
account = ("ServiceAccount", "fleet-controller-manager", namespace)
def binds_manager(b):
    return any((s.get("kind"), s.get("name"), s.get("namespace")) == account for s in b.get("subjects", []))
roles = {(d["kind"], d["metadata"]["name"]): d for d in docs if d["kind"] in ("Role", "ClusterRole")}
kinds_groups = {"ship.example.com", "apps"}
manager = roles.get(("Role", "fleet-manager-role"))
if not manager or manager["metadata"].get("namespace") != namespace:
    sys.exit(f"no Role fleet-manager-role in {namespace}: {sorted(roles)}")
if not any(g in kinds_groups for r in manager["rules"] for g in r["apiGroups"]):
    sys.exit("the Role fleet-manager-role grants nothing on the kinds")
bound = [d for d in docs if d["kind"] == "RoleBinding" and binds_manager(d) and d["roleRef"]["name"] == "fleet-manager-role"]
if not bound or bound[0]["roleRef"]["kind"] != "Role":
    sys.exit("fleet-manager-role is not bound to the manager by a RoleBinding")
for b in (d for d in docs if d["kind"] == "ClusterRoleBinding" and binds_manager(d)):
    role = roles.get(("ClusterRole", b["roleRef"]["name"]), {})
    wide = [r for r in role.get("rules", []) if kinds_groups & set(r.get("apiGroups", []))]
    if wide:
        sys.exit(f"ClusterRole {b['roleRef']['name']} grants the manager cluster-wide rules on the kinds: {wide}")
PY

"$scripts/control-plane.sh" start "$cp_dir"
eval "$("$scripts/control-plane.sh" env "$cp_dir")"

log_info "the manager's identity (Namespace, ServiceAccount, RBAC) and a token; make install"
manager_identity "$work/default.yaml"
make install
kubectl create namespace elsewhere >/dev/null
token_kubeconfig fleet-controller-manager "$namespace" >"$work/manager.kubeconfig"

# start_manager NAME [ENV...]: the manager as the ServiceAccount on ports of its own (sets
# pid_NAME and probe_NAME), its log in NAME.log.
start_manager() {
	local name=$1 probe
	shift
	probe=$((20000 + RANDOM % 10000))
	env KUBECONFIG="$work/manager.kubeconfig" POD_NAMESPACE="$namespace" RUST_LOG=info "$@" "$manager" \
		--health-probe-bind-address "127.0.0.1:$probe" --metrics-bind-address "127.0.0.1:$((probe + 1))" \
		>"$work/$name.log" 2>&1 &
	pids+=("$!")
	printf -v "pid_$name" '%s' "$!"
	printf -v "probe_$name" '%s' "$probe"
	WAIT_FOR_PID=$! wait_for 60 "manager $name's /healthz" curl -fsS "http://127.0.0.1:$probe/healthz" ||
		fail "manager $name did not start"
}
stop_manager() { # NAME
	local pid_var="pid_$1" status=0
	kill -TERM "${!pid_var}" 2>/dev/null || true
	wait "${!pid_var}" || status=$?
	[[ $status -eq 0 ]] || fail "manager $1 exited $status, not 0"
}
available() { # NAME NS
	[[ $(kubectl get frigate "$1" -n "$2" -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null) == True ]]
}
gone() { ! kubectl get frigate "$1" -n "$2" >/dev/null 2>&1; }

log_info "without WATCH_NAMESPACE the Role cannot watch the cluster: the failing watch logged, the manager ready"
start_manager wide
wait_for 30 "manager wide to log the failing watch" grep -q 'a watch fails.*watch="\?ship-frigate' "$work/wide.log" ||
	fail "a cluster-wide watch did not fail with the Role: $(tail -5 "$work/wide.log")"
grep -q 'a watch fails.*forbidden' "$work/wide.log" || fail "the failing watch's log does not say it is forbidden: $(grep 'a watch fails' "$work/wide.log")"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$probe_wide/readyz") == 200 ]] ||
	fail "a manager whose watch fails is unready: $(curl -s "http://127.0.0.1:$probe_wide/readyz")"
stop_manager wide

log_info "with WATCH_NAMESPACE=$namespace: ready, reconciles in its namespace only"
start_manager ns WATCH_NAMESPACE="$namespace"
wait_for 60 "manager ns to be ready" curl -fsS "http://127.0.0.1:$probe_ns/readyz" || fail "the namespace-scoped manager is not ready"
grep -q 'watching one namespace' "$work/ns.log" || fail "the manager does not say it watches one namespace"
kubectl apply -n "$namespace" -f config/samples/ship_v1_frigate.yaml
kubectl apply -n elsewhere -f config/samples/ship_v1_frigate.yaml
wait_for 60 "Frigate frigate-sample of $namespace to be Available" available frigate-sample "$namespace" ||
	fail "the Frigate of $namespace was not reconciled"
[[ -z $(kubectl get frigate frigate-sample -n "$namespace" -o jsonpath='{.metadata.finalizers}') ]] ||
	fail "the Frigate of $namespace has a finalizer: the controller's FINALIZER is None"
sleep 5 # time enough for a reconcile of the other namespace's Frigate, were it watched
[[ -z $(kubectl get frigate frigate-sample -n elsewhere -o jsonpath='{.status}') ]] ||
	fail "the manager reconciled a Frigate outside its namespace"
kubectl delete frigate frigate-sample -n "$namespace" --wait=false
wait_for 60 "Frigate frigate-sample of $namespace to be gone" gone frigate-sample "$namespace" ||
	fail "the Frigate is still there"
stop_manager ns
log_info "rust-namespaced-live: ok"
