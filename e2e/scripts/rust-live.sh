#!/usr/bin/env bash
# The Rust layout's manager on a live control plane, from the golden tree e2e/testdata/rust:
#   make install; a Guestbook gets the finalizer and an Available status from the reconcile;
#   /healthz, /readyz and /metrics answer; of two managers with --leader-elect exactly one holds
#   the Lease and reconciles, and the other takes over when the first stops; a cluster-scoped
#   Tenant is reconciled too; deleting the Guestbook runs the finalizer; SIGTERM stops a manager
#   cleanly (exit 0); the webhook server serves the certificate of --webhook-cert-path and, once
#   it is renewed there, the new one without a restart; the API server calls the manager's
#   webhooks (pointed at it by URL, its certificate as the CA): a Guestbook is defaulted, an
#   invalid one refused as Invalid naming the field, a v1 Guestbook read as v2 and written back
#   reads the same as v1 (kubectl reads v2 throughout: conversion), a ConfigMap is defaulted.
#   Needs python3 with PyYAML (Debian: python3-yaml).
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
cleanup() {
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
manager="$CARGO_TARGET_DIR/debug/guestbook"
lease=$(sed -n 's/^const LEADER_ELECTION_ID: &str = "\(.*\)";$/\1/p' src/main.rs)
[[ -n $lease ]] || die "no LEADER_ELECTION_ID in src/main.rs"

"$scripts/control-plane.sh" start "$cp_dir"
eval "$("$scripts/control-plane.sh" env "$cp_dir")"
log_info "make install"
make install

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

# start_manager NAME: a manager with --leader-elect on its own ports; sets port_NAME.
start_manager() {
	local name=$1 probe metrics hooks
	probe=$((20000 + RANDOM % 10000))
	metrics=$((probe + 1))
	hooks=$((probe + 2))
	certificate "$work/certs-$name"
	RUST_LOG=info "$manager" --leader-elect --leader-election-namespace default \
		--health-probe-bind-address "127.0.0.1:$probe" --metrics-bind-address "127.0.0.1:$metrics" \
		--webhook-port "$hooks" --webhook-cert-path "$work/certs-$name" \
		>"$work/$name.log" 2>&1 &
	pids+=("$!")
	printf -v "pid_$name" '%s' "$!"
	printf -v "probe_$name" '%s' "$probe"
	printf -v "metrics_$name" '%s' "$metrics"
	printf -v "webhooks_$name" '%s' "$hooks"
	wait_for 60 "manager $name's /readyz" curl -fsS "http://127.0.0.1:$probe/readyz"
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
	kubectl patch crd guestbooks.webapp.example.com --type=merge -p "{\"spec\":{\"conversion\":{\"webhook\":{\"clientConfig\":{\"service\":null,\"url\":\"https://127.0.0.1:$port/convert\",\"caBundle\":\"$ca\"}}}}}" >/dev/null
}

holder() { kubectl get lease "$lease" -n default -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
condition() { # KIND NAME [NS]
	kubectl get "$1" "$2" ${3:+-n "$3"} -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null
}
available() { [[ $(condition "$@") == True ]]; }
gone() { ! kubectl get "$1" "$2" ${3:+-n "$3"} >/dev/null 2>&1; }
fail() {
	for f in "$work"/*.log; do
		echo "---- $f"
		tail -30 "$f"
	done
	die "$*"
}

log_info "manager a: takes the Lease and reconciles"
start_manager a
wait_for 60 "manager a to hold the Lease $lease" bash -c "grep -q 'became the leader' '$work/a.log'" || fail "manager a did not become the leader"
holder_a=$(holder)
[[ -n $holder_a ]] || fail "the Lease $lease has no holder"
curl -fsS "http://127.0.0.1:$probe_a/healthz" | grep -qx ok || fail "/healthz did not answer ok"

# The CRD converts through the webhook (v2 is the version kubectl reads): manager a serves it.
[[ $(kubectl get crd guestbooks.webapp.example.com -o jsonpath='{.spec.conversion.strategy}') == Webhook ]] ||
	fail "the Guestbook CRD of make install does not convert through the webhook"
wire_webhooks a
kubectl apply -f config/samples/webapp_v1_guestbook.yaml
wait_for 60 "Guestbook guestbook-sample to be Available" available guestbook guestbook-sample default ||
	fail "the reconcile wrote no Available status"
kubectl get guestbook guestbook-sample -n default -o jsonpath='{.metadata.finalizers}' | grep -q 'webapp.example.com/finalizer' ||
	fail "the Guestbook has no finalizer"
metrics=$(curl -fsS "http://127.0.0.1:$metrics_a/metrics")
grep -q '^controller_runtime_reconcile_total{controller="guestbook"} [1-9]' <<<"$metrics" ||
	fail "/metrics counts no reconcile of guestbook: $metrics"

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

log_info "the webhook server: its certificate, and a renewed one without a restart"
wait_for 60 "the webhook server of manager a" bash -c "openssl s_client -connect 127.0.0.1:$webhooks_a </dev/null >/dev/null 2>&1"
[[ $(served "$webhooks_a") == "$(fingerprint "$work/certs-a/tls.crt")" ]] || fail "the webhook server does not serve its certificate"
old=$(served "$webhooks_a")
sleep 1.1 # a new modification time
certificate "$work/certs-a"
[[ $(served "$webhooks_a") == "$(fingerprint "$work/certs-a/tls.crt")" ]] || fail "the renewed certificate is not served"
[[ $(served "$webhooks_a") != "$old" ]] || fail "the webhook server still serves the old certificate"
wire_webhooks a # the API server trusts the renewed certificate (cert-manager's CA does that in a cluster)

log_info "manager b: waits while a holds the Lease"
start_manager b
sleep 6
[[ $(holder) == "$holder_a" ]] || fail "the Lease changed hands while a was running: $(holder)"
grep -q 'became the leader' "$work/b.log" && fail "two managers lead at once"
grep -q 'waiting to become the leader' "$work/b.log" || fail "manager b does not say it waits"

log_info "SIGTERM to manager a: it exits 0, and b takes the Lease over"
kill -TERM "$pid_a"
status=0
wait "$pid_a" || status=$?
[[ $status -eq 0 ]] || fail "manager a exited $status on SIGTERM"
wait_for 90 "manager b to take the Lease over" bash -c "grep -q 'became the leader' '$work/b.log'" ||
	fail "manager b did not take over"
[[ $(holder) != "$holder_a" ]] || fail "the Lease still names manager a"
wire_webhooks b

log_info "a cluster-scoped Tenant, reconciled by b"
kubectl apply -f config/samples/infra_v1alpha1_tenant.yaml
wait_for 60 "Tenant tenant-sample to be Available" available tenant tenant-sample || fail "the Tenant was not reconciled"

log_info "deleting the Guestbook runs the finalizer"
kubectl delete guestbook guestbook-sample -n default --wait=false
wait_for 60 "Guestbook guestbook-sample to be gone" gone guestbook guestbook-sample default ||
	fail "the Guestbook is still there: the finalizer did not run"
kubectl get events.events.k8s.io -n default -o jsonpath='{.items[*].reason}' | grep -q Deleting ||
	fail "no Deleting event was published"

kill -TERM "$pid_b"
status=0
wait "$pid_b" || status=$?
[[ $status -eq 0 ]] || fail "manager b exited $status on SIGTERM"
log_info "rust-live: ok"
