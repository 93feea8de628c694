#!/usr/bin/env bash
# The telemetry of the Rust layout (telemetry.opbuilder.io/v1-alpha), in a copy of the golden tree
# e2e/testdata/rust-telemetry (or PROJECT_DIR), on the project's control plane (control-plane.sh)
# with a real OpenTelemetry Collector (otelcol.sh): `make install`, then `make run` with
# OTEL_EXPORTER_OTLP_ENDPOINT at the collector and the metrics served on a free port (HTTPS,
# tokens reviewed by the API server). Then:
#   - /debug/loglevel on the metrics server refuses a request without a token (401) and a token
#     not allowed (403), reads the level ({"level":"info"}) for a token bound to the ClusterRole
#     loglevel-editor, and sets it to debug for that token (PUT {"level":"debug"});
#   - a Guestbook created is defaulted by the webhook and reconciled; the collector receives the
#     span `webhook /mutate-...` (server, status code 200), the span `reconcile webapp-guestbook`
#     with its controller, namespace, name and `reconcile.result` success, and under it a client
#     span of kube's for an API call (the status patch); the API server traces its requests to
#     the collector as well (OPBUILDER_APISERVER_TRACING), and the webhook span is the child of
#     its span of the call (the traceparent it sends);
#   - the reconcile's trace id is on a log line of make run (the debug line "reconciled"), and
#     an exemplar of controller_runtime_reconcile_time_seconds in a scrape of /metrics;
#   - SIGTERM: make run stops;
#   - make run again with the collector's https:// port, which asks for a client certificate:
#     with OTEL_EXPORTER_OTLP_CERTIFICATE (the CA of the collector's certificate),
#     OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY the reconcile's span
#     reaches the collector over mutual TLS, and without the client certificate none does.
# Needs jq, openssl and python3 with PyYAML.
#
# Usage: rust-telemetry.sh [PROJECT_DIR]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd cargo make kubectl curl jq openssl
need_pyyaml

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-rust-telemetry.XXXXXX")
cp_dir="$work/plane"
otel="$work/otel"
log="$work/make-run.log"
cleanup() {
	make_run_stop KILL || true
	"$scripts/otelcol.sh" stop "$otel" || true
	"$scripts/control-plane.sh" stop "$cp_dir" || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() {
	tail -n 40 "$log" >&2 || true
	[[ ! -f $otel/traces.jsonl ]] || "$scripts/otelcol.sh" spans "$otel" >&2 || true
	die "rust-telemetry: $*"
}

dir="$work/guestbook"
cp -r "${1:-$OPBUILDER_ROOT/e2e/testdata/rust-telemetry/tree}" "$dir"
cd "$dir"
"$scripts/seed-tools.sh" "$dir"
use_rust_target

"$scripts/otelcol.sh" start "$otel"
# The API server traces its requests to the collector too (OTLP/gRPC), and so sends the webhooks
# a traceparent.
grpc=$(cat "$otel/grpc-endpoint")
OPBUILDER_APISERVER_TRACING=${grpc#http://} "$scripts/control-plane.sh" start "$cp_dir"
eval "$("$scripts/control-plane.sh" env "$cp_dir")"

log_info "make install; the RBAC of config/default (metrics-reader, loglevel-editor)"
make install >/dev/null
kubectl kustomize config/default >"$work/default.yaml"
manager_identity "$work/default.yaml"
kubectl get clusterrole guestbook-loglevel-editor >/dev/null || fail "config/default has no ClusterRole loglevel-editor"
kubectl create serviceaccount operator -n default >/dev/null
kubectl create serviceaccount stranger -n default >/dev/null
kubectl create clusterrolebinding operator-loglevel --clusterrole=guestbook-loglevel-editor --serviceaccount=default:operator >/dev/null
kubectl create clusterrolebinding operator-metrics --clusterrole=guestbook-metrics-reader --serviceaccount=default:operator >/dev/null
operator=$(kubectl create token operator -n default)
stranger=$(kubectl create token stranger -n default)

metrics=$(free_port)
# Batches every 200 ms (the SDK's default is 5 s).
OTEL_EXPORTER_OTLP_ENDPOINT=$(cat "$otel/endpoint") OTEL_BSP_SCHEDULE_DELAY=200 \
	MAKE_RUN_ARGS="--metrics-bind-address=127.0.0.1:$metrics" make_run_start "$log" ||
	fail "make run did not serve its webhooks"
grep -q "exporting traces over OTLP" "$log" || fail "the manager did not say it exports traces"

url="https://127.0.0.1:$metrics/debug/loglevel"
code() { curl -sk -o "$work/body" -w '%{http_code}' "$@"; }
[[ $(code "$url") == 401 ]] || fail "/debug/loglevel without a token: $(cat "$work/body")"
[[ $(code -H "Authorization: Bearer $stranger" "$url") == 403 ]] ||
	fail "/debug/loglevel for a token not allowed: $(cat "$work/body")"
[[ $(code -H "Authorization: Bearer $operator" "$url") == 200 ]] ||
	fail "/debug/loglevel GET for loglevel-editor: $(cat "$work/body")"
[[ $(jq -r .level "$work/body") == info ]] || fail "the log level read: $(cat "$work/body")"
[[ $(code -X PUT -d '{"level":"debug"}' -H "Authorization: Bearer $stranger" "$url") == 403 ]] ||
	fail "/debug/loglevel PUT for a token not allowed: $(cat "$work/body")"
[[ $(code -X PUT -d '{"level":"debug"}' -H "Authorization: Bearer $operator" "$url") == 200 ]] ||
	fail "/debug/loglevel PUT for loglevel-editor: $(cat "$work/body")"
[[ $(code -H "Authorization: Bearer $operator" "$url") == 200 && $(jq -r .level "$work/body") == debug ]] ||
	fail "the log level after the PUT: $(cat "$work/body")"
grep -q "log level changed" "$log" || fail "the manager did not say the log level changed"
log_info "/debug/loglevel: 401 without a token, 403 for a stranger, read and set to debug by loglevel-editor"

printf 'apiVersion: webapp.example.com/v1\nkind: Guestbook\nmetadata:\n  name: traced\n  namespace: default\nspec: {}\n' |
	kubectl apply -f - >/dev/null
[[ $(kubectl get guestbook traced -n default -o jsonpath='{.spec.foo}') == default ]] ||
	fail "the Guestbook was not defaulted by the webhook"
reconciled() { [[ $(kubectl get guestbook traced -n default -o jsonpath='{.status.conditions[0].status}') == True ]]; }
wait_for 60 "the Guestbook to be reconciled" reconciled || fail "the Guestbook was not reconciled"

spans() { "$scripts/otelcol.sh" spans "$otel"; }
# The span of the Guestbook's reconcile that applied its status: an API call under it.
reconcile_span() {
	spans | jq -cs '[.[] | select(.kind == 3) | .parentSpanId] as $parents
		| .[] | select(.name == "reconcile webapp-guestbook" and .attributes["k8s.object.name"] == "traced"
		and .attributes["reconcile.result"] == "success" and (.spanId as $id | $parents | index($id)))' | head -n 1
}
exported() { [[ -n $(reconcile_span) ]]; }
wait_for 30 "the reconcile's span at the collector" exported ||
	fail "no span 'reconcile webapp-guestbook' of the Guestbook traced with result success"
span=$(reconcile_span)
jq -e '.attributes.controller == "webapp-guestbook" and .attributes["k8s.namespace.name"] == "default"
	and .service == "guestbook"' <<<"$span" >/dev/null || fail "the reconcile span's attributes: $span"
trace=$(jq -r .traceId <<<"$span")
id=$(jq -r .spanId <<<"$span")
[[ $trace =~ ^[0-9a-f]{32}$ ]] || fail "the reconcile span's trace id: $trace"
call=$(spans | jq -c --arg id "$id" 'select(.parentSpanId == $id and .kind == 3 and .traceId == "'"$trace"'")' | head -n 1)
[[ -n $call ]] || fail "no client span (an API call) under the reconcile span $id"
log_info "reconcile span: $(jq -c '{name, attributes}' <<<"$span"), with the API call $(jq -c '{name, attributes}' <<<"$call") under it"
webhook=$(spans | jq -c 'select(.name == "webhook /mutate-webapp-example-com-v1-guestbook")' | tail -n 1)
[[ -n $webhook ]] || fail "no span of the defaulting webhook"
jq -e '.kind == 2 and .attributes["http.response.status_code"] == 200
	and .attributes["webhook.path"] == "/mutate-webapp-example-com-v1-guestbook"' <<<"$webhook" >/dev/null ||
	fail "the webhook span: $webhook"
log_info "webhook span: $(jq -c '{name, kind, attributes}' <<<"$webhook")"
# Its parent: the API server's span of the call, in the same trace (the traceparent it sent).
parent=$(jq -r .parentSpanId <<<"$webhook")
[[ -n $parent ]] || fail "the webhook span has no parent: the API server's traceparent was not read: $webhook"
caller() { spans | jq -c --arg id "$parent" 'select(.spanId == $id)' | head -n 1; }
called() { [[ -n $(caller) ]]; }
wait_for 30 "the API server's span that called the webhook" called ||
	fail "no span $parent at the collector, the parent of the webhook span $webhook"
jq -e --arg trace "$(jq -r .traceId <<<"$webhook")" '.service == "apiserver" and .traceId == $trace' <<<"$(caller)" >/dev/null ||
	fail "the webhook span's parent is not the API server's, in its trace: $(caller)"
log_info "the webhook span's parent: $(jq -c '{service, name, kind}' <<<"$(caller)")"

grep "trace_id=$trace" "$log" | grep -q reconciled || fail "no log line of the reconcile with trace_id=$trace"
[[ $(code -H "Authorization: Bearer $operator" "https://127.0.0.1:$metrics/metrics") == 200 ]] ||
	fail "/metrics for the operator: $(cat "$work/body")"
grep -E '^controller_runtime_reconcile_time_seconds_bucket\{.*controller="webapp-guestbook".*\} [0-9]+ # \{trace_id="[0-9a-f]{32}"\} ' \
	"$work/body" >"$work/exemplars" || fail "no exemplar on controller_runtime_reconcile_time_seconds: $(grep reconcile_time "$work/body")"
exemplar=$(sed -n 's/.*trace_id="\([0-9a-f]*\)".*/\1/p' "$work/exemplars" | head -n 1)
# The span of the reconcile the exemplar names may still be on its way (batches every 200 ms).
# (jq -e over a stream says only whether the last input gave a value: the match is counted.)
exemplar_traced() { spans | jq -c --arg t "$exemplar" 'select(.traceId == $t and (.name | startswith("reconcile ")))' | grep -q .; }
wait_for 15 "the exemplar's trace at the collector" exemplar_traced ||
	fail "the exemplar's trace id $exemplar is no reconcile's trace at the collector"
log_info "trace id $trace on the reconcile's log line; exemplar $(head -n 1 "$work/exemplars")"

make_run_stop TERM || fail "make run did not stop"

log_info "an https:// collector that asks for the client's certificate: OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY"
tls=$otel/tls
log="$work/make-run-tls.log"
OTEL_EXPORTER_OTLP_ENDPOINT=$(cat "$otel/tls-endpoint") OTEL_EXPORTER_OTLP_CERTIFICATE=$tls/ca.crt \
	OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=$tls/client.crt OTEL_EXPORTER_OTLP_CLIENT_KEY=$tls/client.key \
	OTEL_SERVICE_NAME=guestbook-tls OTEL_BSP_SCHEDULE_DELAY=200 \
	MAKE_RUN_ARGS="--metrics-bind-address=127.0.0.1:$metrics" make_run_start "$log" ||
	fail "make run with the TLS settings did not serve its webhooks"
# The controller's first list reconciles the Guestbook again: its span comes over TLS.
tls_span() {
	spans | jq -c 'select(.service == "guestbook-tls" and .name == "reconcile webapp-guestbook"
		and .attributes["k8s.object.name"] == "traced")' | head -n 1
}
exported_tls() { [[ -n $(tls_span) ]]; }
wait_for 30 "the reconcile's span at the collector's TLS port" exported_tls ||
	fail "no span of the service guestbook-tls reached the collector over mutual TLS"
log_info "over mutual TLS: $(jq -c '{service, name, attributes}' <<<"$(tls_span)")"
make_run_stop TERM || fail "make run did not stop"
# Not vacuous: without the client certificate the same port takes nothing.
log="$work/make-run-no-client.log"
OTEL_EXPORTER_OTLP_ENDPOINT=$(cat "$otel/tls-endpoint") OTEL_EXPORTER_OTLP_CERTIFICATE=$tls/ca.crt \
	OTEL_SERVICE_NAME=guestbook-no-client OTEL_BSP_SCHEDULE_DELAY=200 \
	MAKE_RUN_ARGS="--metrics-bind-address=127.0.0.1:$metrics" make_run_start "$log" ||
	fail "make run without a client certificate did not serve its webhooks"
sleep 5
[[ -z $(spans | jq -c 'select(.service == "guestbook-no-client")' | head -n 1) ]] ||
	fail "a span reached the collector's mutual-TLS port without a client certificate"
make_run_stop TERM || fail "make run did not stop"
log_info "without the client certificate, no span got through in 5 s"
log_info "rust-telemetry: ok"
