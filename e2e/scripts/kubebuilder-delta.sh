#!/usr/bin/env bash
# What a Kubebuilder release changes against the one opbuilder matches (versions.toml
# `e2e.kubebuilder`), and what opbuilder would have to change to match it. The first step of
# docs/releasing.md.
#
#   1. pins: the versions Kubebuilder's scaffolds write (controller-runtime and the k8s.io
#      libraries it requires, controller-tools, golangci-lint, kustomize, cert-manager, the go
#      directive), read from its sources, next to versions.toml's;
#   2. sources: Kubebuilder's plugin sources (templates and scaffolders under pkg/plugins) and
#      the rest of pkg/ added, removed or changed between the two releases: what to read;
#   3. output: the parity suite with VERSION as the oracle (Kubebuilder's testdata scripts and
#      opbuilder's golden scripts through both tools, compared semantically), its differences
#      counted by kind: file sets, PROJECT, CRDs, RBAC and webhook manifests, kustomize
#      objects, Go declarations, the Helm chart (the compare tool's keys: e2e/parity/main.go).
#
# Exit status 0 when versions.toml already has VERSION's pins and every output difference is
# in e2e/parity/allowlist.txt; 1 otherwise (the report says what is left).
#
# Usage: kubebuilder-delta.sh VERSION [SCENARIO...]   (scenarios as parity.sh names them)
# Environment: DELTA_KEEP=1 keeps the parity log. Needs go (module proxy), make, kubectl, cargo.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_cmd go make kubectl cargo diff

new=${1:?usage: kubebuilder-delta.sh VERSION [SCENARIO...]}
shift
[[ $new =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "VERSION must look like v4.16.0, not '$new'"
old=$(pin e2e.kubebuilder)
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src() { go mod download -json "sigs.k8s.io/kubebuilder/v4@$1" | awk -F'"' '$2 == "Dir" { print $4 }'; }
old_src=$(src "$old")
new_src=$(src "$new")
[[ -d $old_src && -d $new_src ]] || die "Kubebuilder $old or $new is not in the Go module cache"
todo=0

# kb_pin SRC NAME: the value of a `NAME = "..."` constant in Kubebuilder's sources.
kb_pin() {
	grep -rhoE "\\b$2\\s*=\\s*\"[^\"]+\"" "$1/pkg" | head -n 1 | sed 's/.*"\(.*\)"/\1/'
}
# k8s_libs CONTROLLER_RUNTIME: the k8s.io/api version that controller-runtime release requires.
k8s_libs() {
	local mod
	mod=$(go mod download -json "sigs.k8s.io/controller-runtime@$1" | awk -F'"' '$2 == "GoMod" { print $4 }')
	awk '$1 == "k8s.io/api" { print $2; exit }' "$mod"
}
go_directive() {
	awk '/^go 1\./ { print $2; exit }' "$1/pkg/plugins/golang/v4/scaffolds/internal/templates/gomod.go"
}

printf '\n== pins: Kubebuilder %s -> %s, and versions.toml\n' "$old" "$new"
printf '%-22s %-12s %-12s %-12s %s\n' "" "$old" "$new" "opbuilder" ""
row() { # NAME OLD NEW OURS
	local mark=""
	if [[ $3 != "$4" ]]; then
		mark="<- move versions.toml"
		todo=$((todo + 1))
	fi
	printf '%-22s %-12s %-12s %-12s %s\n' "$1" "$2" "$3" "$4" "$mark"
}
cr_old=$(kb_pin "$old_src" ControllerRuntimeVersion)
cr_new=$(kb_pin "$new_src" ControllerRuntimeVersion)
row controller-runtime "$cr_old" "$cr_new" "$(pin scaffold.controller_runtime)"
row "k8s.io libraries" "$(k8s_libs "$cr_old")" "$(k8s_libs "$cr_new")" "$(pin scaffold.k8s_libs)"
row controller-tools "$(kb_pin "$old_src" ControllerToolsVersion)" "$(kb_pin "$new_src" ControllerToolsVersion)" "$(pin scaffold.controller_tools)"
row golangci-lint "$(kb_pin "$old_src" GolangciLintVersion)" "$(kb_pin "$new_src" GolangciLintVersion)" "$(pin scaffold.golangci_lint)"
row kustomize "$(kb_pin "$old_src" KustomizeVersion)" "$(kb_pin "$new_src" KustomizeVersion)" "$(pin scaffold.kustomize)"
row cert-manager "$(kb_pin "$old_src" certmanagerVersion)" "$(kb_pin "$new_src" certmanagerVersion)" "$(pin scaffold.cert_manager)"
row "go directive" "$(go_directive "$old_src")" "$(go_directive "$new_src")" "$(pin scaffold.go_directive)"

printf '\n== sources: Kubebuilder %s -> %s under pkg/ (what to read and port in our own words)\n' "$old" "$new"
ob=$(basename "$old_src") nb=$(basename "$new_src")
# One line a path: `changed pkg/...`, `removed pkg/...` (only in the old release), `added pkg/...`.
changes=$(cd "$old_src/.." && diff -rq "$ob/pkg" "$nb/pkg" 2>/dev/null |
	sed -n -e "s|^Files $ob/\([^ ]*\) and .*|changed \1|p" \
		-e "s|^Only in $ob/\(.*\): \(.*\)|removed \1/\2|p" \
		-e "s|^Only in $nb/\(.*\): \(.*\)|added   \1/\2|p" | sort -k2 || true)
summarize() { # LABEL PATTERN
	printf '%-46s %4d\n' "$1" "$(grep -cE "$2" <<<"$changes" || true)"
}
summarize "changed files" '^changed '
summarize "added files or directories" '^added '
summarize "removed files or directories" '^removed '
for area in pkg/plugins/golang/v4 pkg/plugins/common/kustomize pkg/plugins/golang/deploy-image \
	pkg/plugins/optional/helm pkg/plugins/optional/grafana pkg/plugins/optional/autoupdate pkg/cli pkg/model pkg/config; do
	summarize "  under $area" " $area/"
done
[[ -z $changes ]] || sed 's/^/  /' <<<"$changes"

printf '\n== output: the parity suite with Kubebuilder %s as the oracle\n' "$new"
log=$(mktemp "${TMPDIR:-/tmp}/opbuilder-delta.XXXXXX")
[[ -n ${DELTA_KEEP:-} ]] || trap 'rm -f "$log"' EXIT
parity_rc=0
OPBUILDER_PARITY_KUBEBUILDER=$new "$scripts/parity.sh" "$@" >"$log" 2>&1 || parity_rc=$?
count() { # LABEL PATTERN (on the keys of DIFFERS lines)
	printf '%-46s %4d\n' "$1" "$(grep -E '^  DIFFERS ' "$log" | grep -cE "$2" || true)"
}
count "differences not allowed, all kinds" '.'
count "  file sets" 'DIFFERS +[^:]+: file only in'
count "  PROJECT" 'DIFFERS +[^:]+: PROJECT'
count "  CRDs (config/crd/bases)" 'DIFFERS +[^:]+: crd '
count "  RBAC and webhook manifests" 'DIFFERS +[^:]+: config/(rbac/role|webhook/manifests)\.yaml'
count "  kustomize objects" 'DIFFERS +[^:]+: kustomize '
count "  Go declarations" 'DIFFERS +[^:]+: go '
count "  Helm chart" 'DIFFERS +[^:]+: chart'
printf '%-46s %4d\n' "allowed differences" "$(grep -c '^  allowed ' "$log" || true)"
grep -E '^compare |both tools refuse|kubebuilder accepts, opbuilder refuses|opbuilder accepts, kubebuilder refuses|^parity: ' "$log" | sed 's/^/  /' || true
printf '\nThe differences one by one:\n'
grep -E -A1 '^  DIFFERS ' "$log" | grep -v '^--$' | sed 's/^  //' || true
[[ -n ${DELTA_KEEP:-} ]] && printf '\nparity log kept: %s\n' "$log"

if ((todo > 0 || parity_rc != 0)); then
	printf '\nkubebuilder-delta: %s pin(s) to move, parity %s: follow docs/releasing.md\n' "$todo" \
		"$([[ $parity_rc == 0 ]] && echo ok || echo "has unexplained differences")"
	exit 1
fi
printf '\nkubebuilder-delta: opbuilder matches Kubebuilder %s\n' "$new"
