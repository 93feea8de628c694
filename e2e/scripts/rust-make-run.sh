#!/usr/bin/env bash
# The Rust layout's webhooks under `make run` (issue 48), in a project of the golden tree
# e2e/testdata/rust that is built already, on the control plane of KUBECONFIG (rust-live.sh runs
# it at its end, in its project). After `make install`, `make run` (in a session of its own, on
# free ports: make_run_start in lib.sh) serves the webhooks from this machine and the API server
# calls them: the CRD's conversion points at https://127.0.0.1:<port>/convert, a Guestbook is
# defaulted (spec.foo), one with an empty foo refused with the handler's message, a v1 Guestbook
# read as v2 and a v2 one written and read as v1 (the conversion), a ConfigMap of default
# labelled. SIGTERM to the session: no configuration labelled opbuilder.io/make-run is left and
# the CRD converts through the webhook Service again. SIGKILL: the configurations stay, with
# failurePolicy Ignore (an empty foo is admitted at once); `make install` puts the CRD back; the
# next `make run` deletes what the killed one left, and SIGHUP (its terminal closed) removes its
# own.
#
# Usage: rust-make-run.sh PROJECT_DIR
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -n ${1:-} && -n ${KUBECONFIG:-} ]] || die "usage: KUBECONFIG=... $0 PROJECT_DIR"
cd "$1"
use_rust_target
log=$(mktemp "${TMPDIR:-/tmp}/opbuilder-rust-make-run.XXXXXX")
trap 'make_run_stop KILL || true; rm -f "$log"' EXIT
fail() {
	tail -n 30 "$log" >&2
	die "$*"
}
crd=guestbooks.webapp.example.com
configurations() {
	kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -l opbuilder.io/make-run -o name
}
conversion() {
	kubectl get crd "$crd" -o 'jsonpath={.spec.conversion.webhook.clientConfig.url}{.spec.conversion.webhook.clientConfig.service.name}'
}
guestbook() { # VERSION NAME [FOO]
	printf 'apiVersion: webapp.example.com/%s\nkind: Guestbook\nmetadata:\n  name: %s\n  namespace: default\n' "$1" "$2"
	if (($# > 2)); then printf 'spec:\n  foo: "%s"\n' "$3"; else printf 'spec: {}\n'; fi
}
foo() { kubectl get "guestbooks.$1.webapp.example.com" "$2" -n default -o jsonpath='{.spec.foo}'; }

log_info "make install; make run serves the webhooks from this machine"
make install >/dev/null
make_run_start "$log" || fail "make run did not serve its webhooks"
[[ $(conversion) == "https://127.0.0.1:$MAKE_RUN_WEBHOOK_PORT/convert" ]] ||
	fail "the CRD does not convert through make run: $(conversion)"
guestbook v1 run-defaulted | kubectl apply -f - >/dev/null
[[ $(foo v1 run-defaulted) == default ]] || fail "a Guestbook was not defaulted under make run"
if refused=$(guestbook v1 run-invalid "" | kubectl apply -f - 2>&1); then
	fail "a Guestbook with an empty foo was admitted under make run"
fi
[[ $refused == *'spec.foo: Invalid value: "": must not be empty'* ]] ||
	fail "the refusal under make run is not the handler's: $refused"
[[ $(kubectl get guestbooks.v2.webapp.example.com run-defaulted -n default -o 'jsonpath={.apiVersion} {.spec.foo}') == "webapp.example.com/v2 default" ]] ||
	fail "the Guestbook was not read as v2 under make run"
guestbook v2 run-v2 written-as-v2 | kubectl apply -f - >/dev/null
[[ $(foo v1 run-v2) == written-as-v2 ]] || fail "a Guestbook written as v2 reads differently as v1"
kubectl create configmap run-probe -n default --dry-run=client -o yaml | kubectl apply -f - >/dev/null
[[ $(kubectl get configmap run-probe -n default -o 'jsonpath={.metadata.labels.guestbook/defaulted}') == true ]] ||
	fail "a ConfigMap was not defaulted under make run"
log_info "defaulting, validation and conversion called by the API server under make run"

make_run_stop TERM || fail "make run did not stop"
grep -q "removed the webhooks of make run from the cluster" "$log" || fail "make run did not say it removed its webhooks"
[[ -z $(configurations) ]] || fail "a stopped make run left $(configurations)"
[[ $(conversion) == webhook-service ]] || fail "the CRD's conversion after make run: $(conversion)"
log_info "stopped: no configuration left, the CRD's conversion put back"

make_run_start "$log" || fail "make run did not serve its webhooks"
make_run_stop KILL || true
[[ -n $(configurations) ]] || fail "a killed make run left no configuration: this check proves nothing"
policies=$(kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -l opbuilder.io/make-run \
	-o 'jsonpath={.items[*].webhooks[*].failurePolicy}')
[[ $policies =~ ^Ignore( Ignore)*$ ]] || fail "the failure policies a killed make run left: $policies"
guestbook v1 run-unchecked "" | kubectl apply -f - >/dev/null ||
	fail "the webhooks a killed make run left block the Guestbooks' writes"
make install >/dev/null || fail "make install after a killed make run"
[[ $(conversion) == webhook-service ]] || fail "the CRD's conversion after make install: $(conversion)"
log_info "killed: its webhooks fail open, make install puts the CRD back"

make_run_start "$log" || fail "make run did not serve its webhooks"
grep -q "deleted a webhook configuration that a killed make run left" "$log" ||
	fail "the next make run did not delete what the killed one left"
# The manager of the session (cargo runs it as target/debug/guestbook), as a closed terminal.
pkill -HUP -s "$MAKE_RUN_PGID" -f "target/debug/guestbook" || fail "no manager of make run to hang up"
wait_for 30 "the manager to remove its webhooks on SIGHUP" \
	grep -q "removed the webhooks of make run from the cluster" "$log" || fail "SIGHUP did not remove the webhooks"
make_run_stop TERM || fail "make run did not stop"
grep -q "make run was hung up (SIGHUP)" "$log" || fail "the manager did not see the hang-up"
[[ -z $(configurations) ]] || fail "a make run hung up left $(configurations)"
log_info "rust-make-run: ok"
