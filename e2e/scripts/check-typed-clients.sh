#!/usr/bin/env bash
# Checks of a project with the typed-clients plugin, after `make generate` (verify-project.sh
# runs this when the Makefile has verify-client): the generated clients compile and are
# current, and `make verify-client` fails once an API type changes without regenerating.
# OPBUILDER_SKIP_CLIENT_STALE_CHECK=REASON leaves that last check (the stale check) out and logs
# the reason (check-golden.sh sets it from e2e/testdata/<tree>/client-stale-check-skip).
#
# Usage: check-typed-clients.sh PROJECT_DIR
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -eq 1 && -d $1 ]] || die "usage: $0 PROJECT_DIR"
cd "$1"
name=$(basename "$PWD")
step() { log_info "[$name] $*"; }

# `make generate` ran generate-client already: with nothing changed since, it must do nothing.
step "make generate-client: nothing changed since make generate, so nothing to do"
out=$(make generate-client 2>&1)
grep -q 'pkg/generated is up to date: nothing changed' <<<"$out" ||
	die "[$name] make generate-client regenerated an unchanged project: $(tail -n 5 <<<"$out")"
step "make verify-client"
make verify-client
[[ -f pkg/generated/clientset/versioned/clientset.go ]] || die "[$name] no clientset in pkg/generated"

step "go build ./pkg/generated/... (clientset, listers, informers, apply configurations)"
go build ./pkg/generated/...

if [[ -n ${OPBUILDER_SKIP_CLIENT_STALE_CHECK:-} ]]; then
	step "stale check (make verify-client after a field is added): skipped ($OPBUILDER_SKIP_CLIENT_STALE_CHECK)"
	log_info "[$name] typed clients: current and compiled (stale check skipped)"
	exit 0
fi
# A new field in a Spec: the apply configurations no longer match.
types=$(grep -rlx --include='*_types.go' '// +genclient' api | LC_ALL=C sort | head -n 1)
[[ -n $types ]] || die "[$name] no +genclient type under api/"
kind=$(sed -n 's/^type \([A-Za-z0-9]*\)Spec struct {$/\1/p' "$types" | head -n 1)
[[ -n $kind ]] || die "[$name] no Spec struct in $types"
step "make verify-client must fail after a field is added to ${kind}Spec ($types)"
cp "$types" "$types.orig"
sed -i "s/^type ${kind}Spec struct {\$/&\n\tStaleCheck string \`json:\"staleCheck,omitempty\"\`/" "$types"
out=$(make verify-client 2>&1) && {
	mv "$types.orig" "$types"
	die "[$name] make verify-client passed with a changed $types"
}
grep -q 'pkg/generated is out of date' <<<"$out" || die "[$name] make verify-client failed for another reason: $(tail -n 5 <<<"$out")"
grep -q 'WithStaleCheck' <<<"$out" || die "[$name] the difference does not show the new field: $(tail -n 5 <<<"$out")"
# The changed type is an input: generate-client must regenerate, not say it is up to date.
step "make generate-client must regenerate after the change"
make generate-client >/dev/null
grep -rq 'WithStaleCheck' pkg/generated/applyconfiguration || die "[$name] make generate-client did not regenerate after $types changed"
mv "$types.orig" "$types"
make generate-client verify-client >/dev/null
log_info "[$name] typed clients: current, compiled, and a stale tree is caught"
