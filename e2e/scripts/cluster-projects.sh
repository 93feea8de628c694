# shellcheck shell=bash
# The projects of stage `cluster` after the first (go/v4, in cluster-e2e.sh), each a function that
# cluster-e2e.sh calls on the same node, in this order:
#
#   cluster_test_e2e     the go/v4 project's own `make test-e2e`, with e2e/node/bin/kind for kind;
#   cluster_rust         a Rust-layout project (issue 31) and the Rust layout's in-cluster checks
#                        of issue 32: image from its own Dockerfile, make deploy, RBAC from its
#                        Rust source, cert-manager, webhooks (a core type's namespace selector
#                        with the labels kustomize really puts on the namespace), /metrics over
#                        HTTPS, logs without escapes and in JSON, leader election and takeover;
#                        its deploy-image Memcached's real memcached operand (issue 33);
#   cluster_rust_helm    the helm plugin's chart of that Rust project: helm install, the manager
#                        pod Ready, its webhook; webhook.enabled=false (--webhook-port=-1) Ready;
#   cluster_redis_seed   seed 001's RedisCluster story, as its author ran it;
#   cluster_helm         the helm plugin's chart of the RedisCluster project: helm install, the
#                        manager pod Ready;
#   cluster_deploy_image the deploy-image plugin's Memcached with a real memcached operand
#                        (node_debian_image, node-lib.sh): its pod Running as the flags say
#                        (check_memcached_operand, shared with cluster_rust);
#   cluster_tutorial     docs/tutorial.md's CronJob operator (tutorial.sh --project) deployed
#                        from its image: its Jobs run to completion on the node's busybox;
#   cluster_selfcerts    webhooks without cert-manager (certs.opbuilder.io/v1-alpha): deploy,
#                        two replicas, the Secret deleted and the authority rotated, /metrics;
#                        then the project's helm chart;
#   cluster_rust_selfcerts  the same for a Rust-layout project (src/webhook_certs.rs), without
#                        the chart.
#
# Sourced by cluster-e2e.sh, whose helpers and variables they use (k, ok, fail, timed, ca_injected,
# timings; $work, $node, $here, $opbuilder); the helpers below (scrape_metrics, deploy_available_in,
# running_managers) serve the go/v4 part too. Each part sets the global ns to its project's
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

# cluster_rust: rust.opbuilder.io/v1-beta, a Shelf (shop/v1) with a controller, its defaulting and
# validating webhooks, and a defaulting webhook on the core type ConfigMap; the scaffold as it is
# (its TODO examples: an absent foo defaulted to "default", an empty foo refused); and a Memcached
# (cache/v1alpha1) of deploy-image/v1-alpha with the flags of cluster_deploy_image's go/v4 one,
# made at once so that the one Rust image build covers its controller, its operand the real
# memcached (memcached_operand) checked by check_memcached_operand as the go/v4 one.
cluster_rust() {
	local name=library
	local sa=$name-controller-manager deploy=$name-controller-manager img=example.com/$name:v0.0.1
	local proj="$work/$name" pod out lease logs t kind
	ns=$name-system
	memcached_operand
	mkdir -p "$proj"
	cd "$proj"
	timed "rust: init, create api ×2, create webhook ×2" bash -c "
		set -e
		'$opbuilder' init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name $name
		'$opbuilder' create api --group shop --version v1 --kind Shelf --resource --controller
		'$opbuilder' create webhook --group shop --version v1 --kind Shelf --defaulting --programmatic-validation
		'$opbuilder' create webhook --group core --version v1 --kind ConfigMap --defaulting
		'$opbuilder' create api --group cache --version v1alpha1 --kind Memcached --image=$memcached_img \
			$memcached_flags --plugins=deploy-image/v1-alpha
	"
	"$here/seed-tools.sh" "$proj" >>"$work/stage.log" 2>&1 || fail "seed-tools.sh failed"
	# The host's cargo builds only the manifests generator (make manifests, before make deploy),
	# in the build directory the other Rust stages share (use_rust_target, lib.sh: exported for
	# the rest of the stage, whose other projects are go/v4).
	use_rust_target
	timed "rust: make manifests (CRD and RBAC from the Rust source)" make manifests
	# Cold, the release build of the dependencies for musl: about 6 minutes on a quiet machine, 23
	# under a load of 6 to 9 (docs/testing.md); then BuildKit's cache mounts (in the node's cache,
	# kept between runs) make it seconds.
	step_limit=3600 image_build_load "rust: " "$img"
	deploy_restricted "rust: " "$ns" "$img"
	manager_available_with_ca "rust: " "$ns" "$deploy" "$name"
	pod=$(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].metadata.name}')
	[[ $(k -n "$ns" get pod "$pod" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.serviceAccountName}') == "True $sa" ]] ||
		fail "the Rust manager's pod $pod is not Ready under $sa"
	ok "Rust manager pod $pod Ready under the ServiceAccount $sa (restricted Pod Security Standard)"

	local as_sa=(--as="system:serviceaccount:$ns:$sa")
	# A subresource by --subresource: `kubectl auth can-i VERB TYPE/NAME` reads the part after
	# the slash as an object's name.
	[[ $(k auth can-i "${as_sa[@]}" patch shelves.shop.example.com --subresource=status -n default) == yes ]] ||
		fail "$sa may not patch shelves/status"
	[[ $(k auth can-i "${as_sa[@]}" update shelves.shop.example.com --subresource=finalizers -n default) == yes ]] ||
		fail "$sa may not update shelves/finalizers (owner references that block a Shelf's deletion)"
	[[ $(k auth can-i "${as_sa[@]}" patch shelves.shop.example.com -n default 2>/dev/null || true) == no ]] ||
		fail "$sa may patch shelves: the controller has no finalizer to add"
	[[ $(k auth can-i "${as_sa[@]}" list secrets --all-namespaces 2>/dev/null || true) == no ]] ||
		fail "$sa may list every secret: its RBAC is more than make manifests wrote"
	[[ $(k auth can-i "${as_sa[@]}" create deployments -n default) == yes ]] ||
		fail "$sa may not create deployments (the Memcached controller's operand)"
	[[ $(k auth can-i "${as_sa[@]}" delete deployments -n default 2>/dev/null || true) == no ]] ||
		fail "$sa may delete deployments: its RBAC is more than make manifests wrote"
	ok "$sa has the RBAC generated from the Rust source (patch shelves/status, update shelves/finalizers, create deployments) and no more (no patching shelves, no secrets, no deleting deployments)"

	local cert
	for cert in serving-cert metrics-certs; do
		[[ $(k -n "$ns" get certificate "$name-$cert" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
			fail "cert-manager's Certificate $name-$cert is not Ready"
	done
	local ca
	ca=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.ca\.crt}')
	for kind in mutating validating; do
		[[ $(k get "${kind}webhookconfiguration" "$name-$kind-webhook-configuration" \
			-o 'jsonpath={.webhooks[0].clientConfig.caBundle}') == "$ca" ]] ||
			fail "the CA of the $kind webhook configuration is not the certificate's"
	done
	ok "cert-manager issued $name-serving-cert and $name-metrics-certs; the CA is injected into both webhook configurations"

	# At once after the rollout: /readyz waits for the webhook listener.
	k apply -k config/samples >"$work/apply.log" 2>&1 ||
		fail "the Rust project's sample was refused right after the rollout: $(cat "$work/apply.log")"
	k apply -f - >"$work/apply.log" 2>&1 <<EOF || fail "a Shelf without foo was refused: $(cat "$work/apply.log")"
apiVersion: shop.example.com/v1
kind: Shelf
metadata: {name: defaulted, namespace: default}
spec: {}
EOF
	[[ $(k get shelves defaulted -o 'jsonpath={.spec.foo}') == default ]] ||
		fail "the Shelf was not defaulted: $(k get shelves defaulted -o yaml)"
	ok "config/samples admitted; a Shelf without foo defaulted (spec.foo = default) by the Rust webhook"
	if k apply -f - >"$work/refused.log" 2>&1 <<EOF; then
apiVersion: shop.example.com/v1
kind: Shelf
metadata: {name: empty, namespace: default}
spec: {foo: ""}
EOF
		fail "a Shelf with an empty foo was admitted"
	fi
	grep -q 'spec.foo: Invalid value: "": must not be empty' "$work/refused.log" ||
		fail "the refusal does not carry the webhook's message: $(cat "$work/refused.log")"
	ok "a Shelf with an empty foo refused in the cluster: $(head -n 1 "$work/refused.log" | head -c 160)"
	shelf_reconciled() {
		[[ $(k get shelves "$1" -o 'jsonpath={.status.conditions[?(@.type=="Available")].reason}/{.metadata.finalizers}') == 'Reconciled/' ]]
	}
	wait_for 60 "the Rust controller's condition" shelf_reconciled shelf-sample ||
		fail "the Rust controller did not reconcile shelf-sample: $(k get shelves shelf-sample -o yaml)"
	wait_for 60 "the Rust controller's condition" shelf_reconciled defaulted || fail "the Rust controller did not reconcile defaulted"
	ok "the Rust controller set Available=Reconciled on both Shelves, and no finalizer"

	# The ConfigMap webhook leaves kube-system and the manager's namespace alone: the latter by the
	# app.kubernetes.io/name label that config/manager's Namespace carries through kustomize.
	[[ $(k get namespace "$ns" -o 'jsonpath={.metadata.labels.app\.kubernetes\.io/name}') == "$name" ]] ||
		fail "namespace $ns lacks the label app.kubernetes.io/name=$name: $(k get namespace "$ns" --show-labels)"
	local where labelled
	for where in default "$ns" kube-system; do
		k -n "$where" create configmap probe-defaulting --from-literal=a=b >/dev/null ||
			fail "could not create a ConfigMap in $where"
		labelled=$(k -n "$where" get configmap probe-defaulting -o "jsonpath={.metadata.labels.$name/defaulted}")
		k -n "$where" delete configmap probe-defaulting >/dev/null
		case $where in
		default) [[ $labelled == true ]] || fail "a ConfigMap in default was not defaulted by the ConfigMap webhook" ;;
		*) [[ -z $labelled ]] || fail "a ConfigMap in $where was defaulted: the namespace selector let it through" ;;
		esac
	done
	ok "the ConfigMap webhook defaulted a ConfigMap in default and left $ns (its label from kustomize) and kube-system alone"

	# The deploy-image controller's operand, as the go/v4 one's (cluster_deploy_image).
	check_memcached_operand "rust deploy-image: " library-operand

	# Metrics over HTTPS from curl pods (the Rust manager's own self-signed certificate).
	local svc=$name-controller-manager-metrics-service
	t=$SECONDS
	k create clusterrolebinding "$name-metrics-binding" --clusterrole="$name-metrics-reader" \
		--serviceaccount="$ns:$sa" >/dev/null
	out=$(scrape_metrics "$ns" "$svc" rust-metrics "$(k -n "$ns" create token "$sa")")
	grep -q '< HTTP/1.1 200 OK' <<<"$out" || fail "the authorised scrape of the Rust manager did not get 200: $(tail -n 20 <<<"$out")"
	grep -Eq '^controller_runtime_reconcile_total\{controller="shop-shelf",result="[a-z_]+"\} [1-9]' <<<"$out" ||
		fail "the Rust manager's metrics lack controller_runtime_reconcile_total for shop-shelf: $(grep reconcile_total <<<"$out")"
	ok "Rust /metrics over HTTPS with a token bound to $name-metrics-reader: 200 and the reconcile counter"
	out=$(scrape_metrics "$ns" "$svc" rust-forbidden "$(k -n "$ns" create token default)")
	grep -q '< HTTP/1.1 403 Forbidden' <<<"$out" || fail "the Rust manager gave a token without the binding no 403: $(tail -n 20 <<<"$out")"
	out=$(scrape_metrics "$ns" "$svc" rust-anonymous "")
	grep -q '< HTTP/1.1 401 Unauthorized' <<<"$out" || fail "the Rust manager gave no 401 without a token: $(tail -n 20 <<<"$out")"
	ok "Rust /metrics refuses a token without metrics-reader (403) and a request without a token (401)"
	k -n "$ns" delete pod rust-metrics rust-forbidden rust-anonymous --wait=false >/dev/null
	k delete clusterrolebinding "$name-metrics-binding" >/dev/null
	timings+=("$(printf '%-52s %s' "rust: metrics scraped by three curl pods" "$(fmt_duration $((SECONDS - t)))")")

	logs=$(k -n "$ns" logs "$pod")
	[[ -n $logs ]] || fail "the Rust manager logged nothing"
	! grep -q $'\e' <<<"$logs" || fail "kubectl logs of the Rust manager holds escape sequences: $(grep -m1 $'\e' <<<"$logs" | cat -v)"
	ok "kubectl logs of the Rust manager: $(wc -l <<<"$logs") plain lines, no escape sequence"

	# Two replicas logging JSON (--zap-encoder=json): one leader; delete it, the other takes over
	# and reconciles.
	t=$SECONDS
	lease=$(sed -n 's/^const LEADER_ELECTION_ID: &str = "\(.*\)";$/\1/p' src/main.rs)
	[[ -n $lease ]] || fail "no LEADER_ELECTION_ID in src/main.rs"
	k -n "$ns" patch deployment "$deploy" --type=json -p '[
		{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "--zap-encoder=json"},
		{"op": "replace", "path": "/spec/replicas", "value": 2}]' >/dev/null
	k -n "$ns" rollout status deployment "$deploy" --timeout=180s >>"$work/stage.log" 2>&1 ||
		fail "the Rust manager's two replicas with --zap-encoder=json did not roll out"
	wait_for 60 "a leader among the JSON-logging replicas" rust_one_leader "$lease" ||
		fail "the Rust replicas have no single leader: $(cat "$work/leaders.txt")"
	local leader standby
	read -r leader standby _ <"$work/leaders.txt"
	ok "two Rust replicas logging JSON (every line of both), one leader: $leader holds the Lease $lease"
	# The leader's pod deleted: the Lease passes to another pod, the standby or the Deployment's
	# replacement, whichever asks first once the leader has released it on SIGTERM. Taken sooner
	# than the lease duration after the delete: released, not expired.
	local t_del holder new duration took who
	t_del=$(date +%s.%N)
	k -n "$ns" delete pod "$leader" --wait=false >/dev/null
	took_over() {
		holder=$(k -n "$ns" get lease "$lease" -o 'jsonpath={.spec.holderIdentity}')
		[[ -n $holder && $holder != "${leader}_"* ]] || return 1
		new=${holder%_*}
		# The log is read whole before it is searched (a `| grep -q` under pipefail fails when grep
		# leaves before kubectl has written the rest: SIGPIPE).
		grep -q '"message":"became the leader"' <<<"$(k -n "$ns" logs "$new")"
	}
	wait_for 60 "another pod to take the Lease over" took_over ||
		fail "after the leader $leader was deleted, no other pod took the Lease: $(k -n "$ns" get lease "$lease" -o yaml)"
	duration=$(k -n "$ns" get lease "$lease" -o 'jsonpath={.spec.leaseDurationSeconds}')
	took=$(python3 -c 'import datetime, sys
a = datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")).timestamp()
print(f"{a - float(sys.argv[2]):.1f}")' "$(k -n "$ns" get lease "$lease" -o 'jsonpath={.spec.acquireTime}')" "$t_del")
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$took" "$duration" ||
		fail "$new took the Lease ${took}s after the leader's pod was deleted, not sooner than its duration (${duration}s): the leader did not release it on SIGTERM"
	who="the Deployment's new pod $new"
	[[ $new != "$standby" ]] || who="the standby $new"
	k apply -f - >/dev/null <<EOF || fail "a Shelf was refused after the takeover"
apiVersion: shop.example.com/v1
kind: Shelf
metadata: {name: after-takeover, namespace: default}
spec: {foo: bar}
EOF
	wait_for 60 "the new leader to reconcile" shelf_reconciled after-takeover ||
		fail "the new leader $new did not reconcile a new Shelf"
	ok "the leader's pod deleted: $who took the Lease ${took}s later (released on SIGTERM; the lease lasts ${duration}s) and reconciled a new Shelf"
	timings+=("$(printf '%-52s %s' "rust: JSON logs, two replicas, takeover" "$(fmt_duration $((SECONDS - t)))")")

	# config/samples' Memcached first, while the manager runs its finalizer (deploy-image's, as
	# go/v4's); the Shelves, which have none, stay for `make undeploy`.
	k delete memcacheds --all -n default --timeout=60s >/dev/null || fail "the Rust project's Memcacheds were not deleted"
	local shelves
	shelves=$(k get shelves -n default -o name | wc -l)
	((shelves >= 3)) || fail "fewer Shelves than made before make undeploy: $shelves"
	t=$SECONDS
	timed "rust: make undeploy (with $shelves Shelves present)" make undeploy
	undeployed() {
		[[ -z $(k get namespace "$ns" -o name --ignore-not-found) && -z $(k get crd shelves.shop.example.com -o name --ignore-not-found) ]]
	}
	wait_for 60 "the Rust project to be undeployed" undeployed ||
		fail "make undeploy left the Rust project's namespace or CRD Terminating: $(k get namespace "$ns" crd/shelves.shop.example.com -o name 2>&1)"
	ok "make undeploy with $shelves Shelves present removed the Rust project, nothing left Terminating, in $(fmt_duration $((SECONDS - t)))"
	cd "$work"
}

# cluster_rust_helm: the helm plugin's chart of cluster_rust's project (undeployed, its image
# loaded: no second image build): opbuilder edit --plugins=helm/v2-alpha (make build-installer,
# the manifests from the Rust source), make helm-deploy; the Rust manager pod Ready under the
# chart's ServiceAccount, a Shelf defaulted by its webhook through the chart's Service and
# certificate; helm upgrade with webhook.enabled=false (the chart passes --webhook-port=-1): the
# manager runs Ready without its webhook server; make helm-uninstall.
cluster_rust_helm() {
	local name=library img=example.com/library:v0.0.1 proj="$work/library" helm t pod
	ns=$name-system
	cd "$proj"
	t=$SECONDS
	helm=$("$here/go-tool.sh" helm) || fail "helm $(pin e2e.helm) could not be built"
	timings+=("$(printf '%-52s %s' "rust helm: go-tool.sh helm (cached by version)" "$(fmt_duration $((SECONDS - t)))")")
	timed "rust helm: opbuilder edit --plugins=helm/v2-alpha (make build-installer)" "$opbuilder" edit --plugins=helm/v2-alpha
	grep -q 'The Rust manager (src/main.rs) also takes' dist/chart/values.yaml ||
		fail "the Rust project's values.yaml does not name the Rust manager's flags"
	timed "rust helm: make helm-deploy IMG=$img (helm upgrade --install --wait)" make helm-deploy IMG="$img" HELM="$helm"
	pod=$(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].metadata.name}')
	[[ $(k -n "$ns" get pod "$pod" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.containers[0].image} {.spec.serviceAccountName}') == "True $img $name-controller-manager" ]] ||
		fail "the Rust chart's manager pod $pod is not Ready with $img under $name-controller-manager: $(k -n "$ns" get pod "$pod" -o wide)"
	ok "helm install of the Rust project's chart: manager pod $pod Ready ($img, ServiceAccount $name-controller-manager)"
	wait_for 120 "the CA in the chart's mutating webhook configuration" ca_injected mutatingwebhookconfiguration \
		"$name-mutating-webhook-configuration" '{.webhooks[*].clientConfig.caBundle}' ||
		fail "no CA injected into the Rust chart's mutating webhook configuration"
	printf '%s\n' 'apiVersion: shop.example.com/v1' 'kind: Shelf' 'metadata: {name: from-chart, namespace: default}' 'spec: {}' \
		>"$work/shelf-chart.yaml"
	apply_when_reachable "$work/shelf-chart.yaml" "$work/apply.log" || fail "a Shelf was refused with the Rust chart: $(cat "$work/apply.log")"
	[[ $(k get shelves from-chart -o 'jsonpath={.spec.foo}') == default ]] ||
		fail "the Rust chart's webhook did not default the Shelf: $(k get shelves from-chart -o yaml)"
	k delete shelves from-chart >/dev/null
	ok "the Rust chart's webhook (its Service, certificate and CA) defaulted a Shelf"
	timed "rust helm: helm upgrade --set webhook.enabled=false --wait" "$helm" upgrade "$name" dist/chart \
		--namespace "$ns" --reuse-values --set webhook.enabled=false --wait --timeout 5m
	pod=$(running_managers | head -n 1)
	[[ -n $pod && $(k -n "$ns" get pod "$pod" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
		fail "with webhook.enabled=false the Rust manager is not Ready: $(k -n "$ns" get pods -o wide)"
	k -n "$ns" get pod "$pod" -o 'jsonpath={.spec.containers[0].args}' | grep -q -- '--webhook-port=-1' ||
		fail "the chart did not pass --webhook-port=-1: $(k -n "$ns" get pod "$pod" -o 'jsonpath={.spec.containers[0].args}')"
	ok "webhook.enabled=false: the Rust manager $pod Ready with --webhook-port=-1 (no webhook server)"
	timed "rust helm: make helm-uninstall" make helm-uninstall HELM="$helm"
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
	# Test infrastructure, as for the first project: the Dockerfile's Go cache mounts from the host.
	timed "seed 001: seed the Dockerfile's Go cache mounts from the host" "$here/seed-go-build-cache.sh" "$proj"
	image_build_load "seed 001: " "$img"
	timed "seed 001: make deploy IMG=$img" make deploy IMG="$img"
	manager_available_with_ca "seed 001: " "$ns" "$name-controller-manager" "$name"
	# As the seed: kubectl get pod --all-namespaces -l control-plane=controller-manager
	k get pod --all-namespaces -l control-plane=controller-manager --no-headers >"$work/pods.txt"
	grep -Eq "^$ns +$name-controller-manager-[a-z0-9-]+ +1/1 +Running " "$work/pods.txt" ||
		fail "no Running RedisCluster manager pod: $(cat "$work/pods.txt")"
	ok "seed 001: the RedisCluster manager pod Running ($(grep "^$ns " "$work/pods.txt" | awk '{ print $2, $3, $4 }'))"

	if apply_when_reachable "$sample" "$work/refused.log"; then
		fail "the seed's sample with an empty addr was admitted"
	fi
	grep -q 'spec.addr: Invalid value: "": invalid ip port, ip:port' "$work/refused.log" ||
		fail "the seed's sample was not refused for its addr: $(cat "$work/refused.log")"
	ok "seed 001: the sample with an empty addr refused in the cluster: $(head -n 1 "$work/refused.log" | head -c 200)"
	sed -i 's/addr: ""/addr: "10.0.0.1:6379"/' "$sample"
	apply_when_reachable "$sample" "$work/apply.log" || fail "the seed's sample with an addr was refused: $(cat "$work/apply.log")"
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
	cat >"$work/from-chart.yaml" <<EOF
apiVersion: bytewang123-redis.bytewang123.io/v1
kind: RedisCluster
metadata: {name: from-chart, namespace: default}
spec: {addr: "", size: 1}
EOF
	if apply_when_reachable "$work/from-chart.yaml" "$work/refused.log"; then
		fail "with the chart's webhooks a RedisCluster with an empty addr was admitted"
	fi
	grep -q 'spec.addr: Invalid value: ""' "$work/refused.log" ||
		fail "the chart's validating webhook did not refuse the empty addr: $(cat "$work/refused.log")"
	ok "the chart's Certificate $cert Ready, its CA injected, its validating webhook refuses an empty addr"
	timed "helm: make helm-uninstall" make helm-uninstall HELM="$helm"
	cd "$work"
}

# rust_one_leader LEASE: the manager pods' JSON logs (every line must parse) name exactly one pod
# that became the leader, and the Lease names it; writes "LEADER STANDBY" to $work/leaders.txt.
rust_one_leader() {
	local p leaders=() others=() holder
	for p in $(running_managers); do
		k -n "$ns" logs "$p" >"$work/$p.log" || return 1
		python3 - "$work/$p.log" >"$work/leaders.txt" 2>&1 <<'EOF' || return 1
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
if not lines:
    sys.exit(f"{sys.argv[1]}: no log yet")
for l in lines:
    try:
        json.loads(l)
    except ValueError:
        sys.exit(f"{sys.argv[1]}: a line that is not JSON (--zap-encoder=json): {l!r}")
EOF
		if grep -q '"message":"became the leader"' "$work/$p.log"; then leaders+=("$p"); else others+=("$p"); fi
	done
	holder=$(k -n "$ns" get lease "$1" -o 'jsonpath={.spec.holderIdentity}')
	echo "${leaders[*]:-none} ${others[*]:-none} (Lease holder $holder)" >"$work/leaders.txt"
	((${#leaders[@]} == 1 && ${#others[@]} == 1)) && [[ $holder == "${leaders[0]}_"* ]]
}

# running_managers: the names of the manager pods in $ns that run and are not being deleted.
running_managers() {
	k -n "$ns" get pods -l control-plane=controller-manager -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"):
        print(p["metadata"]["name"])'
}

# apply_when_reachable FILE LOG: `kubectl apply -f FILE`, its output in LOG. While the API server
# cannot connect to a webhook's Service yet ("connect: connection refused": kube-proxy has not
# programmed the new Service's endpoint; seen 11 s after the manager served its webhooks, under
# a load of 9), tried again for up to 30 s; any other outcome, admitted or refused, at once.
# For the projects after the first, whose at-once check is the go/v4 project's (cluster-e2e.sh).
apply_when_reachable() {
	local end=$((SECONDS + 30))
	while true; do
		k apply -f "$1" >"$2" 2>&1 && return 0
		grep -q 'failed to call webhook.*connect: connection refused' "$2" && ((SECONDS < end)) || return 1
		sleep 2
	done
}

# deploy_available_in NS DEPLOYMENT N: the Deployment has N available replicas.
deploy_available_in() {
	[[ $(k -n "$1" get deployment "$2" -o 'jsonpath={.status.availableReplicas}') == "$3" ]]
}

# image_build_load LABEL IMG: the project in the current directory builds its image with its own
# `make docker-build IMG=IMG` (its Dockerfile as generated; the step may run step_limit seconds,
# see timed), the image is checked and its size said, and `cluster.sh load` puts it into the
# node. LABEL prefixes the steps' names ("rust: ", or "" for the first project).
image_build_load() {
	local label=$1 img=$2
	timed "${label}make docker-build IMG=$img" make docker-build IMG="$img"
	docker image inspect "$img" >/dev/null || fail "make docker-build made no image $img"
	ok "${label}image $img built from the generated Dockerfile ($(docker image inspect -f '{{ .Size }}' "$img" | awk '{ printf "%.1f MB", $1 / 1e6 }'))"
	timed "${label}cluster.sh load $img" "$here/cluster.sh" load "$node" "$img"
}

# deploy_restricted LABEL NS IMG: as the generated test/e2e, the namespace NS enforces the
# restricted Pod Security Standard before `make deploy IMG=IMG` of the current directory.
deploy_restricted() {
	k create namespace "$2" >/dev/null
	k label namespace "$2" pod-security.kubernetes.io/enforce=restricted >/dev/null
	timed "${1}make deploy IMG=$3" make deploy IMG="$3"
}

# manager_available_with_ca LABEL NS DEPLOYMENT NAME: after `make deploy`, the manager's
# Deployment available (300 s) and a CA injected into NAME-mutating-webhook-configuration and
# NAME-validating-webhook-configuration (120 s each); the time it took goes to the timings.
manager_available_with_ca() {
	local label=$1 ns=$2 deploy=$3 name=$4 t=$SECONDS kind cfg
	wait_for 300 "the manager's Deployment $deploy to be available" deploy_available_in "$ns" "$deploy" 1 ||
		fail "the manager $deploy did not become available: $(k -n "$ns" get pods -o wide 2>&1)"
	for kind in mutating validating; do
		cfg=$name-$kind-webhook-configuration
		wait_for 120 "the CA in $cfg" ca_injected "${kind}webhookconfiguration" "$cfg" \
			'{.webhooks[*].clientConfig.caBundle}' || fail "no CA injected into $cfg"
	done
	timings+=("$(printf '%-52s %s' "${label}manager Available, CA injected" "$(fmt_duration $((SECONDS - t)))")")
}

# scrape_metrics NS SERVICE POD TOKEN: GET https://SERVICE.NS.svc.cluster.local:8443/metrics from a
# pod POD of curlimages/curl:latest, as the generated test/e2e runs it (pull policy Always: the
# local registry serves it; the restricted security context), with TOKEN as the bearer token
# unless empty, a refused connection retried as test/e2e does (the node's proxy may not have the
# endpoint yet); prints the pod's output (curl -v).
scrape_metrics() {
	local sns=$1 svc=$2 pod=$3 token=$4 auth=""
	[[ -z $token ]] || auth="-H 'Authorization: Bearer $token'"
	k -n "$sns" run "$pod" --restart=Never --image=curlimages/curl:latest --overrides "$(
		python3 -c 'import json, sys; print(json.dumps({"spec": {"containers": [{"name": "curl",
			"image": "curlimages/curl:latest", "command": ["/bin/sh", "-c"], "args": [sys.argv[1]],
			"securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
			"runAsNonRoot": True, "runAsUser": 1000, "capabilities": {"drop": ["ALL"]},
			"seccompProfile": {"type": "RuntimeDefault"}}}]}}))' \
			"curl -v -k --retry 10 --retry-delay 3 --retry-connrefused $auth https://$svc.$sns.svc.cluster.local:8443/metrics"
	)" >/dev/null
	pod_done() { [[ $(k -n "$1" get pod "$2" -o 'jsonpath={.status.phase}') =~ ^(Succeeded|Failed)$ ]]; }
	wait_for 180 "pod $pod to complete" pod_done "$sns" "$pod" ||
		fail "pod $pod did not complete: $(k -n "$sns" describe pod "$pod" | tail -n 15)"
	k -n "$sns" logs "$pod"
}

# The deploy-image flags both deploy-image parts give `create api` (those of the deploy-image
# scenario, e2e/testdata/deployimage), the operand's port and user, and its command in
# --image-container-command's form (comma-separated).
memcached_command=memcached,--memory-limit=64,-o,modern,-v memcached_port=11211 memcached_user=1001
memcached_flags="--image-container-command=$memcached_command --image-container-port=$memcached_port --run-as-user=$memcached_user"

# memcached_operand: sets memcached_img to the real memcached of Debian's package
# (node_debian_image: memcached:VERSION), made and pushed into the registry the node pulls
# docker.io's images from (the operand's pull policy is IfNotPresent; only its own layers move, not
# the Debian base's that curlimages/curl brought) once in the stage: the first deploy-image part
# (the Rust project's, at its creation) makes it, the others reuse it. Run it in the stage's shell
# (not in $(...)).
memcached_operand() {
	[[ -z ${memcached_img:-} ]] || return 0
	local t=$SECONDS
	memcached_img=$(node_debian_image memcached) || fail "the memcached image could not be made"
	timings+=("$(printf '%-52s %s' "image $memcached_img (Debian's package)" "$(fmt_duration $((SECONDS - t)))")")
	timed "cluster.sh push $memcached_img" "$here/cluster.sh" push "$node" "$memcached_img"
}

# check_memcached_operand LABEL NS: the operand of a deploy-image project whose manager runs
# (the current directory; its Memcached of cache/v1alpha1 made with $memcached_flags and
# --image=$memcached_img) run for real: config/samples' Memcached applied in NS, a namespace made
# here that enforces the restricted Pod Security Standard; the Memcached Available=True with the
# manager's finalizer (<group>/finalizer); the Deployment it controls, its pod Ready with the
# image, command, port and user the flags gave (the pod spec, and /proc/1 in the container),
# memcached answering `version` on the pod's address; deleted, its finalizer runs (the `Deleting`
# event regarding it) and the Deployment goes with it; NS deleted. LABEL prefixes the messages
# ("deploy-image: ", "rust deploy-image: ").
check_memcached_operand() {
	local label=$1 on=$2 cr=memcached-sample t=$SECONDS pod out ip uid finalizer
	local port=$memcached_port user=$memcached_user command=${memcached_command//,/ }
	k create namespace "$on" >/dev/null
	k label namespace "$on" pod-security.kubernetes.io/enforce=restricted >/dev/null
	k -n "$on" apply -f config/samples/cache_v1alpha1_memcached.yaml >/dev/null || fail "${label}the Memcached sample was refused"
	memcached_available() {
		[[ $(k -n "$on" get memcached "$cr" -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}') == True ]]
	}
	wait_for 180 "the Memcached to be Available" memcached_available ||
		fail "${label}$cr is not Available: $(k -n "$on" get memcached "$cr" -o 'jsonpath={.status.conditions}'; k -n "$on" get deploy,pods -o wide; k -n "$on" get events)"
	finalizer=$(k -n "$on" get memcached "$cr" -o 'jsonpath={.apiVersion}')
	finalizer=${finalizer%/*}/finalizer
	[[ $(k -n "$on" get memcached "$cr" -o 'jsonpath={.metadata.finalizers}') == "[\"$finalizer\"]" ]] ||
		fail "${label}$cr does not carry the finalizer $finalizer: $(k -n "$on" get memcached "$cr" -o 'jsonpath={.metadata.finalizers}')"
	k -n "$on" wait --for=condition=Ready pod -l app.kubernetes.io/managed-by=MemcachedController --timeout=120s >>"$work/stage.log" 2>&1 ||
		fail "${label}the operand's pod is not Ready: $(k -n "$on" get pods -o wide; k -n "$on" get events | tail -n 10)"
	pod=$(k -n "$on" get pods -l app.kubernetes.io/managed-by=MemcachedController -o 'jsonpath={.items[0].metadata.name}')
	[[ $(k -n "$on" get deployment "$cr" -o 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].name}') == "$cr" ]] ||
		fail "${label}the Deployment $cr is not controlled by the Memcached $cr"
	out=$(k -n "$on" get pod "$pod" -o 'jsonpath={.status.phase} {.spec.containers[0].image} {.spec.containers[0].command} {.spec.containers[0].ports[0].containerPort} {.spec.containers[0].securityContext.runAsUser}')
	[[ $out == "Running $memcached_img [\"${memcached_command//,/\",\"}\"] $port $user" ]] ||
		fail "${label}the operand's pod is not as the flags say: $out"
	# In the container: the process the flags asked for, as the user they named.
	out=$(k -n "$on" exec "$pod" -- cat /proc/1/cmdline | tr '\0' ' ')
	[[ $out == "$command " ]] || fail "${label}the operand's process is not the flags' command: '$out'"
	out=$(k -n "$on" exec "$pod" -- awk '$1 == "Uid:" { print $2 }' /proc/1/status)
	[[ $out == "$user" ]] || fail "${label}the operand runs as uid $out, not $user"
	# memcached itself answers on the pod's address (the host reaches the pod network).
	ip=$(k -n "$on" get pod "$pod" -o 'jsonpath={.status.podIP}')
	out=$(timeout 10 bash -c "exec 3<>/dev/tcp/$ip/$port && printf 'version\r\n' >&3 && head -n 1 <&3" | tr -d '\r') ||
		fail "${label}memcached does not answer on $ip:$port"
	[[ $out == "VERSION ${memcached_img#memcached:}" ]] || fail "${label}memcached on $ip:$port answered '$out', not VERSION ${memcached_img#memcached:}"
	ok "${label}the Memcached Available with its finalizer $finalizer; its operand pod $pod Running and Ready with $memcached_img (Debian's memcached), command $command, port $port, uid $user (restricted); memcached answers $out on $ip:$port"
	uid=$(k -n "$on" get memcached "$cr" -o 'jsonpath={.metadata.uid}')
	k -n "$on" delete memcached "$cr" --timeout=60s >/dev/null || fail "${label}the Memcached was not deleted (finalizer)"
	deleting_event() {
		k -n "$on" get events.events.k8s.io -o 'jsonpath={range .items[?(@.reason=="Deleting")]}{.regarding.uid}{"\n"}{end}' | grep -qx "$uid"
	}
	wait_for 30 "the finalizer's Deleting event" deleting_event ||
		fail "${label}no Deleting event regarding the Memcached $cr: its finalizer did not run ($(k -n "$on" get events.events.k8s.io 2>&1 | tail -n 5))"
	gone() { [[ -z $(k -n "$on" get deployment "$cr" -o name --ignore-not-found) ]]; }
	wait_for 60 "the operand's Deployment to go with the Memcached" gone || fail "${label}the Deployment $cr outlived its Memcached"
	ok "${label}the Memcached deleted: its finalizer ran (the Deleting event regarding it) and its Deployment went with it"
	k delete namespace "$on" --wait=false >/dev/null
	timings+=("$(printf '%-52s %s' "${label}the operand Available, checked, deleted" "$(fmt_duration $((SECONDS - t)))")")
}

# cluster_deploy_image: the deploy-image plugin's operand run for real. A go/v4 project with the
# deploy-image scenario's Memcached ($memcached_flags), its --image the real memcached of
# Debian's package (memcached_operand); make docker-build, make deploy (restricted namespace);
# the manager Ready under its ServiceAccount; then check_memcached_operand.
cluster_deploy_image() {
	local name=cache img=example.com/cache:v0.0.1 proj="$work/cache" sa=cache-controller-manager
	ns=$name-system
	memcached_operand
	mkdir -p "$proj"
	cd "$proj"
	timed "deploy-image: opbuilder init + create api --plugins=deploy-image/v1-alpha" bash -c "
		set -e
		'$opbuilder' init --domain example.com --repo example.com/$name --project-name $name
		'$opbuilder' create api --group cache --version v1alpha1 --kind Memcached --image=$memcached_img \
			$memcached_flags --plugins=deploy-image/v1-alpha
	"
	"$here/seed-tools.sh" "$proj" >>"$work/stage.log" 2>&1 || fail "seed-tools.sh failed"
	# BuildKit's Go caches already hold the dependencies (seeded for the stage's first project).
	image_build_load "deploy-image: " "$img"
	deploy_restricted "deploy-image: " "$ns" "$img"
	wait_for 300 "the deploy-image manager to be available" deploy_available_in "$ns" "$name-controller-manager" 1 ||
		fail "the deploy-image manager did not become available: $(k -n "$ns" get pods -o wide 2>&1)"
	[[ $(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].spec.serviceAccountName}') == "$sa" ]] ||
		fail "the deploy-image manager does not run as $sa"
	ok "deploy-image: manager Available under the ServiceAccount $sa (restricted Pod Security Standard)"
	check_memcached_operand "deploy-image: " cache-operand
	timed "deploy-image: make undeploy" make undeploy
	cd "$work"
}

# cluster_tutorial: the CronJob operator of docs/tutorial.md (tutorial.sh --project makes it as the
# tutorial stage does: the page's commands and code, its webhooks), deployed from its image as
# the page's "Deploy" says (make docker-build, make deploy IMG=.../mycronjob:v0.1.0) with
# cert-manager's certificate; the page's sample with its Jobs' image set to the node's busybox
# (node_debian_image busybox, Debian's busybox-static; the page names busybox:1.37, which is not
# to be had here); its Jobs run to completion in the node ("Hello from MyCronJob" in their
# logs), the MyCronJob's status names the running Job in active and its lastScheduleTime, and
# only the three newest successful Jobs are kept (successfulJobsHistoryLimit).
cluster_tutorial() {
	local name=mycronjob img=example.com/mycronjob:v0.1.0 proj busybox t cr=mycronjob-sample uid
	local sa=mycronjob-controller-manager
	ns=$name-system
	t=$SECONDS
	busybox=$(node_debian_image busybox) || fail "the busybox image could not be made"
	timings+=("$(printf '%-52s %s' "tutorial: image $busybox (Debian's busybox-static)" "$(fmt_duration $((SECONDS - t)))")")
	timed "tutorial: cluster.sh load $busybox" "$here/cluster.sh" load "$node" "$busybox"
	timed "tutorial: the tutorial's project (tutorial.sh --project)" "$here/tutorial.sh" --project "$work/tutorial"
	proj=$work/tutorial/$name
	[[ -f $proj/internal/controller/mycronjob_controller.go && -f $proj/internal/webhook/v1/mycronjob_webhook.go ]] ||
		fail "tutorial.sh --project made no CronJob operator with webhooks in $proj"
	cd "$proj"
	image_build_load "tutorial: " "$img"
	deploy_restricted "tutorial: " "$ns" "$img"
	manager_available_with_ca "tutorial: " "$ns" "$name-controller-manager" "$name"
	[[ $(k -n "$ns" get pods -l control-plane=controller-manager -o 'jsonpath={.items[0].spec.serviceAccountName}') == "$sa" ]] ||
		fail "the tutorial's manager does not run as $sa"
	ok "tutorial: the CronJob operator's manager Available under the ServiceAccount $sa, its webhooks' CA injected"

	t=$SECONDS
	sed "s|image: busybox:1.37$|image: $busybox|" config/samples/batch_v1_mycronjob.yaml >"$work/mycronjob.yaml"
	grep -q "image: $busybox$" "$work/mycronjob.yaml" || fail "the tutorial's sample names no busybox:1.37 image"
	apply_when_reachable "$work/mycronjob.yaml" "$work/apply.log" || fail "the tutorial's sample was refused: $(cat "$work/apply.log")"
	uid=$(k get mycronjob "$cr" -o 'jsonpath={.metadata.uid}')
	: >"$work/completed-jobs.txt"
	# Every second: the owned Jobs that completed (each remembered), and whether status.active named
	# a Job that then ran.
	cronjob_runs() {
		local jobs active
		jobs=$(k get jobs -l "batch.wzj.kubebuilder.io/mycronjob=$cr" -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.ownerReferences[?(@.controller==true)].uid} {.status.succeeded}{"\n"}{end}')
		awk -v uid="$uid" '$2 == uid && $3 == 1 { print $1 }' <<<"$jobs" >>"$work/completed-jobs.txt"
		active=$(k get mycronjob "$cr" -o 'jsonpath={.status.active[*].name}')
		[[ -z $active ]] || echo "$active" >>"$work/active-jobs.txt"
		[[ $(sort -u "$work/completed-jobs.txt" | wc -l) -ge 4 && -s $work/active-jobs.txt ]]
	}
	wait_for 150 "four Jobs of $cr to complete" cronjob_runs ||
		fail "the tutorial's Jobs did not complete: $(k get jobs,pods -o wide; sort -u "$work/completed-jobs.txt" | xargs)"
	local done_jobs last active first newest
	# The names end in the run's Unix time: sorted, they are in the order of the runs.
	done_jobs=$(sort -u "$work/completed-jobs.txt" | xargs)
	first=${done_jobs%% *} newest=${done_jobs##* }
	grep -q 'Hello from MyCronJob' <<<"$(k logs "job/$newest" 2>&1)" || fail "job $newest did not print the tutorial's greeting"
	active=$(head -n 1 "$work/active-jobs.txt" | awk '{ print $1 }')
	[[ " $done_jobs " == *" $active "* || $(k get job "$active" -o 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].uid}' 2>/dev/null) == "$uid" ]] ||
		fail "status.active named $active, which is no Job of $cr ($done_jobs)"
	last=$(k get mycronjob "$cr" -o 'jsonpath={.status.lastScheduleTime}')
	[[ -n $last ]] || fail "status.lastScheduleTime is not set"
	ok "tutorial: the MyCronJob's Jobs ran to completion in the node ($done_jobs; $newest's busybox said Hello from MyCronJob); status.active named a running one ($active), lastScheduleTime $last"
	kept() {
		[[ -z $(k get job "$first" -o name --ignore-not-found) &&
			$(k get jobs -l "batch.wzj.kubebuilder.io/mycronjob=$cr" -o 'jsonpath={range .items[?(@.status.succeeded==1)]}{.metadata.name}{"\n"}{end}' | wc -l) -le 3 ]]
	}
	wait_for 30 "the successful Jobs pruned to 3" kept ||
		fail "the oldest Job $first is still there or more than 3 successful Jobs are kept (successfulJobsHistoryLimit 3): $(k get jobs --no-headers | xargs)"
	ok "tutorial: of $(wc -w <<<"$done_jobs") completed Jobs the oldest ($first) is gone and at most the 3 newest successful are kept (successfulJobsHistoryLimit)"
	k delete mycronjob "$cr" --timeout=60s >/dev/null || fail "the MyCronJob was not deleted"
	timings+=("$(printf '%-52s %s' "tutorial: the Jobs run, the status checked" "$(fmt_duration $((SECONDS - t)))")")
	timed "tutorial: make undeploy" make undeploy
	cd "$work"
}

# cluster_selfcerts, cluster_rust_selfcerts: certs.opbuilder.io/v1-alpha (issue 48 item 3,
# docs/certs.md): a go/v4 project (harbor), and a Rust-layout one (pier),
# whose manager keeps its own webhook certificate, deployed with no cert-manager object (the
# node's cert-manager stays idle: no Certificate or Issuer in the namespace). Proven: the Secret
# webhook-server-cert made by the manager, its CA in the caBundle of both webhook configurations
# and of the CRD's conversion; defaulting, validation and conversion answer through the Service
# right after the rollout; /metrics keeps its authorization (200 with a token bound to
# metrics-reader, 401 without); two replicas serve the one certificate (the Secret unchanged by
# the second, 20 admissions through the Service in a row); the Secret deleted with two replicas
# running: the manager rebuilds it and rotates to a new authority in its three steps while an
# admission and a conversion are made every 2 s, none refused; at the end one new authority,
# in the Secret and in every caBundle, signing the served certificate.
cluster_selfcerts() {
	selfcerts_proof go
}

cluster_rust_selfcerts() {
	selfcerts_proof rust
}

# selfcerts_proof LAYOUT (go or rust): the proof above for one layout.
selfcerts_proof() {
	local layout=$1 name=harbor label=selfcerts
	[[ $layout == go ]] || name=pier label="rust selfcerts"
	local deploy=$name-controller-manager img=example.com/$name:v0.0.1 proj="$work/$name"
	local t=$SECONDS out old_ca rv i step steps failures=0 made=0 kind obj path
	ns=$name-system
	mkdir -p "$proj"
	cd "$proj"
	if [[ $layout == go ]]; then
		timed "$label: init --plugins=go/v4,certs/v1-alpha, create api v1, v2, create webhook" bash -c "
			set -e
			'$opbuilder' init --domain example.com --repo example.com/$name --plugins=go/v4,certs/v1-alpha
			'$opbuilder' create api --group ship --version v1 --kind Frigate --resource --controller
			'$opbuilder' create api --group ship --version v2 --kind Frigate --resource --controller=false
			'$opbuilder' create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation --conversion --spoke v2
		"
	else
		timed "$label: init --plugins=rust.opbuilder.io/v1-beta,certs/v1-alpha, create api v1, v2, create webhook ×2" bash -c "
			set -e
			'$opbuilder' init --plugins=rust.opbuilder.io/v1-beta,certs/v1-alpha --domain example.com --project-name $name
			'$opbuilder' create api --group ship --version v1 --kind Frigate --resource --controller
			'$opbuilder' create api --group ship --version v2 --kind Frigate --resource --controller=false
			'$opbuilder' create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation
			'$opbuilder' create webhook --group ship --version v1 --kind Frigate --conversion --spoke v2
		"
	fi
	"$here/seed-tools.sh" "$proj" >>"$work/stage.log" 2>&1 || fail "$label: seed-tools.sh failed"
	if [[ $layout == go ]]; then
		timed "$label: make build" make build
	else
		# As cluster_rust: the host's cargo builds the manifests generator only.
		use_rust_target
		timed "$label: make manifests (CRDs and RBAC from the Rust source)" make manifests
	fi
	kubectl kustomize config/default >"$work/$name-rendered.yaml" 2>>"$work/stage.log" ||
		"$proj/bin/kustomize" build config/default >"$work/$name-rendered.yaml"
	! grep -n 'cert-manager' "$work/$name-rendered.yaml" >&2 || fail "$label: config/default renders cert-manager (above)"
	if [[ $layout == go ]]; then
		timed "$label: seed the Dockerfile's Go cache mounts" "$here/seed-go-build-cache.sh" "$proj"
		image_build_load "$label: " "$img"
	else
		# The Dockerfile's cargo target cache is cluster_rust's (same dependencies, features and
		# profile), so only the project's own crate is compiled for the image: its own cache would
		# build every dependency in release for musl once more (6 minutes or more, docs/testing.md).
		sed -i "s/id=$name-target,/id=library-target,/" Dockerfile
		grep -q 'id=library-target,' Dockerfile || fail "$label: the Dockerfile has no cargo target cache mount to share"
		step_limit=3600 image_build_load "$label: " "$img"
	fi
	deploy_restricted "$label: " "$ns" "$img"
	wait_for 300 "the manager's Deployment $deploy to be available" deploy_available_in "$ns" "$deploy" 1 ||
		fail "$label: the manager did not become available: $(k -n "$ns" get pods -o wide 2>&1)"
	[[ -z $(k -n "$ns" get certificates.cert-manager.io,issuers.cert-manager.io -o name) ]] ||
		fail "$label: cert-manager objects in $ns"
	[[ $(k -n "$ns" get deployment "$deploy" -o 'jsonpath={.spec.template.spec.volumes}') != *webhook-server-cert* ]] ||
		fail "$label: the manager mounts the Secret"
	# same_ca [PREFIX]: the Secret's ca.crt is the caBundle of both webhook configurations (their
	# names after PREFIX: the helm release's) and the CRD's conversion.
	same_ca() {
		local ca prefix=${1:-}
		ca=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.ca\.crt}') || return 1
		[[ -n $ca ]] || return 1
		for what in "mutatingwebhookconfiguration $prefix$name-mutating-webhook-configuration {.webhooks[0].clientConfig.caBundle}" \
			"validatingwebhookconfiguration $prefix$name-validating-webhook-configuration {.webhooks[0].clientConfig.caBundle}" \
			"crd frigates.ship.example.com {.spec.conversion.webhook.clientConfig.caBundle}"; do
			read -r kind obj path <<<"$what"
			[[ $(k get "$kind" "$obj" -o "jsonpath=$path") == "$ca" ]] || return 1
		done
	}
	same_ca || fail "$label: the Secret's CA is not in every caBundle once the pod is Ready"
	[[ $(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.type}') == kubernetes.io/tls ]] ||
		fail "$label: webhook-server-cert is not a TLS Secret"
	ok "$label: the manager made the Secret webhook-server-cert; its CA is in both webhook configurations and the CRD's conversion; no cert-manager object, no volume"
	timings+=("$(printf '%-52s %s' "$label: deploy, Available with its own certificate" "$(fmt_duration $((SECONDS - t)))")")

	# answers NAME: a Frigate without foo is admitted and defaulted, and reads as v2 (conversion).
	answers() {
		k apply -f - >/dev/null 2>>"$work/$name-refused.log" <<-EOT || return 1
			apiVersion: ship.example.com/v1
			kind: Frigate
			metadata: {name: $1, namespace: default}
			spec: {}
		EOT
		[[ $(k get frigates.v1.ship.example.com "$1" -o 'jsonpath={.spec.foo}') == default ]] || return 1
		[[ $(k get frigates.v2.ship.example.com "$1" -o 'jsonpath={.apiVersion}' 2>>"$work/$name-refused.log") == ship.example.com/v2 ]]
	}
	# Available, with its CA in place; the Service's endpoint may still be on its way to the node's
	# kube-proxy (a refused connection meanwhile): the first answer is awaited.
	wait_for 60 "the webhooks to answer" answers first || fail "$label: the first Frigate after the rollout was refused or not defaulted: $(cat "$work/$name-refused.log")"
	k create --dry-run=server -f - >/dev/null <<-EOT || fail "$label: the validating webhook refused a dry run"
		apiVersion: ship.example.com/v1
		kind: Frigate
		metadata: {name: dry, namespace: default}
		spec: {foo: set}
	EOT
	ok "$label: defaulting, validation and conversion answer right after the rollout"

	k create clusterrolebinding "$name-metrics-binding" --clusterrole="$name-metrics-reader" \
		--serviceaccount="$ns:$name-controller-manager" >/dev/null
	out=$(scrape_metrics "$ns" "$name-controller-manager-metrics-service" curl-$name "$(k -n "$ns" create token "$name-controller-manager")")
	grep -q '< HTTP/1.1 200 OK' <<<"$out" || fail "$label: the authorised scrape did not get 200: $(tail -n 20 <<<"$out")"
	out=$(scrape_metrics "$ns" "$name-controller-manager-metrics-service" curl-$name-anonymous "")
	grep -q '< HTTP/1.1 401 Unauthorized' <<<"$out" || fail "$label: a scrape without a token did not get 401: $(tail -n 20 <<<"$out")"
	k -n "$ns" delete pod curl-$name curl-$name-anonymous --wait=false >/dev/null
	k delete clusterrolebinding "$name-metrics-binding" >/dev/null
	ok "$label: /metrics keeps its authorization (200 with a metrics-reader token, 401 without)"

	rv=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.metadata.resourceVersion}')
	k -n "$ns" scale deployment "$deploy" --replicas=2 >/dev/null
	wait_for 180 "two manager replicas" deploy_available_in "$ns" "$deploy" 2 || fail "$label: the second replica did not become available"
	[[ $(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.metadata.resourceVersion}') == "$rv" ]] ||
		fail "$label: the second replica changed the Secret"
	for i in $(seq 1 20); do
		answers "pair-$i" || fail "$label: admission $i with two replicas refused: $(tail -n 5 "$work/$name-refused.log")"
	done
	ok "$label: two replicas serve the one certificate (the Secret unchanged, 20 admissions and conversions through the Service)"

	# The forced rotation: the Secret deleted under two replicas.
	t=$SECONDS
	old_ca=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.ca\.crt}' | base64 -d)
	k -n "$ns" delete secret webhook-server-cert >/dev/null
	steps=""
	# rotated: one authority again, not the old one, in every caBundle.
	rotated() {
		local ca
		ca=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.ca\.crt}' | base64 -d) || return 1
		[[ -n $ca && $ca != "$old_ca" && $(grep -c 'BEGIN CERTIFICATE' <<<"$ca") == 1 ]] && same_ca
	}
	while ((SECONDS - t < 420)); do
		step=$(k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.metadata.annotations.opbuilder\.io/webhook-ca-rotation}' 2>/dev/null || true)
		[[ -z $step || $steps == *"${step%% *}"* ]] || steps+="${step%% *} "
		made=$((made + 1))
		answers "rotation-$made" || failures=$((failures + 1))
		if [[ $steps == *serving-moved* ]] && rotated; then
			break
		fi
		sleep 2
	done
	((failures == 0)) || fail "$label: $failures of $made admissions refused during the rotation: $(tail -n 5 "$work/$name-refused.log")"
	[[ $steps == "bundle-extended serving-moved " ]] || fail "$label: the rotation went through '$steps', not bundle-extended then serving-moved"
	rotated || fail "$label: the rotation did not end with one new authority in every caBundle within 420 s"
	k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.ca\.crt}' | base64 -d >"$work/$name-ca.pem"
	k -n "$ns" get secret webhook-server-cert -o 'jsonpath={.data.tls\.crt}' | base64 -d >"$work/$name-tls.pem"
	printf '%s\n' "$old_ca" >"$work/$name-old-ca.pem"
	openssl verify -CAfile "$work/$name-ca.pem" "$work/$name-tls.pem" >/dev/null ||
		fail "$label: the new authority does not sign the serving certificate"
	! openssl verify -CAfile "$work/$name-old-ca.pem" "$work/$name-tls.pem" >/dev/null 2>&1 ||
		fail "$label: the old authority still signs the serving certificate"
	answers after-rotation || fail "$label: a Frigate after the rotation was refused"
	ok "$label: the Secret deleted under two replicas: rebuilt and rotated to a new authority (bundle-extended, serving-moved, done) in $(fmt_duration $((SECONDS - t))), $made admissions and conversions meanwhile, none refused"
	timings+=("$(printf '%-52s %s' "$label: forced rotation under two replicas" "$(fmt_duration $((SECONDS - t)))")")

	k delete frigates.v1.ship.example.com --all -n default >/dev/null
	timed "$label: make undeploy" make undeploy
	# The same project's helm chart, under a release whose name is not the project's: the
	# manager's --webhook-service names the release's Service, no cert-manager object.
	t=$SECONDS
	local helm release=fleet
	helm=$("$here/go-tool.sh" helm) || fail "helm $(pin e2e.helm) could not be built"
	gone() { [[ -z $(k get namespace "$ns" -o name --ignore-not-found) ]]; }
	wait_for 180 "namespace $ns to go" gone || fail "$label: make undeploy left namespace $ns"
	timed "$label: opbuilder edit --plugins=helm/v2-alpha" "$opbuilder" edit --plugins=helm/v2-alpha
	[[ $(sed -n '/^certManager:/,/^$/p' dist/chart/values.yaml) == *"enabled: false"* ]] ||
		fail "$label: the chart's values.yaml turns cert-manager on: $(sed -n '/^certManager:/,/^$/p' dist/chart/values.yaml)"
	"$helm" template "$release" dist/chart --namespace "$ns" >"$work/$name-chart.yaml" ||
		fail "$label: helm template failed"
	! grep -n 'cert-manager' "$work/$name-chart.yaml" >&2 || fail "$label: the chart renders cert-manager (above)"
	grep -q -- "--webhook-service=$release-$name-webhook-service\$" "$work/$name-chart.yaml" ||
		fail "$label: the chart's manager does not name the release's webhook Service: $(grep -n -- --webhook "$work/$name-chart.yaml")"
	timed "$label: make helm-deploy IMG=$img HELM_RELEASE=$release" make helm-deploy IMG="$img" HELM="$helm" HELM_RELEASE="$release"
	wait_for 120 "the chart's manager to write its CA into every caBundle" same_ca "$release-" ||
		fail "$label: with the chart, the Secret's CA is not in every caBundle: $(k -n "$ns" get pods -o wide 2>&1)"
	# helm's --wait saw the pod Ready; the Service's endpoint may still be on its way to the
	# node's kube-proxy (a refused connection meanwhile): the first answer is awaited.
	wait_for 60 "the chart's webhooks to answer" answers chart-1 ||
		fail "$label: with the chart, Frigate 1 was refused or not defaulted: $(tail -n 5 "$work/$name-refused.log")"
	for i in 2 3; do
		answers "chart-$i" || fail "$label: with the chart, Frigate $i was refused or not defaulted: $(tail -n 5 "$work/$name-refused.log")"
	done
	ok "$label: the helm chart (release $release, certManager.enabled false, no cert-manager object rendered): the manager made its certificate for the release's Service; defaulting and conversion answer"
	timings+=("$(printf '%-52s %s' "$label: the helm chart, installed and answering" "$(fmt_duration $((SECONDS - t)))")")
	k delete frigates.v1.ship.example.com --all -n default >/dev/null
	timed "$label: make helm-uninstall" make helm-uninstall HELM="$helm" HELM_RELEASE="$release"
	# The chart keeps its CRDs (crd.keep) and helm its namespace, with the Secret the manager made.
	k delete crd frigates.ship.example.com --ignore-not-found >/dev/null
	k delete namespace "$ns" --ignore-not-found --wait=false >/dev/null
	cd "$work"
}
