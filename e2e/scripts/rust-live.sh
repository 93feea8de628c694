#!/usr/bin/env bash
# The Rust layout's manager on a live control plane, from the golden tree e2e/testdata/rust. Each
# manager runs as the ServiceAccount config/ deploys, with the RBAC of `kubectl kustomize
# config/default` (manager-role, leader election's Role, metrics-auth-role), through a token:
#   - started before the CRDs exist, a manager stops within 10 s of SIGTERM (its watches never
#     list) and releases the Lease; another stays ready (its webhooks answer) while its watches
#     fail, says so once per watch however often it is retried, counts the failures
#     (controller_watch_errors_total, controller_watch_failing 1), and says and counts the
#     recovery once `make install` has installed the CRDs; with --zap-encoder=json every line of
#     its log is JSON;
#   - a probe port that is taken: the manager exits non-zero at start, naming the flag;
#   - of two managers with --leader-elect exactly one holds the Lease and reconciles: a
#     Guestbook gets an Available status and no finalizer; /healthz and /readyz answer GET and
#     refuse POST; /metrics is HTTPS only and answers a token allowed to get it (200, OpenMetrics
#     with controller-runtime's names, a `result` label, one name per controller, the worker
#     limit of --max-concurrent-reconciles), refuses a token that is not (403) and a request
#     without one (401), and a plain HTTP request is a failed handshake in the log; a reconcile of
#     a Guestbook whose status says it all already writes nothing (the API server's own count of
#     status writes); with its status forbidden for a while, each failed reconcile
#     is logged once and counted once (reconcile_errors_total) and retried (workqueue_retries_total);
#     the workqueue and process metrics are served, and every query of the grafana plugin's
#     dashboards (grafana/, dashboard-metrics.py) reads a metric served with the labels it
#     groups by; the core Event controller
#     reconciles an event of another component, never those the manager publishes;
#   - the API server calls the webhooks (pointed at the manager by URL, its certificate as the
#     CA): a Guestbook is defaulted, an invalid one refused as Invalid naming the field, a v1
#     Guestbook read as v2 and written back reads the same as v1, a ConfigMap is defaulted but
#     not one in kube-system; a certificate renewed in --webhook-cert-path is served without a
#     restart; the webhook server answers on IPv6 too, where the host has it;
#   - SIGTERM to the leader: it is unready at once and its webhook server still answers, then it
#     stops its controllers, releases the Lease and exits 0, and the standby takes the Lease over
#     in under 2 s; a cluster-scoped Tenant is reconciled by the new leader and a Guestbook
#     (without a finalizer) deleted at once;
#   - the API server frozen (SIGSTOP) for 20 s: the leader has stopped acting as the leader,
#     saying so, within 12 s of the stop (it exits 1), and a standby takes the Lease once the API
#     server is back;
#   - the deploy-image controller (Memcached, cache/v1alpha1): the sample's Deployment runs the
#     image config/manager gives in MEMCACHED_IMAGE with the command, port and user of `create
#     api`, is controlled by the Memcached, follows a new spec.size (and the Available condition
#     reports it); deleting the Memcached runs its finalizer (a Deleting warning);
#   - no manager's log (written to a file: not a terminal) holds an escape sequence;
#   - the webhooks under `make run` (rust-make-run.sh, in the same project).
# Needs python3 with PyYAML (Debian: python3-yaml).
#
# Usage: rust-live.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd cargo make kubectl curl openssl base64
need_pyyaml

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-rust-live.XXXXXX")
cp_dir="$work/plane"
pids=()
apiserver=""
cleanup() {
	# A frozen API server would ignore the SIGTERM that stops it.
	[[ -z $apiserver ]] || kill -CONT "$apiserver" 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$scripts/control-plane.sh" stop "$cp_dir" || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dir="$work/guestbook"
cp -r "$OPBUILDER_ROOT/e2e/testdata/rust/tree" "$dir"
cd "$dir"
"$scripts/seed-tools.sh" "$dir"
use_rust_target
log_info "make manifests; cargo build (the manager)"
make manifests
cargo build --quiet --bin guestbook
manager="$dir/target/debug/guestbook"
lease=$(sed -n 's/^const LEADER_ELECTION_ID: &str = "\(.*\)";$/\1/p' src/main.rs)
[[ -n $lease ]] || die "no LEADER_ELECTION_ID in src/main.rs"

"$scripts/control-plane.sh" start "$cp_dir"
eval "$("$scripts/control-plane.sh" env "$cp_dir")"
# The pid file holds "PID BINARY" (daemons.sh): the PID alone.
read -r apiserver _ <"$cp_dir/kube-apiserver.pid"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
fail() {
	for f in "$work"/*.log; do
		echo "---- $f"
		tail -30 "$f"
	done
	die "$*"
}

# The deploy-image controller's operand image, as config/manager gives it to the manager.
memcached_image=$(awk '/- name: MEMCACHED_IMAGE/ { getline; print $2 }' config/manager/manager.yaml)
[[ $memcached_image == memcached:* ]] || die "config/manager/manager.yaml sets no MEMCACHED_IMAGE: '$memcached_image'"

log_info "the manager's identity as config/default deploys it: Namespace, ServiceAccount, RBAC, and a token"
namespace=guestbook-system
kubectl kustomize config/default >"$work/default.yaml"
manager_identity "$work/default.yaml"
token_kubeconfig guestbook-controller-manager "$namespace" >"$work/manager.kubeconfig"

# certificate DIR: a self-signed serving certificate for 127.0.0.1 in DIR (tls.crt, tls.key, as
# cert-manager writes them), replaced as a renewal does: new files renamed over the old ones.
certificate() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=webhook-service -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$1/tls.key.new" -out "$1/tls.crt.new" 2>/dev/null
	mv "$1/tls.key.new" "$1/tls.key"
	mv "$1/tls.crt.new" "$1/tls.crt"
}
fingerprint() { openssl x509 -noout -fingerprint -sha256 -in "$1"; }
served() { # PORT: the fingerprint of the certificate served there
	openssl s_client -connect "127.0.0.1:$1" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256
}

# start_manager NAME [FLAG...]: a manager with --leader-elect as the ServiceAccount, on ports of
# its own (sets pid_NAME, probe_NAME, metrics_NAME, webhooks_NAME), its log in NAME.log.
start_manager() {
	local name=$1 probe
	shift
	probe=$((20000 + RANDOM % 10000))
	certificate "$work/certs-$name"
	KUBECONFIG="$work/manager.kubeconfig" POD_NAMESPACE="$namespace" MEMCACHED_IMAGE="$memcached_image" RUST_LOG=info "$manager" \
		--leader-elect --health-probe-bind-address "127.0.0.1:$probe" \
		--metrics-bind-address "127.0.0.1:$((probe + 1))" \
		--webhook-port "$((probe + 2))" --webhook-cert-path "$work/certs-$name" "$@" \
		>"$work/$name.log" 2>&1 &
	pids+=("$!")
	printf -v "pid_$name" '%s' "$!"
	printf -v "probe_$name" '%s' "$probe"
	printf -v "metrics_$name" '%s' "$((probe + 1))"
	printf -v "webhooks_$name" '%s' "$((probe + 2))"
	WAIT_FOR_PID=$! wait_for 60 "manager $name's /healthz" curl -fsS "http://127.0.0.1:$probe/healthz" ||
		fail "manager $name did not start"
}
http_code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
led() { grep -q 'became the leader' "$work/$1.log"; }
stop_manager() { # NAME EXPECTED-STATUS
	local pid_var="pid_$1" status=0
	kill -TERM "${!pid_var}" 2>/dev/null || true
	wait "${!pid_var}" || status=$?
	[[ $status -eq $2 ]] || fail "manager $1 exited $status, not $2"
}

# wire_webhooks NAME: the API server calls manager NAME's webhook server: the configurations
# `make manifests` wrote and the Guestbook CRD's conversion, pointed at 127.0.0.1 and its port
# with its self-signed certificate as the CA (in a cluster, the Service and cert-manager's CA).
wire_webhooks() {
	local port_var="webhooks_$1" port ca
	port=${!port_var}
	ca=$(base64 -w0 <"$work/certs-$1/tls.crt")
	python3 - "$port" "$ca" config/webhook/manifests.yaml >"$work/webhooks.yaml" <<'PY'
import sys, yaml
port, ca, path = sys.argv[1], sys.argv[2], sys.argv[3]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
for d in docs:
    for w in d.get("webhooks", []):
        hook_path = w["clientConfig"]["service"]["path"]
        w["clientConfig"] = {"url": f"https://127.0.0.1:{port}{hook_path}", "caBundle": ca}
print(yaml.safe_dump_all(docs))
PY
	kubectl apply --server-side --force-conflicts -f "$work/webhooks.yaml" >/dev/null
	# The CRD as `make install` applies it (server-side, as kubectl), its conversion by URL: the
	# next `make install` (rust-make-run.sh) replaces the url with the Service again. An ordinary
	# patch would leave the url to another field manager, and that apply would be refused
	# ("exactly one of url or service").
	kubectl kustomize config/crd | python3 -c '
import sys, yaml
port, ca = sys.argv[1], sys.argv[2]
for d in yaml.safe_load_all(sys.stdin):
    if d and d["metadata"]["name"] == "guestbooks.webapp.example.com":
        d["spec"]["conversion"]["webhook"]["clientConfig"] = {"url": f"https://127.0.0.1:{port}/convert", "caBundle": ca}
        print(yaml.safe_dump(d))
' "$port" "$ca" | kubectl apply --server-side --force-conflicts -f - >/dev/null
}

holder() { kubectl get lease "$lease" -n "$namespace" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
condition() { # KIND NAME [NS]
	kubectl get "$1" "$2" ${3:+-n "$3"} -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null
}
available() { [[ $(condition "$@") == True ]]; }
gone() { ! kubectl get "$1" "$2" ${3:+-n "$3"} >/dev/null 2>&1; }

# A token allowed to read the metrics (the ClusterRole metrics-reader of config/rbac), and one
# that is not.
kubectl create serviceaccount scraper -n default >/dev/null
kubectl create serviceaccount stranger -n default >/dev/null
kubectl create clusterrolebinding scraper-metrics --clusterrole=guestbook-metrics-reader --serviceaccount=default:scraper >/dev/null
scraper=$(kubectl create token scraper -n default)
stranger=$(kubectl create token stranger -n default)
# scrape_of NAME: manager NAME's /metrics into $work/metrics (its headers in $work/headers),
# read with the scraper's token.
scrape_of() {
	local port_var="metrics_$1"
	[[ $(curl -sk -D "$work/headers" -o "$work/metrics" -w '%{http_code}' -H "Authorization: Bearer $scraper" \
		"https://127.0.0.1:${!port_var}/metrics") == 200 ]]
}
# sample NAME METRIC: the value of METRIC (a series with its labels) in manager NAME's /metrics.
sample() {
	scrape_of "$1" && awk -v m="$2" 'index($0, m " ") == 1 { print $2 }' "$work/metrics"
}

log_info "a manager whose watches never list (no CRDs yet) stops within 10 s of SIGTERM"
start_manager stuck
wait_for 60 "manager stuck to lead" led stuck || fail "manager stuck did not become the leader"
kill -TERM "$pid_stuck"
start=$(now_ms)
while kill -0 "$pid_stuck" 2>/dev/null; do
	(($(now_ms) - start < 10000)) || fail "manager stuck still runs 10 s after SIGTERM (the pod's grace period)"
	sleep 0.1
done
stop_manager stuck 0
grep -q 'released the Lease' "$work/stuck.log" || fail "manager stuck did not release the Lease"

log_info "a manager started before the CRDs exist: ready, its failing watches said once each and counted"
start_manager early --zap-encoder=json
failing_watch() { [[ $(sample early 'controller_watch_failing{watch="webapp-guestbook"}') == 1 ]]; }
wait_for 30 "manager early to count the failing watch" failing_watch ||
	fail "/metrics does not show the failing watch: $(grep controller_watch "$work/metrics")"
sleep 5 # the watch is retried meanwhile
[[ $(http_code "http://127.0.0.1:$probe_early/readyz") == 200 ]] ||
	fail "a manager whose watches fail is unready: $(curl -s "http://127.0.0.1:$probe_early/readyz")"
errors=$(sample early 'controller_watch_errors_total{watch="webapp-guestbook"}')
((errors >= 2)) || fail "the watch's retries are not counted: controller_watch_errors_total $errors"
said() { # MESSAGE WATCH: how often the JSON log of manager early says MESSAGE of WATCH
	python3 - "$work/early.log" "$1" "$2" <<'PY'
import json, sys
path, message, watch = sys.argv[1:]
n = 0
for number, line in enumerate(open(path), 1):
    try:
        entry = json.loads(line)
    except ValueError:
        sys.exit(f"line {number} of the log of --zap-encoder=json is not JSON: {line!r}")
    fields = entry.get("fields", {})
    n += fields.get("message", "").startswith(message) and fields.get("watch") == watch
print(n)
PY
}
[[ $(said "a watch fails" webapp-guestbook) == 1 ]] ||
	fail "the failing watch of webapp-guestbook is not said exactly once: $(said "a watch fails" webapp-guestbook)"
log_info "make install: the watches recover, said once and counted"
make install
recovered() { [[ $(sample early 'controller_watch_failing{watch="webapp-guestbook"}') == 0 ]]; }
wait_for 60 "manager early's watch to recover" recovered || fail "the watch did not recover: $(grep controller_watch "$work/metrics")"
[[ $(said "the watch recovered" webapp-guestbook) == 1 ]] || fail "the recovery is not said once"
stop_manager early 0

log_info "manager a: takes the Lease and reconciles"
start_manager a
wait_for 60 "manager a to hold the Lease $lease" led a || fail "manager a did not become the leader"
holder_a=$(holder)
[[ -n $holder_a ]] || fail "the Lease $lease has no holder"
curl -fsS "http://127.0.0.1:$probe_a/healthz" | grep -qx ok || fail "/healthz did not answer ok"
[[ $(http_code -X POST "http://127.0.0.1:$probe_a/healthz") == 405 ]] || fail "/healthz answers POST"
curl -fsS "http://127.0.0.1:$probe_a/readyz" | grep -qx ok || fail "/readyz is not ok"

log_info "a probe port that is taken: the manager does not start"
taken=0
out=$(KUBECONFIG="$work/manager.kubeconfig" timeout 60 "$manager" --health-probe-bind-address "127.0.0.1:$probe_a" 2>&1) || taken=$?
[[ $taken -eq 1 ]] || fail "a manager whose probe port is taken exited $taken: $out"
grep -q -- "--health-probe-bind-address: cannot listen on 127.0.0.1:$probe_a" <<<"$out" ||
	fail "the manager does not say which port it cannot bind: $out"

# The CRD converts through the webhook (v2 is the version kubectl reads): manager a serves it.
[[ $(kubectl get crd guestbooks.webapp.example.com -o jsonpath='{.spec.conversion.strategy}') == Webhook ]] ||
	fail "the Guestbook CRD of make install does not convert through the webhook"
wire_webhooks a
kubectl apply -f config/samples/webapp_v1_guestbook.yaml
wait_for 60 "Guestbook guestbook-sample to be Available" available guestbook guestbook-sample default ||
	fail "the reconcile wrote no Available status"
[[ -z $(kubectl get guestbook guestbook-sample -n default -o jsonpath='{.metadata.finalizers}') ]] ||
	fail "the Guestbook has a finalizer: the controller's FINALIZER is None"

log_info "deploy-image: a Memcached's Deployment runs the image with its command, port and user; its size follows"
kubectl apply -f config/samples/cache_v1alpha1_memcached.yaml
wait_for 60 "Memcached memcached-sample to be Available" available memcached memcached-sample default ||
	fail "the deploy-image controller wrote no Available status"
kubectl get memcached memcached-sample -n default -o jsonpath='{.metadata.finalizers}' | grep -q 'cache.example.com/finalizer' ||
	fail "the Memcached has no finalizer"
operand() { kubectl get deployment memcached-sample -n default -o jsonpath="$1"; }
[[ $(operand '{.spec.template.spec.containers[0].image}') == "$memcached_image" ]] ||
	fail "the operand's image is not $memcached_image: $(operand '{.spec.template.spec.containers[0].image}')"
[[ $(operand '{.spec.template.spec.containers[0].command}') == '["memcached","--memory-limit=64","-o","modern","-v"]' ]] ||
	fail "the operand's command is not the one given: $(operand '{.spec.template.spec.containers[0].command}')"
[[ $(operand '{.spec.template.spec.containers[0].ports[0].containerPort}') == 11211 ]] ||
	fail "the operand's port is not 11211: $(operand '{.spec.template.spec.containers[0].ports}')"
[[ $(operand '{.spec.template.spec.containers[0].securityContext.runAsUser}') == 1001 ]] ||
	fail "the operand does not run as user 1001: $(operand '{.spec.template.spec.containers[0].securityContext}')"
[[ $(operand '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}') == Memcached/memcached-sample/true ]] ||
	fail "the Deployment is not controlled by the Memcached: $(operand '{.metadata.ownerReferences}')"
[[ $(operand '{.spec.replicas}') == 1 ]] || fail "the Deployment does not have the sample's size 1: $(operand '{.spec.replicas}')"
kubectl patch memcached memcached-sample -n default --type=merge -p '{"spec":{"size":3}}' >/dev/null
resized() { [[ $(operand '{.spec.replicas}') == 3 ]]; }
wait_for 30 "the Deployment to follow the size 3" resized || fail "the new size did not reach the Deployment"
reported() {
	kubectl get memcached memcached-sample -n default -o jsonpath='{.status.conditions[?(@.type=="Available")].message}' |
		grep -q 'with 3 replicas'
}
wait_for 30 "the Available condition to report 3 replicas" reported || fail "the Available condition does not report the new size"

log_info "the metrics: HTTPS, for a token allowed to get /metrics only"
url="https://127.0.0.1:$metrics_a/metrics"
scrape() { scrape_of a; }
wait_for 30 "the scraper's token to get the metrics" scrape || fail "an authorized token does not get the metrics"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0; charset=utf-8' "$work/headers" ||
	fail "the metrics are not served as OpenMetrics: $(cat "$work/headers")"
grep -q '^controller_runtime_reconcile_total{controller="webapp-guestbook",result="success"} [1-9]' "$work/metrics" ||
	fail "/metrics counts no reconcile of webapp-guestbook under its result: $(cat "$work/metrics")"
grep -q '^controller_runtime_max_concurrent_reconciles{controller="webapp-guestbook"} 4$' "$work/metrics" ||
	fail "/metrics does not give the worker limit of --max-concurrent-reconciles=4: $(grep max_concurrent "$work/metrics")"
for name in webapp-guestbook webapp-event core-event apps-deployment infra-tenant cache-memcached; do
	grep -q "^controller_runtime_reconcile_errors_total{controller=\"$name\"} " "$work/metrics" ||
		fail "no metrics of controller $name (each controller has a name of its own)"
done
for line in 'workqueue_adds_total{name="webapp-guestbook"} [1-9]' 'workqueue_work_duration_seconds_count{name="webapp-guestbook"} [1-9]' \
	'process_cpu_seconds_total [0-9]' 'process_open_fds [1-9]' 'tokio_alive_tasks [1-9]'; do
	grep -q "^$line" "$work/metrics" || fail "/metrics has no sample $line: $(grep -E '^(workqueue|process|tokio)_' "$work/metrics")"
done
# Every query of the grafana plugin's dashboards (the golden tree's `edit --plugins=grafana`)
# reads metrics this manager serves, with the labels it groups by.
python3 "$scripts/dashboard-metrics.py" grafana "$work/metrics" >"$work/dashboards.txt" 2>&1 ||
	fail "the Grafana dashboards read what the Rust manager does not serve: $(cat "$work/dashboards.txt")"
log_info "$(tr '\n' ';' <"$work/dashboards.txt")"
[[ $(http_code -k -H "Authorization: Bearer $stranger" "$url") == 403 ]] || fail "a token not allowed to get /metrics is not refused with 403"
[[ $(http_code -k "$url") == 401 ]] || fail "a request without a token is not refused with 401"
[[ $(http_code -k -H "Authorization: Bearer not-a-token" "$url") == 401 ]] || fail "an unknown token is not refused with 401"
if curl -fsS "http://127.0.0.1:$metrics_a/metrics" >/dev/null 2>&1; then
	fail "the metrics are served over plain HTTP"
fi
wait_for 10 "the failed handshake in the log" grep -q 'TLS handshake failed' "$work/a.log" ||
	fail "the failed TLS handshake of a plain HTTP request was not logged"

log_info "a reconcile of a Guestbook whose status says it all already writes nothing"
# The API server's own count of the writes of Guestbooks' status (server-side apply, or any patch).
status_writes() {
	kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ && /resource="guestbooks"/ && /subresource="status"/ && /verb="(APPLY|PATCH|UPDATE)"/ { n += $NF } END { print n + 0 }'
}
reconciled() { sample a 'controller_runtime_reconcile_total{controller="webapp-guestbook",result="success"}'; }
# Quiet first: no reconcile under way or to come (the echo of the status write has been seen).
settled() {
	local before
	before=$(reconciled)
	sleep 2
	[[ $(reconciled) == "$before" ]]
}
wait_for 30 "the Guestbook controller to settle" settled || fail "the Guestbook controller keeps reconciling: $(reconciled) reconciles"
writes=$(status_writes) reconciles=$(reconciled)
# Not vacuous: the Guestbook's status was written (Available), and counted.
((writes >= 1)) || fail "the API server counts no write of a Guestbook's status: $(kubectl get --raw /metrics | grep 'resource="guestbooks"' | head -5)"
kubectl annotate guestbook guestbook-sample -n default probe=steady --overwrite >/dev/null
again() { (($(reconciled) > reconciles)); }
wait_for 30 "the annotated Guestbook to be reconciled" again || fail "the annotated Guestbook was not reconciled"
[[ $(status_writes) == "$writes" ]] ||
	fail "the reconcile of an unchanged Guestbook wrote its status: $writes status writes before, $(status_writes) after"

log_info "failing reconciles (the status forbidden for a while): each failure logged once and counted once"
kubectl get clusterrole guestbook-manager-role -o json >"$work/manager-role.json"
python3 - "$work/manager-role.json" <<'PY' | kubectl replace -f - >/dev/null
import json, sys
role = json.load(open(sys.argv[1]))
for rule in role["rules"]:
    rule["resources"] = [r for r in rule.get("resources", []) if r != "guestbooks/status"]
role["rules"] = [r for r in role["rules"] if r.get("resources")]
print(json.dumps(role))
PY
# A new spec: the status must say so (its observedGeneration), and cannot.
kubectl patch guestbook guestbook-sample -n default --type=merge -p '{"spec":{"foo":"failing"}}' >/dev/null
failures() { # reconcile errors of webapp-guestbook: failed reconciles logged, errors counted
	local logged counted
	# Only the reconciles: a watch that expires under load (410) is logged with the controller's
	# name too, and is no reconcile error.
	logged=$(grep -cE 'WARN .*reconcile failed; retrying.*controller="?webapp-guestbook' "$work/a.log" || true)
	scrape || return 1
	counted=$(sed -n 's/^controller_runtime_reconcile_errors_total{controller="webapp-guestbook"} \([0-9]*\).*/\1/p' "$work/metrics")
	echo "$logged $counted"
}
failing() { read -r logged _ < <(failures) && ((logged >= 3)); }
wait_for 30 "reconciles of webapp-guestbook to fail" failing || fail "the reconciles did not fail without their permission"
kubectl get clusterrole guestbook-manager-role -o json | python3 -c '
import json, sys
role = json.load(sys.stdin)
saved = json.load(open(sys.argv[1]))
saved["metadata"]["resourceVersion"] = role["metadata"]["resourceVersion"]
print(json.dumps(saved))
' "$work/manager-role.json" | kubectl replace -f - >/dev/null
kubectl annotate guestbook guestbook-sample -n default probe=passing --overwrite >/dev/null
once() { read -r logged counted < <(failures) && [[ $logged == "$counted" ]]; }
sleep 3 # the retry under way (the backoff reached about a second) succeeds
wait_for 30 "every failed reconcile to be logged once" once || fail "failed reconciles logged and counted differ (logged, counted): $(failures)"
# Each failed reconcile went back to the queue with backoff: a retry, as controller-runtime's.
read -r _ counted < <(failures)
retries=$(sed -n 's/^workqueue_retries_total{name="webapp-guestbook"} \([0-9]*\).*/\1/p' "$work/metrics")
((retries >= counted && counted >= 3)) || fail "workqueue_retries_total ($retries) does not count the $counted failed reconciles of webapp-guestbook"

log_info "the core Event controller: the events of others, never the manager's own"
[[ -n $(kubectl get events -n default --field-selector reportingComponent=guestbook-manager -o name) ]] ||
	fail "the manager published no event"
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Event
metadata:
  name: foreign
  namespace: default
involvedObject:
  kind: ConfigMap
  name: probe
  namespace: default
reason: Checked
message: an event another component published
type: Normal
reportingComponent: someone-else
source:
  component: someone-else
EOF
core_events() { # how often the core Event controller has reconciled
	scrape && sed -n 's/^controller_runtime_reconcile_total{controller="core-event",result="success"} \([0-9]*\).*/\1/p' "$work/metrics"
}
foreign_seen() { (($(core_events) >= 1)); }
wait_for 30 "the core Event controller to reconcile the foreign event" foreign_seen || fail "the foreign event was not reconciled"
[[ $(core_events) == 1 ]] || fail "the core Event controller reconciled $(core_events) events: the manager's own among them"

log_info "the webhooks, called by the API server through manager a"
guestbook() { # NAME [FOO]: a v1 Guestbook, with spec.foo if FOO is given
	printf 'apiVersion: webapp.example.com/v1\nkind: Guestbook\nmetadata:\n  name: %s\n  namespace: default\n' "$1"
	if (($# > 1)); then printf 'spec:\n  foo: "%s"\n' "$2"; else printf 'spec: {}\n'; fi
}
foo() { kubectl get "guestbooks.v1.webapp.example.com" "$1" -n default -o jsonpath='{.spec.foo}'; }
defaulted() { guestbook probe | kubectl apply -f - >/dev/null && [[ $(foo probe) == default ]]; }
wait_for 60 "a Guestbook without foo to be defaulted" defaulted || fail "the defaulting webhook did not fill in spec.foo"
if refused=$(guestbook bad "" | kubectl apply -f - 2>&1); then
	fail "a Guestbook with an empty foo was accepted: $refused"
fi
grep -q 'is invalid: spec.foo: Invalid value: "": must not be empty' <<<"$refused" ||
	fail "the refusal does not name the field and the handler's message: $refused"
v2=$(kubectl get guestbooks.v2.webapp.example.com probe -n default -o json)
grep -q '"apiVersion": "webapp.example.com/v2"' <<<"$v2" || fail "the Guestbook was not served as v2: $v2"
grep -q '"foo": "default"' <<<"$v2" || fail "the v2 Guestbook lost spec.foo: $v2"
kubectl replace -f - <<<"$v2" >/dev/null || fail "writing the v2 Guestbook back failed"
[[ $(foo probe) == default ]] || fail "the Guestbook written back as v2 reads differently as v1: $(foo probe)"
kubectl create configmap probe -n default >/dev/null
[[ $(kubectl get configmap probe -n default -o jsonpath='{.metadata.labels.guestbook/defaulted}') == true ]] ||
	fail "the ConfigMap was not defaulted"
kubectl create configmap probe -n kube-system >/dev/null
[[ -z $(kubectl get configmap probe -n kube-system -o jsonpath='{.metadata.labels.guestbook/defaulted}') ]] ||
	fail "the ConfigMap webhook changed a ConfigMap of kube-system"

log_info "the webhook server: its certificate, and a renewed one without a restart"
wait_for 60 "the webhook server of manager a" bash -c "openssl s_client -connect 127.0.0.1:$webhooks_a </dev/null >/dev/null 2>&1"
[[ $(served "$webhooks_a") == "$(fingerprint "$work/certs-a/tls.crt")" ]] || fail "the webhook server does not serve its certificate"
old=$(served "$webhooks_a")
certificate "$work/certs-a"
renewed() { [[ $(served "$webhooks_a") == "$(fingerprint "$work/certs-a/tls.crt")" ]]; }
wait_for 20 "the renewed certificate to be served" renewed || fail "the renewed certificate is not served"
[[ $(served "$webhooks_a") != "$old" ]] || fail "the webhook server still serves the old certificate"
wire_webhooks a # the API server trusts the renewed certificate (cert-manager's CA does that in a cluster)
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	[[ $(http_code -k "https://[::1]:$webhooks_a/") == 404 ]] || fail "the webhook server does not answer on IPv6 ([::1])"
	log_info "the webhook server answers on IPv6 and IPv4"
else
	log_info "no IPv6 on this host: the webhook server's IPv6 side is not checked"
fi

log_info "manager b: waits while a holds the Lease"
start_manager b
sleep 6
[[ $(holder) == "$holder_a" ]] || fail "the Lease changed hands while a was running: $(holder)"
led b && fail "two managers lead at once"
grep -q 'waiting to become the leader' "$work/b.log" || fail "manager b does not say it waits"

log_info "SIGTERM to manager a: unready at once, its webhooks still answered; it releases the Lease and exits 0; b takes over in under 2 s"
start=$(now_ms)
kill -TERM "$pid_a"
# Unready first, while the webhook server keeps answering (webhook::SHUTDOWN_DELAY, 4 s): the
# endpoints drop the pod before its port closes. Seen beside the takeover, which it must not slow.
(
	until [[ $(http_code "http://127.0.0.1:$probe_a/readyz") == 503 ]]; do
		(($(now_ms) - start < 2000)) || exit 1
		sleep 0.05
	done
	echo "unready after $(($(now_ms) - start)) ms; webhooks: $(http_code -k "https://127.0.0.1:$webhooks_a/")"
) >"$work/stopping.txt" 2>&1 &
stopping=$!
until led b; do
	(($(now_ms) - start < 30000)) || fail "manager b did not take over in 30 s"
	sleep 0.05
done
took=$(($(now_ms) - start))
wait "$stopping" || fail "manager a was not unready within 2 s of SIGTERM: $(cat "$work/stopping.txt")"
grep -q 'webhooks: 404$' "$work/stopping.txt" ||
	fail "manager a's webhook server no longer answered once it was unready: $(cat "$work/stopping.txt")"
log_info "manager a: $(cat "$work/stopping.txt")"
stop_manager a 0
grep -q 'released the Lease' "$work/a.log" || fail "manager a did not release the Lease"
((took < 2000)) || fail "manager b took the Lease over ${took} ms after SIGTERM to a (must be under 2 s)"
log_info "manager b took over ${took} ms after SIGTERM to a"
[[ $(holder) != "$holder_a" ]] || fail "the Lease still names manager a"
wire_webhooks b

log_info "a cluster-scoped Tenant, reconciled by b"
kubectl apply -f config/samples/infra_v1alpha1_tenant.yaml
wait_for 60 "Tenant tenant-sample to be Available" available tenant tenant-sample || fail "the Tenant was not reconciled"

log_info "deleting the Guestbook: gone at once (no finalizer)"
kubectl delete guestbook guestbook-sample -n default --timeout=10s >/dev/null ||
	fail "the Guestbook was not deleted within 10 s"

log_info "deleting the Memcached runs its finalizer (Degraded, a Deleting warning)"
kubectl delete memcached memcached-sample -n default --wait=false
wait_for 60 "Memcached memcached-sample to be gone" gone memcached memcached-sample default ||
	fail "the Memcached is still there: the finalizer did not run"
kubectl get events.events.k8s.io -n default -o jsonpath='{.items[*].note}' |
	grep -q 'Custom Resource memcached-sample is being deleted from the namespace default' ||
	fail "no Deleting warning was published for the Memcached"

log_info "the API server frozen (SIGSTOP) for 20 s: the leader b stops leading within 12 s; c takes over after"
# The webhooks point at manager b, which is about to exit.
kubectl delete mutatingwebhookconfiguration mutating-webhook-configuration >/dev/null
kubectl delete validatingwebhookconfiguration validating-webhook-configuration >/dev/null
start_manager c
sleep 3 # c has seen the Lease b renews
start=$(now_ms)
kill -STOP "$apiserver"
until grep -q 'leader election lost' "$work/b.log" && ! kill -0 "$pid_b" 2>/dev/null; do
	(($(now_ms) - start < 20000)) || break
	sleep 0.1
done
took=$(($(now_ms) - start))
while (($(now_ms) - start < 20000)); do sleep 0.1; done
kill -CONT "$apiserver"
kill -0 "$pid_b" 2>/dev/null && fail "manager b still runs 20 s into the freeze"
grep -q 'leader election lost: the controllers are stopped' "$work/b.log" || fail "manager b did not say it stopped leading"
((took <= 12000)) || fail "manager b stopped leading ${took} ms after the API server froze (at most 12 s)"
log_info "manager b stopped leading ${took} ms after the API server froze"
status=0
wait "$pid_b" || status=$?
[[ $status -eq 1 ]] || fail "manager b exited $status after losing the Lease, not 1"
# A renewal b sent just before the freeze may reach the API server only when it resumes: the Lease
# then looks renewed, and c waits out a whole LEASE_DURATION (15 s) from then, as client-go does:
# 21 or 36 s from the freeze here, more on a loaded machine while the API server catches up.
WAIT_FOR_PID=$pid_c wait_for 90 "manager c to take the Lease over" led c || {
	echo "---- the Lease: $(kubectl get lease "$lease" -n "$namespace" -o jsonpath='{.spec}' 2>&1)"
	echo "---- manager c's leader election (c $(kill -0 "$pid_c" 2>/dev/null && echo runs || echo "has exited"))"
	grep -E 'leader|Lease|panic' "$work/c.log" | tail -40
	fail "manager c did not take over after the freeze"
}
log_info "manager c took the Lease over $(($(now_ms) - start)) ms after the API server froze (20 s)"
stop_manager c 0

log_info "no escape sequences in the logs"
if grep -l $'\e' "$work"/*.log; then
	fail "a manager wrote escape sequences to a file (its log is not a terminal)"
fi
"$scripts/rust-make-run.sh" "$dir"
log_info "rust-live: ok"
