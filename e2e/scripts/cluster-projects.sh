# shellcheck shell=bash
# The projects of stage `cluster` after the first (go/v4, in cluster-e2e.sh), each a function that
# cluster-e2e.sh calls on the same node, in this order:
#
#   cluster_test_e2e     the go/v4 project's own `make test-e2e`, with e2e/node/bin/kind for kind;
#   cluster_redis_seed   seed 001's RedisCluster story, as its author ran it;
#   cluster_helm         the helm plugin's chart of the RedisCluster project: helm install, the
#                        manager pod Ready.
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

# cluster_redis_seed: seed 001's RedisCluster story as its author ran it: a project in
# redisclusterV2, create api and create webhook (--defaulting --programmatic-validation) for
# bytewang123-redis/v1 RedisCluster, the seed's Default and ValidateCreate
# (e2e/fixtures/rediscluster); cert-manager is installed (cluster.sh); make docker-build and make
# deploy with the seed's image name; the manager pod Running; the seed's sample (an empty addr)
# refused by the validating webhook; with an addr, its size of 3 raised to 6 by the defaulting
# webhook. The project stays deployed for cluster_helm's chart.
cluster_redis_seed() {
	local name=redisclusterv2 img=bytewang123/rediscluster:v0.0.6 proj="$work/redisclusterV2"
	local fixture="$OPBUILDER_ROOT/e2e/fixtures/rediscluster" sample=config/samples/bytewang123-redis_v1_rediscluster.yaml
	ns=$name-system
	mkdir -p "$proj"
	cd "$proj"
	timed "seed 001: opbuilder init + create api RedisCluster + create webhook" bash -c "
		set -e
		'$opbuilder' init --domain bytewang123.io --repo github.com/bytewang123/redisclusterV2
		'$opbuilder' create api --group bytewang123-redis --version v1 --kind RedisCluster --resource --controller
		'$opbuilder' create webhook --group bytewang123-redis --version v1 --kind RedisCluster --defaulting --programmatic-validation
	"
	# The seed's fields (addr, size) in place of the scaffold's example field, then its webhooks.
	python3 - <<'EOF' || fail "the seed's fields could not be written into api/v1/rediscluster_types.go"
import pathlib, sys
p = pathlib.Path("api/v1/rediscluster_types.go")
s = p.read_text()
old = """	// foo is an example field; remove it once you have fields of your own.
	// +optional
	Foo *string `json:"foo,omitempty"`
"""
if old not in s:
    sys.exit("anchor not found: the scaffold's Foo field")
p.write_text(s.replace(old, """	// addr is the address of the cluster, ip:port.
	Addr string `json:"addr"`

	// size is the number of Redis nodes; the defaulting webhook raises it to at least 6.
	// +optional
	Size int32 `json:"size,omitempty"`
"""))
EOF
	cp -r "$fixture/internal" "$fixture/config" .
	"$here/seed-tools.sh" "$proj" >>"$work/stage.log" 2>&1 || fail "seed-tools.sh failed"
	timed "seed 001: make build" make build
	timed "seed 001: make docker-build IMG=$img" make docker-build IMG="$img"
	timed "seed 001: cluster.sh load $img" "$here/cluster.sh" load "$node" "$img"
	timed "seed 001: make deploy IMG=$img" make deploy IMG="$img"
	local t=$SECONDS
	wait_for 300 "the RedisCluster manager to be available" deploy_available_in "$ns" "$name-controller-manager" 1 ||
		fail "the RedisCluster manager did not become available: $(k -n "$ns" get pods -o wide 2>&1)"
	local kind
	for kind in mutating validating; do
		wait_for 120 "the CA in the $kind webhook configuration" ca_injected "${kind}webhookconfiguration" \
			"$name-$kind-webhook-configuration" '{.webhooks[*].clientConfig.caBundle}' ||
			fail "no CA injected into $name-$kind-webhook-configuration"
	done
	timings+=("$(printf '%-52s %s' "seed 001: manager Available, CA injected" "$(fmt_duration $((SECONDS - t)))")")
	# As the seed: kubectl get pod --all-namespaces -l control-plane=controller-manager
	k get pod --all-namespaces -l control-plane=controller-manager --no-headers >"$work/pods.txt"
	grep -Eq "^$ns +$name-controller-manager-[a-z0-9-]+ +1/1 +Running " "$work/pods.txt" ||
		fail "no Running RedisCluster manager pod: $(cat "$work/pods.txt")"
	ok "seed 001: the RedisCluster manager pod Running ($(grep "^$ns " "$work/pods.txt" | awk '{ print $2, $3, $4 }'))"

	if k apply -f "$sample" >"$work/refused.log" 2>&1; then
		fail "the seed's sample with an empty addr was admitted"
	fi
	grep -q 'spec.addr: Invalid value: "": invalid ip port, ip:port' "$work/refused.log" ||
		fail "the seed's sample was not refused for its addr: $(cat "$work/refused.log")"
	ok "seed 001: the sample with an empty addr refused in the cluster: $(grep -o 'admission webhook.*' "$work/refused.log" | head -c 200)"
	sed -i 's/addr: ""/addr: "10.0.0.1:6379"/' "$sample"
	k apply -f "$sample" >"$work/apply.log" 2>&1 || fail "the seed's sample with an addr was refused: $(cat "$work/apply.log")"
	[[ $(k get redisclusters rediscluster-sample -o 'jsonpath={.spec.size}') == 6 ]] ||
		fail "the size of 3 was not raised to 6: $(k get redisclusters rediscluster-sample -o yaml)"
	ok "seed 001: with an addr the sample is admitted, and its size of 3 is stored as 6 (the defaulting webhook)"
	k delete -f "$sample" >/dev/null
	cd "$work"
}

# cluster_helm: the helm plugin's chart of the RedisCluster project (its image already loaded):
# make undeploy, opbuilder edit --plugins=helm/v2-alpha, make helm-deploy (helm upgrade --install
# --wait, helm built by go-tool.sh as the helm stage does); the manager pod Ready under the
# chart's ServiceAccount, the chart's Certificate Ready and its CA injected, the webhooks answer;
# make helm-uninstall.
cluster_helm() {
	local name=redisclusterv2 img=bytewang123/rediscluster:v0.0.6 proj="$work/redisclusterV2" helm t
	ns=$name-system
	cd "$proj"
	t=$SECONDS
	helm=$("$here/go-tool.sh" helm) || fail "helm $(pin e2e.helm) could not be built"
	timings+=("$(printf '%-52s %s' "helm: go-tool.sh helm (cached by version)" "$(fmt_duration $((SECONDS - t)))")")
	timed "helm: make undeploy (the kustomize install of the seed's project)" make undeploy
	gone() { [[ -z $(k get namespace "$ns" -o name --ignore-not-found) ]]; }
	wait_for 180 "namespace $ns to go" gone || fail "make undeploy left namespace $ns"
	timed "helm: opbuilder edit --plugins=helm/v2-alpha" "$opbuilder" edit --plugins=helm/v2-alpha
	timed "helm: make helm-deploy IMG=$img (helm upgrade --install --wait)" make helm-deploy IMG="$img" HELM="$helm"
	local pod
	pod=$(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].metadata.name}')
	[[ $(k -n "$ns" get pod "$pod" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.containers[0].image} {.spec.serviceAccountName}') == "True $img $name-controller-manager" ]] ||
		fail "the chart's manager pod $pod is not Ready with $img under $name-controller-manager: $(k -n "$ns" get pod "$pod" -o wide)"
	ok "helm install of the chart: manager pod $pod Ready ($img, ServiceAccount $name-controller-manager)"
	local cert
	cert=$(k -n "$ns" get certificates -o 'jsonpath={.items[?(@.spec.secretName=="webhook-server-cert")].metadata.name}')
	[[ -n $cert && $(k -n "$ns" get certificate "$cert" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
		fail "the chart's webhook Certificate is not Ready: $(k -n "$ns" get certificates 2>&1)"
	wait_for 120 "the CA in the chart's validating webhook configuration" ca_injected validatingwebhookconfiguration \
		"$name-validating-webhook-configuration" '{.webhooks[*].clientConfig.caBundle}' ||
		fail "no CA injected into the chart's validating webhook configuration"
	if k apply -f - >"$work/refused.log" 2>&1 <<EOF; then
apiVersion: bytewang123-redis.bytewang123.io/v1
kind: RedisCluster
metadata: {name: from-chart, namespace: default}
spec: {addr: "", size: 1}
EOF
		fail "with the chart's webhooks a RedisCluster with an empty addr was admitted"
	fi
	grep -q 'spec.addr: Invalid value: ""' "$work/refused.log" ||
		fail "the chart's validating webhook did not refuse the empty addr: $(cat "$work/refused.log")"
	ok "the chart's Certificate $cert Ready, its CA injected, its validating webhook refuses an empty addr"
	timed "helm: make helm-uninstall" make helm-uninstall HELM="$helm"
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
