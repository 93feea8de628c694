#!/usr/bin/env bash
# `make test` of a generated project with only a Go module proxy (issue 12).
#
# Copies the `project` golden tree and uses nothing but its own Makefile for
# envtest: no link-envtest.sh, no KUBEBUILDER_ASSETS, no e2e control-plane
# cache. Where setup-envtest cannot download (no GitHub, as on opbuilder's CI
# machine) it checks that the failure names the way out; then it runs
# `make envtest-from-source` and `make test`, and fails when a test package or
# spec did not run. A second copy of the project must reuse the binaries built
# for the first (the cache is per Kubernetes version, shared by projects).
#
# controller-gen and kustomize are linked from the e2e tool cache
# (seed-tools.sh) only to save building them again; they have nothing to do
# with envtest.
#
# Usage: envtest-offline.sh
# Environment: XDG_CACHE_HOME (the generated script keeps its binaries in
# ${XDG_CACHE_HOME:-~/.cache}/opbuilder/envtest/<version>; delete it to time a
# first build).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

need_cmd go make
unset KUBEBUILDER_ASSETS
tree="$OPBUILDER_ROOT/e2e/testdata/project/tree"
work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-envtest-offline.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS

# check_test_log LOG: every package with envtest suites ran, and every spec of each.
check_test_log() {
	local log=$1 clean suites
	clean=$(sed -E 's/\x1b\[[0-9;]*m//g' "$log")
	for pkg in internal/controller internal/webhook/v1 internal/webhook/v1beta1; do
		grep -Eq "^ok[[:space:]]+example.com/guestbook/$pkg[[:space:]]" <<<"$clean" ||
			die "make test did not run package $pkg"
	done
	suites=$(grep -Ec '^Ran [0-9]+ of [0-9]+ Specs' <<<"$clean" || true)
	((suites >= 3)) || die "expected at least 3 ginkgo suites in the output, found $suites"
	if grep -E '^Ran [0-9]+ of [0-9]+ Specs' <<<"$clean" | awk '$2 != $4 { bad = 1 } END { exit !bad }'; then
		die "some specs did not run: $(grep -E '^Ran [0-9]+ of' <<<"$clean" | tr '\n' ' ')"
	fi
	if grep -Eq '[1-9][0-9]* (Skipped|Pending)|--- SKIP' <<<"$clean"; then
		die "make test skipped or left pending some tests: $(grep -E '[1-9][0-9]* (Skipped|Pending)|--- SKIP' <<<"$clean" | tr '\n' ' ')"
	fi
	log_info "make test: $suites suites, every spec ran, none skipped"
}

cp -r "$tree" "$work/first"
cd "$work/first"
log_info "go mod tidy"
go mod tidy
"$here/seed-tools.sh" "$work/first"
[[ ! -e bin/k8s ]] || die "the golden tree already holds bin/k8s"

log_info "make setup-envtest (expected to fail without GitHub)"
if make setup-envtest >"$work/setup.log" 2>&1; then
	log_warn "setup-envtest could download here; removing what it fetched so the from-source path is still what make test uses"
	rm -rf bin/k8s
else
	cat "$work/setup.log" >&2
	grep -q 'make envtest-from-source' "$work/setup.log" ||
		die "the failure of make setup-envtest does not point to make envtest-from-source"
	grep -q 'KUBEBUILDER_ASSETS=' "$work/setup.log" ||
		die "the failure of make setup-envtest does not mention KUBEBUILDER_ASSETS"
fi

log_info "make envtest-from-source"
t=$SECONDS
make envtest-from-source
build_time=$((SECONDS - t))
log_info "timing: make envtest-from-source (first project) $(fmt_duration "$build_time")"
store=(bin/k8s/*-"$(go env GOOS)-$(go env GOARCH)")
[[ ${#store[@]} -eq 1 && -x ${store[0]}/kube-apiserver && -x ${store[0]}/etcd ]] ||
	die "make envtest-from-source left no kube-apiserver and etcd in bin/k8s: $(ls -R bin/k8s 2>&1)"

log_info "make test (verbose, so skipped specs show)"
t=$SECONDS
# -v reaches go test through GOFLAGS; ginkgo then prints its spec counts. It would reach the
# `go vet` of the vet target too, and a go vet with other build flags computes its facts for every
# dependency again (1,200 runs of vet, about 40 s of CPU, where the golden trees' are in the
# cache). So the prerequisites of `make test` but setup-envtest run first without it, and the
# verbose `make test` takes them as made (`-o`): the same commands in the same order.
make manifests generate fmt vet 2>&1 | tee "$work/test.log"
((PIPESTATUS[0] == 0)) || die "make manifests generate fmt vet failed"
GOFLAGS="${GOFLAGS:+$GOFLAGS }-v" make test -o manifests -o generate -o fmt -o vet 2>&1 | tee -a "$work/test.log"
status=${PIPESTATUS[0]}
log_info "timing: make test $(fmt_duration $((SECONDS - t)))"
((status == 0)) || die "make test failed (exit $status)"
check_test_log "$work/test.log"

log_info "a second project reuses the binaries"
cp -r "$tree" "$work/second"
cd "$work/second"
go mod tidy
t=$SECONDS
make envtest-from-source 2>&1 | tee "$work/second.log"
((PIPESTATUS[0] == 0)) || die "make envtest-from-source failed in the second project"
log_info "timing: make envtest-from-source (second project) $(fmt_duration $((SECONDS - t)))"
grep -q 'reusing kube-apiserver and etcd' "$work/second.log" ||
	die "the second project built the control plane again instead of reusing it"
second_store=(bin/k8s/*-"$(go env GOOS)-$(go env GOARCH)")
cmp -s "${second_store[0]}/kube-apiserver" "$work/first/${store[0]}/kube-apiserver" ||
	die "the second project's kube-apiserver differs from the first's"

log_info "envtest-offline: ok in $(fmt_duration $((SECONDS - start)))"
