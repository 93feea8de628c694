# shellcheck shell=bash
# The projects of stage `cluster` after the first (go/v4, in cluster-e2e.sh), each a function that
# cluster-e2e.sh calls on the same node, in this order:
#
#   cluster_test_e2e     the go/v4 project's own `make test-e2e`, with e2e/node/bin/kind for kind;
#
# Sourced by cluster-e2e.sh, whose helpers and variables they use (k, ok, fail, timed, ca_injected,
# timings; $work, $node, $here, $opbuilder); the helpers below (scrape_metrics, deploy_available_in)
# serve the go/v4 part too. Each part sets the global ns to its project's
# namespace, so that a failure shows that namespace's pods and manager logs.

# cluster_test_e2e DIR: the go/v4 project in DIR runs its own test/e2e, `make test-e2e`, against the
# node as it would against kind: e2e/node/bin/kind first on PATH stands in for kind (get clusters,
# load docker-image into the node, delete cluster), KIND_CLUSTER=opbuilder-e2e (the node's name),
# CERT_MANAGER_INSTALL_SKIP=true (cluster.sh installed it), curlimages/curl:latest from the local
# registry. Its image is the stage's (example.com/NAME:v0.0.1), so make docker-build finds it built.
cluster_test_e2e() {
	local proj=$1 out
	ns=$(basename "$proj")-system
	cd "$proj"
	out="$work/test-e2e.log"
	timed "test-e2e: make test-e2e (the project's own test/e2e; kind stood in for)" bash -c "
		set -o pipefail
		PATH='$OPBUILDER_ROOT/e2e/node/bin':\$PATH OPBUILDER_NODE_DIR='$node' CERT_MANAGER_INSTALL_SKIP=true \
			make test-e2e KIND_CLUSTER=opbuilder-e2e 2>&1 | tee '$out.color'
	"
	# Ginkgo colours its summary; read it without the escapes.
	sed 's/\x1b\[[0-9;]*m//g' "$out.color" >"$out"
	grep -Eq '^Ran ([0-9]+) of \1 Specs' "$out" && grep -q '^SUCCESS!' "$out" ||
		fail "make test-e2e did not run all its specs: $(grep -E '^Ran |SUCCESS|FAIL' "$out" | xargs)"
	[[ $(k -n cert-manager get deployments -o 'jsonpath={.items[*].status.availableReplicas}') == "1 1 1" ]] ||
		fail "cert-manager is not running after make test-e2e: $(k -n cert-manager get deployments 2>&1)"
	grep -q 'kind stand-in: leaving the e2e node' "$out" || fail "make test-e2e did not delete its cluster through kind"
	ok "make test-e2e of the go/v4 project: $(grep -E '^Ran ' "$out" | tail -n 1) against the node, kind stood in for by e2e/node/bin/kind"
	cd "$work"
}

# deploy_available_in NS DEPLOYMENT N: the Deployment has N available replicas.
deploy_available_in() {
	[[ $(k -n "$1" get deployment "$2" -o 'jsonpath={.status.availableReplicas}') == "$3" ]]
}

# scrape_metrics NS SERVICE POD TOKEN: GET https://SERVICE.NS.svc.cluster.local:8443/metrics from a
# pod POD of curlimages/curl:latest, as the generated test/e2e runs it (pull policy Always: the
# local registry serves it; the restricted security context), with TOKEN as the bearer token
# unless empty; prints the pod's output (curl -v).
scrape_metrics() {
	local sns=$1 svc=$2 pod=$3 token=$4 auth=""
	[[ -z $token ]] || auth="-H 'Authorization: Bearer $token'"
	k -n "$sns" run "$pod" --restart=Never --image=curlimages/curl:latest --overrides "$(
		python3 -c 'import json, sys; print(json.dumps({"spec": {"containers": [{"name": "curl",
			"image": "curlimages/curl:latest", "command": ["/bin/sh", "-c"], "args": [sys.argv[1]],
			"securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
			"runAsNonRoot": True, "runAsUser": 1000, "capabilities": {"drop": ["ALL"]},
			"seccompProfile": {"type": "RuntimeDefault"}}}]}}))' \
			"curl -v -k $auth https://$svc.$sns.svc.cluster.local:8443/metrics"
	)" >/dev/null
	pod_done() { [[ $(k -n "$1" get pod "$2" -o 'jsonpath={.status.phase}') =~ ^(Succeeded|Failed)$ ]]; }
	wait_for 180 "pod $pod to complete" pod_done "$sns" "$pod" ||
		fail "pod $pod did not complete: $(k -n "$sns" describe pod "$pod" | tail -n 15)"
	k -n "$sns" logs "$pod"
}
