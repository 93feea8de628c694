#!/usr/bin/env bash
# Stage `cluster`: a generated go/v4 project proven in a real one-node cluster (cluster.sh), as
# Kubebuilder's generated test/e2e proves it in kind:
#
#   1. opbuilder init; create api Ship v1 (a controller) and v2; create webhook on v1 with
#      --defaulting --programmatic-validation --conversion --spoke v2; a few lines of user code:
#      v2 names v1's `foo` `bar` (the conversion maps them), the validator refuses foo
#      "forbidden", the controller sets an Available condition;
#   2. its own `make docker-build IMG=...` (the generated Dockerfile, BuildKit), `cluster.sh load`,
#      `make deploy IMG=...` into a namespace that enforces the restricted Pod Security Standard;
#   3. the manager pod Ready under its own ServiceAccount, which may do what its ClusterRole says
#      and nothing else; cert-manager's Certificate Ready and its CA injected into both webhook
#      configurations and the CRD's conversion webhook;
#   4. right after that, through the webhook Service: a Ship defaulted, a bad one refused, a v1
#      Ship read as v2 and a v2 one as v1; the controller's condition on the Ship;
#   5. /metrics over HTTPS from curl pods (curlimages/curl:latest, pulled with policy Always from
#      the local registry): 200 to a token bound to the metrics-reader ClusterRole, 403 to a
#      token without it, 401 without a token;
#   6. two replicas with leader election: exactly one holds the Lease;
#   7. the inner loop (check_rebuild_rolls_out_same_tag): after an edit of the controller, its own
#      `make docker-build` under the same tag, `cluster.sh load`, `make deploy`: a new pod with the
#      new image ID in its template becomes Ready and runs the new code; `make deploy` of an image
#      the container engine does not have deploys it by name, without the annotation;
#   8. `make undeploy` leaves none of the project's objects;
#   then, on the same node, the projects of cluster-projects.sh (each a function; see there): the
#      project's own make test-e2e, a Rust-layout project, seed 001's RedisCluster, the helm
#      chart, the deploy-image operand (real memcached), the tutorial's CronJob operator and the
#      webhooks without cert-manager (certs/v1-alpha: deploy, two replicas, a forced rotation);
#   9. cluster.sh stop: the host's state (processes, mounts, iptables, interfaces, CNI files, lo
#      addresses, sysctls) is what it was before the node started.
#
# Usage: cluster-e2e.sh     Environment: OPBUILDER_BIN, OPBUILDER_E2E_CACHE, CLUSTER_KEEP=1 (keep
# the work directory of a passing run), CLUSTER_ONLY="NAME..." (only those projects of
# cluster-projects.sh, e.g. selfcerts, on a node started and stopped for them). The last line is
# "cluster: N passed, M failed".
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=node-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/node-lib.sh"
# shellcheck source-path=SCRIPTDIR source=cluster-projects.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster-projects.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
need_cmd go cargo make curl python3
opbuilder=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $opbuilder ]] || die "opbuilder binary not found at $opbuilder (cargo build first)"

t_total=$SECONDS
passed=0
timings=()
ok() {
	passed=$((passed + 1))
	log_info "ok: $*"
}
fail() {
	log_error "FAIL: $*"
	exit 1
}
# timed DESC CMD...: run CMD (output in the work directory's log), record how long it took; CMD
# is stopped after step_limit seconds (default 1800; a caller sets it for one slower step).
timed() {
	local desc=$1 t=$SECONDS rc=0
	shift
	log_info "$desc"
	printf '\n==== %s\n$ %s\n' "$desc" "$*" >>"$work/stage.log"
	timeout --kill-after=15 "${step_limit:-1800}" "$@" </dev/null >>"$work/stage.log" 2>&1 || rc=$?
	if ((rc != 0)); then
		tail -n 60 "$work/stage.log" >&2
		fail "$desc (exit $rc; log $work/stage.log)"
	fi
	timings+=("$(printf '%-52s %s' "$desc" "$(fmt_duration $((SECONDS - t)))")")
}

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-cluster.XXXXXX")
node="$work/node"
: >"$work/stage.log"
cleanup() {
	local rc=$?
	trap - EXIT
	if [[ -f $node/lock-holder.pid ]]; then
		if ((rc != 0)) && [[ -f $node/kubeconfig ]]; then
			{
				echo "----- pods, events and manager logs at the failure -----"
				k get pods -A -o wide || true
				k get events -A --sort-by=.lastTimestamp | tail -n 30 || true
				k -n "$ns" logs -l control-plane=controller-manager --tail=40 --all-containers || true
			} >&2 2>&1
		fi
		"$here/cluster.sh" stop "$node" || rc=1
	fi
	if ((rc == 0)) && [[ ${CLUSTER_KEEP:-0} != 1 ]]; then
		rm -rf "$work"
	else
		log_info "kept $work (node state and logs in $node, commands in $work/stage.log)"
	fi
	((rc == 0)) || echo "cluster: $passed passed, 1 failed"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

name=shipyard
ns=$name-system
sa=$name-controller-manager
img=example.com/$name:v0.0.1
k() { "$(k8s_bin_dir)/kubectl" --kubeconfig "$node/kubeconfig" --request-timeout=30s "$@"; }

# ---------------------------------------------------------------- the inner loop (issue 36)

# check_rebuild_rolls_out_same_tag DIR IMG NS DEPLOYMENT EDIT PROOF: what a user repeats all day,
# in a project already deployed with `make deploy IMG=IMG`: the Deployment's pod template carries
# the image ID of IMG (opbuilder.io/image-id); EDIT (a command run in DIR) changes the code; the
# project's own `make docker-build IMG=IMG` (the same tag), `cluster.sh load`, `make deploy
# IMG=IMG`; then the template carries the new image ID, a new pod replaces the old one and becomes
# Ready, and PROOF (a function of this script, polled up to 120 s) sees the new code at work. Last, `make deploy`
# of an image the container engine does not have deploys it by name without the annotation (its
# output is read, not applied). Shared by the projects of this stage: give it the Rust layout's.
check_rebuild_rolls_out_same_tag() {
	local dir=$1 img=$2 ns=$3 deploy=$4 edit=$5 proof=$6 old_id new_id old_pods p new_pod t=$SECONDS
	local annotation='{.spec.template.metadata.annotations.opbuilder\.io/image-id}'
	old_id=$(docker image inspect -f '{{ .Id }}' "$img")
	[[ $(k -n "$ns" get deployment "$deploy" -o "jsonpath=$annotation") == "$old_id" ]] ||
		fail "make deploy did not put the image ID of $img ($old_id) into the pod template: $(k -n "$ns" get deployment "$deploy" -o "jsonpath=$annotation")"
	old_pods=" $(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[*].metadata.name}') "
	(cd "$dir" && bash -c "$edit") || fail "the edit of the inner loop failed: $edit"
	timed "make docker-build IMG=$img after an edit (same tag)" make -C "$dir" docker-build IMG="$img"
	new_id=$(docker image inspect -f '{{ .Id }}' "$img")
	[[ $new_id != "$old_id" ]] || fail "the edit did not change the image $img"
	timed "cluster.sh load $img (rebuilt)" "$here/cluster.sh" load "$node" "$img"
	timed "make deploy IMG=$img (same tag)" make -C "$dir" deploy IMG="$img"
	[[ $(k -n "$ns" get deployment "$deploy" -o "jsonpath=$annotation") == "$new_id" ]] ||
		fail "make deploy did not put the new image ID ($new_id) into the pod template"
	k -n "$ns" rollout status "deployment/$deploy" --timeout=180s >>"$work/stage.log" 2>&1 ||
		fail "the rebuilt image did not roll out: $(k -n "$ns" get pods -o wide 2>&1)"
	only_new_pods() {
		local names
		names=$(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[*].metadata.name}')
		[[ -n $names ]] || return 1
		for p in $names; do [[ $old_pods != *" $p "* ]] || return 1; done
	}
	wait_for 120 "the old manager pod to be gone" only_new_pods || fail "the old manager pod is still there"
	new_pod=$(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].metadata.name}')
	[[ $(k -n "$ns" get pod "$new_pod" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
		fail "the new pod $new_pod is not Ready"
	wait_for 120 "the new code at work" "$proof" || fail "the new pod $new_pod does not run the new code ($proof)"
	timings+=("$(printf '%-52s %s' "edit, docker-build, load, deploy, new pod Ready" "$(fmt_duration $((SECONDS - t)))")")
	ok "after an edit, make docker-build and make deploy under the same tag $img: a new pod $new_pod (image ${new_id:0:19}) Ready, running the new code"

	printf '#!/bin/sh\ncat >%q\n' "$work/deploy-by-name.yaml" >"$work/kubectl-print"
	chmod +x "$work/kubectl-print"
	make -C "$dir" deploy IMG=example.com/never-built:v9 KUBECTL="$work/kubectl-print" >"$work/deploy-by-name.log" 2>&1 ||
		fail "make deploy of an image never built failed: $(cat "$work/deploy-by-name.log")"
	(cd "$dir/config/manager" && "$dir/bin/kustomize" edit set image controller="$img")
	grep -q 'has no image example.com/never-built:v9: deploying it by name' "$work/deploy-by-name.log" ||
		fail "make deploy did not say it deploys an image it does not have by name: $(cat "$work/deploy-by-name.log")"
	grep -q 'image: example.com/never-built:v9$' "$work/deploy-by-name.yaml" && ! grep -q 'opbuilder.io/image-id' "$work/deploy-by-name.yaml" ||
		fail "make deploy of an image never built did not deploy it by name without the annotation"
	ok "make deploy of an image the container engine does not have deploys it by name, without the annotation"
}

# ---------------------------------------------------------------- the node

# Cold, start builds the node's parts from the Go module proxy (kubelet and the rest, containerd,
# buildx, the registry, CoreDNS, cert-manager) and a debootstrap tree: 40 minutes and more when
# CI's other worker builds beside it, so its limit is an hour, not the default half.
# The Rust projects' images are release builds (their Dockerfiles run `cargo build --release`):
# compiled here at opt-level 0 (at 3, the cold image took 8.5 core-minutes, the largest single
# step of a cold CI run; docs/testing.md). What the stage proves is the Dockerfile, the image and
# the manager in the pod, not the optimizer (rust-nogo.sh's `make build` is at opt-level 0 too).
export OPBUILDER_NODE_RUST_OPT_LEVEL=${OPBUILDER_NODE_RUST_OPT_LEVEL:-0}
step_limit=3600 timed "cluster.sh start (builds what is missing)" "$here/cluster.sh" start "$node"
eval "$("$here/cluster.sh" env "$node")"
grep -E '^[0-9:]+ \[INFO\] [a-z-]+\.sh: timing: ' "$work/stage.log" |
	sed -E 's/^[0-9:]+ \[INFO\] ([a-z-]+)\.sh: timing: /  \1: /' >"$work/node-timings.txt" || true
k get node opbuilder-e2e >/dev/null || fail "no node"
ok "node Ready; CoreDNS and cert-manager $(pin node.cert_manager) running"

# stop_node: cluster.sh stop, the host as before start, the timings and the summary line.
stop_node() {
	cd "$work"
	timed "cluster.sh stop" "$here/cluster.sh" stop "$node"
	diff -u "$node/host-before.txt" "$node/host-after.txt" >&2 ||
		fail "cluster.sh stop left something behind (the diff above: before start, after stop)"
	ok "after stop the host is as before start: no process, mount, iptables rule, interface, CNI file or lo address of the node, sysctls restored"

	log_info "timings (this run):"
	cat "$work/node-timings.txt" >&2
	printf '  %s\n' "${timings[@]}" >&2
	log_info "stage cluster: $(fmt_duration $((SECONDS - t_total)))"
	echo "cluster: $passed passed, 0 failed"
}

# CLUSTER_ONLY="NAME...": only the projects named (the functions cluster_NAME of
# cluster-projects.sh, such as selfcerts), then stop; for working on one of them.
if [[ -n ${CLUSTER_ONLY:-} ]]; then
	for only in $CLUSTER_ONLY; do
		declare -F "cluster_$only" >/dev/null || fail "CLUSTER_ONLY: no project cluster_$only in cluster-projects.sh"
		"cluster_$only"
	done
	stop_node
	exit 0
fi

# ---------------------------------------------------------------- the project

proj="$work/$name"
mkdir -p "$proj"
cd "$proj"
timed "opbuilder init + create api v1, v2 + create webhook" bash -c "
	set -e
	'$opbuilder' init --domain example.com --repo example.com/$name
	'$opbuilder' create api --group ops --version v1 --kind Ship --resource --controller
	'$opbuilder' create api --group ops --version v2 --kind Ship --resource --controller=false
	'$opbuilder' create webhook --group ops --version v1 --kind Ship --defaulting --programmatic-validation --conversion --spoke v2
"

# The user's code: small edits of the scaffolded files, each anchored on a line the scaffold has.
python3 - <<'EOF' || fail "the user code could not be written into the scaffold"
import pathlib, re, sys

def edit(path, old, new, count=1):
    p = pathlib.Path(path)
    s = p.read_text()
    if s.count(old) < count:
        sys.exit(f"{path}: anchor not found: {old!r}")
    p.write_text(s.replace(old, new, count))

# v2 calls v1's foo bar.
edit("api/v2/ship_types.go", '	Foo *string `json:"foo,omitempty"`', '	Bar *string `json:"bar,omitempty"`')
edit("api/v2/ship_conversion.go", "	dst.ObjectMeta = src.ObjectMeta\n",
     "	dst.ObjectMeta = src.ObjectMeta\n	dst.Spec.Foo = src.Spec.Bar\n	dst.Status.Conditions = src.Status.Conditions\n", 1)
s = pathlib.Path("api/v2/ship_conversion.go").read_text()
i = s.index("func (dst *Ship) ConvertFrom")
s = s[:i] + s[i:].replace("	dst.ObjectMeta = src.ObjectMeta\n",
     "	dst.ObjectMeta = src.ObjectMeta\n	dst.Spec.Bar = src.Spec.Foo\n	dst.Status.Conditions = src.Status.Conditions\n", 1)
pathlib.Path("api/v2/ship_conversion.go").write_text(s)

# The validator refuses foo "forbidden".
w = "internal/webhook/v1/ship_webhook.go"
edit(w, '	shipLog.V(1).Info("Validating creation", "name", obj.GetName())\n',
     '	shipLog.V(1).Info("Validating creation", "name", obj.GetName())\n'
     '	if obj.Spec.Foo != nil && *obj.Spec.Foo == "forbidden" {\n'
     '		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "foo"), *obj.Spec.Foo, "is forbidden")}.ToAggregate()\n'
     '	}\n')
edit(w, '	"context"\n', '	"context"\n\n	"k8s.io/apimachinery/pkg/util/validation/field"\n')

# The controller reports that it saw the Ship.
c = "internal/controller/ship_controller.go"
edit(c, "	return ctrl.Result{}, nil\n}",
     '	meta.SetStatusCondition(&ship.Status.Conditions, metav1.Condition{\n'
     '		Type: "Available", Status: metav1.ConditionTrue, Reason: "Reconciled",\n'
     '		Message: "seen by the manager", ObservedGeneration: ship.Generation,\n'
     '	})\n'
     '	return ctrl.Result{}, r.Status().Update(ctx, &ship)\n}')
edit(c, '	"k8s.io/apimachinery/pkg/runtime"\n',
     '	"k8s.io/apimachinery/pkg/api/meta"\n	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"\n	"k8s.io/apimachinery/pkg/runtime"\n')
EOF
[[ -z $(gofmt -l api internal cmd) ]] || fail "the user code is not gofmt-clean: $(gofmt -l api internal cmd)"
"$here/seed-tools.sh" "$proj" >>"$work/stage.log" 2>&1 || fail "seed-tools.sh failed"
timed "make build (generate, manifests, vet, compile)" make build
ok "project built with the user code"

# Test infrastructure, not the project: BuildKit's Go caches filled from the host's (the modules
# and packages `make build` just used), so CI does not compile controller-runtime a second time in
# the container. The generated Dockerfile is used as it is.
timed "seed the Dockerfile's Go cache mounts from the host (seed-go-build-cache.sh)" \
	"$here/seed-go-build-cache.sh" "$proj"
image_build_load "" "$img"
deploy_restricted "" "$ns" "$img"

# ---------------------------------------------------------------- the manager, its certificate

deploy_available() { deploy_available_in "$ns" "$name-controller-manager" "${1:-1}"; }
ca_injected() { # KIND NAME JSONPATH
	[[ -n $(k get "$1" "$2" -o "jsonpath=$3") ]]
}
manager_available_with_ca "" "$ns" "$name-controller-manager" "$name"
wait_for 120 "the CA in the CRD's conversion webhook" ca_injected crd ships.ops.example.com \
	'{.spec.conversion.webhook.clientConfig.caBundle}' || fail "no CA injected (conversion)"
pod=$(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].metadata.name}')
[[ $(k -n "$ns" get pod "$pod" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
	fail "pod $pod is not Ready"
[[ $(k -n "$ns" get pod "$pod" -o 'jsonpath={.spec.serviceAccountName}') == "$sa" ]] ||
	fail "pod $pod does not run as $sa"
ok "manager pod $pod Ready under the ServiceAccount $sa in a namespace enforcing the restricted Pod Security Standard"
as_sa=(--as="system:serviceaccount:$ns:$sa")
[[ $(k auth can-i "${as_sa[@]}" update ships.ops.example.com --subresource=status -n default) == yes ]] || fail "$sa may not update ships/status"
[[ $(k auth can-i "${as_sa[@]}" list secrets --all-namespaces 2>/dev/null || true) == no ]] ||
	fail "$sa may list every secret: its RBAC is more than config/rbac gives"
[[ $(k auth can-i "${as_sa[@]}" create deployments -n default 2>/dev/null || true) == no ]] ||
	fail "$sa may create deployments: its RBAC is more than config/rbac gives"
ok "$sa may update ships/status, and may neither list secrets nor create deployments"

[[ $(k -n "$ns" get certificate "$name-serving-cert" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
	fail "cert-manager's Certificate $name-serving-cert is not Ready"
[[ $(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.type}') == kubernetes.io/tls ]] ||
	fail "no TLS secret webhook-server-cert"
ca=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.ca\.crt}')
for what in "mutatingwebhookconfiguration $name-mutating-webhook-configuration {.webhooks[0].clientConfig.caBundle}" \
	"validatingwebhookconfiguration $name-validating-webhook-configuration {.webhooks[0].clientConfig.caBundle}" \
	"crd ships.ops.example.com {.spec.conversion.webhook.clientConfig.caBundle}"; do
	read -r kind obj path <<<"$what"
	[[ $(k get "$kind" "$obj" -o "jsonpath=$path") == "$ca" ]] || fail "the CA of $kind $obj is not the certificate's"
done
ok "cert-manager issued $name-serving-cert; its CA is injected into both webhook configurations and the CRD"

# ---------------------------------------------------------------- webhooks through the Service

# At once, without retrying: the pod is Ready only once its webhook server listens.
cat >"$work/ship.yaml" <<EOF
apiVersion: ops.example.com/v1
kind: Ship
metadata: {name: defaulted, namespace: default}
spec: {}
EOF
k apply -f "$work/ship.yaml" >"$work/apply.log" 2>&1 || fail "the first Ship was refused right after the rollout: $(cat "$work/apply.log")"
[[ $(k get ships.v1.ops.example.com defaulted -o 'jsonpath={.spec.foo}') == default ]] ||
	fail "the Ship was not defaulted: $(k get ships.v1.ops.example.com defaulted -o yaml)"
ok "a Ship created right after the rollout was defaulted (spec.foo = default) by the mutating webhook"

if k apply -f - >"$work/refused.log" 2>&1 <<EOF; then
apiVersion: ops.example.com/v1
kind: Ship
metadata: {name: refused, namespace: default}
spec: {foo: forbidden}
EOF
	fail "a Ship with foo=forbidden was admitted"
fi
grep -q 'spec.foo: Invalid value: "forbidden": is forbidden' "$work/refused.log" ||
	fail "the refusal does not name the field: $(cat "$work/refused.log")"
ok "a Ship with spec.foo=forbidden refused by the validating webhook: $(grep -o 'admission webhook.*' "$work/refused.log" | head -c 160)"

[[ $(k get ships.v2.ops.example.com defaulted -o 'jsonpath={.apiVersion} {.spec.bar}') == "ops.example.com/v2 default" ]] ||
	fail "the v1 Ship does not read as v2 with spec.bar: $(k get ships.v2.ops.example.com defaulted -o yaml)"
k apply -f - >/dev/null <<EOF || fail "a v2 Ship was refused"
apiVersion: ops.example.com/v2
kind: Ship
metadata: {name: from-v2, namespace: default}
spec: {bar: sails}
EOF
[[ $(k get ships.v1.ops.example.com from-v2 -o 'jsonpath={.spec.foo}') == sails ]] ||
	fail "the v2 Ship does not read as v1 with spec.foo"
ok "conversion webhook: a v1 Ship reads as v2 (spec.bar), a v2 Ship as v1 (spec.foo)"

reconciled() {
	[[ $(k get ships.v1.ops.example.com "$1" -o 'jsonpath={.status.conditions[?(@.type=="Available")].reason}') == Reconciled ]]
}
wait_for 60 "the controller's condition on the Ship" reconciled defaulted || fail "the controller did not set its condition"
logs=$(k -n "$ns" logs "$pod")
for l in "Applying defaults" "Validating creation" "Reconciling"; do
	grep -q "$l" <<<"$logs" || fail "the manager's log lacks \"$l\""
done
ok "the controller set Available=Reconciled; the manager logged the defaulting, validation and reconcile calls"

# ---------------------------------------------------------------- the inner loop

rebuilt_condition() {
	[[ $(k get ships.v1.ops.example.com defaulted -o 'jsonpath={.status.conditions[?(@.type=="Available")].message}') == "seen by the rebuilt manager" ]]
}
check_rebuild_rolls_out_same_tag "$proj" "$img" "$ns" "$name-controller-manager" \
	"sed -i 's/seen by the manager/seen by the rebuilt manager/' internal/controller/ship_controller.go" \
	rebuilt_condition

# ---------------------------------------------------------------- metrics from a curl pod

metrics_svc=$name-controller-manager-metrics-service
# scrape NAME TOKEN: the metrics from a curl pod NAME (cluster-projects.sh); prints its output.
scrape() { scrape_metrics "$ns" "$metrics_svc" "$1" "$2"; }
t=$SECONDS
k create clusterrolebinding "$name-metrics-binding" --clusterrole="$name-metrics-reader" \
	--serviceaccount="$ns:$sa" >/dev/null
[[ $(k -n "$ns" get pod -l control-plane=controller-manager -o name | wc -l) == 1 ]] || fail "more than one manager pod"
out=$(scrape curl-metrics "$(k -n "$ns" create token "$sa")")
grep -q '< HTTP/1.1 200 OK' <<<"$out" || fail "the authorised scrape did not get 200: $(tail -n 20 <<<"$out")"
grep -q '^controller_runtime_reconcile_total{controller="ship"' <<<"$out" ||
	fail "the metrics lack controller_runtime_reconcile_total for the ship controller"
[[ $(k -n "$ns" get pod curl-metrics -o 'jsonpath={.spec.containers[0].imagePullPolicy}') == Always ]] ||
	fail "curlimages/curl:latest was not pulled with policy Always"
ok "GET /metrics over HTTPS by its cluster.local name, with a token bound to $name-metrics-reader: 200 and the reconcile counter (curlimages/curl:latest pulled from the local registry)"
out=$(scrape curl-forbidden "$(k -n "$ns" create token default)")
grep -q '< HTTP/1.1 403 Forbidden' <<<"$out" || fail "a token without the binding did not get 403: $(tail -n 20 <<<"$out")"
out=$(scrape curl-anonymous "")
grep -q '< HTTP/1.1 401 Unauthorized' <<<"$out" || fail "a request without a token did not get 401: $(tail -n 20 <<<"$out")"
ok "/metrics refuses a token without metrics-reader (403) and a request without a token (401)"
k -n "$ns" delete pod curl-metrics curl-forbidden curl-anonymous --wait=false >/dev/null
k delete clusterrolebinding "$name-metrics-binding" >/dev/null
timings+=("$(printf '%-52s %s' "metrics scraped by three curl pods" "$(fmt_duration $((SECONDS - t)))")")

# ---------------------------------------------------------------- leader election

t=$SECONDS
lease=$(sed -n 's/.*LeaderElectionID: *"\([^"]*\)".*/\1/p' cmd/main.go)
[[ -n $lease ]] || fail "no LeaderElectionID in cmd/main.go"
k -n "$ns" scale deployment "$name-controller-manager" --replicas=2 >/dev/null
wait_for 180 "two manager replicas" deploy_available 2 || fail "the second replica did not become available"
holder=$(k -n "$ns" get lease "$lease" -o 'jsonpath={.spec.holderIdentity}')
leaders=0
for p in $(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[*].metadata.name}'); do
	if k -n "$ns" logs "$p" | grep -i 'successfully acquired lease' >/dev/null; then
		leaders=$((leaders + 1))
		[[ $holder == "${p}_"* ]] || fail "pod $p says it leads but the Lease names $holder"
	fi
done
((leaders == 1)) || fail "$leaders of the two replicas acquired the lease $lease"
ok "two replicas, one leader: the Lease $lease is held by ${holder%%_*}"
timings+=("$(printf '%-52s %s' "two replicas, leader election" "$(fmt_duration $((SECONDS - t)))")")

# ---------------------------------------------------------------- undeploy

k delete ships.v1.ops.example.com --all -n default >/dev/null
timed "make undeploy" make undeploy
leftovers() {
	{
		k get namespace "$ns" -o name --ignore-not-found
		k get crd ships.ops.example.com -o name --ignore-not-found
		k get clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations -o name |
			grep "/$name-" || true
	} 2>&1
}
no_leftovers() { [[ -z $(leftovers) ]]; }
wait_for 180 "make undeploy to remove everything" no_leftovers || true
[[ -z $(leftovers) ]] || fail "make undeploy left: $(leftovers | xargs)"
ok "make undeploy removed the namespace, the CRD, the cluster roles and bindings and the webhook configurations"

# ---------------------------------------------------------------- the other projects (cluster-projects.sh)

cluster_test_e2e "$proj"
cluster_rust
cluster_rust_helm
cluster_redis_seed
cluster_helm
cluster_deploy_image
cluster_tutorial
cluster_selfcerts
cluster_rust_selfcerts

# ---------------------------------------------------------------- stop: nothing left behind

stop_node
