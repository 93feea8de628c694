#!/usr/bin/env bash
# Run verify-project.sh on a copy of every golden tree under e2e/testdata (or the named ones).
#
# A check that another tree covers is left out of a tree by data, never by its name in a script:
#   e2e/testdata/<tree>/lint-skip                  no `make lint` (OPBUILDER_SKIP_LINT)
#   e2e/testdata/<tree>/client-stale-check-skip    no stale check of the typed clients
#                                                  (OPBUILDER_SKIP_CLIENT_STALE_CHECK)
# Each file holds the reason, which verify-project.sh and check-typed-clients.sh print in the
# log where the check would have run. docs/testing.md ("Checks left out of some golden trees")
# says which trees and why.
#
# Usage: check-golden.sh [--no-test] [SCENARIO...]
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

flags=()
if [[ ${1:-} == --no-test ]]; then
	flags=(--no-test)
	shift
fi
scenarios=("$@")
if [[ ${#scenarios[@]} -eq 0 ]]; then
	for t in "$OPBUILDER_ROOT"/e2e/testdata/*/tree; do
		scenarios+=("$(basename "$(dirname "$t")")")
	done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT
# One golangci-lint cache for the trees of this run (see verify-project.sh); e2e/run.sh gives
# its golden jobs one for the whole run.
export OPBUILDER_LINT_CACHE="${OPBUILDER_LINT_CACHE:-$work/.golangci-cache}"
# skip_reason FILE: the reason FILE holds (its lines joined), nothing when there is no FILE.
skip_reason() {
	[[ -f $1 ]] || return 0
	local reason
	reason=$(tr -s '\n' ' ' <"$1" | sed 's/^ *//; s/ *$//')
	[[ -n $reason ]] || die "$1 is empty: write why the check is left out of this tree"
	printf '%s\n' "$reason"
}
failed=()
passed=0
for s in "${scenarios[@]}"; do
	src="$OPBUILDER_ROOT/e2e/testdata/$s/tree"
	[[ -d $src ]] || die "no golden tree for scenario $s"
	cp -r "$src" "$work/$s"
	skip_lint=$(skip_reason "$OPBUILDER_ROOT/e2e/testdata/$s/lint-skip")
	skip_stale=$(skip_reason "$OPBUILDER_ROOT/e2e/testdata/$s/client-stale-check-skip")
	start=$SECONDS
	if OPBUILDER_SKIP_LINT=$skip_lint OPBUILDER_SKIP_CLIENT_STALE_CHECK=$skip_stale \
		"$(dirname "${BASH_SOURCE[0]}")/verify-project.sh" "${flags[@]}" "$work/$s"; then
		passed=$((passed + 1))
		log_info "golden $s: ok in $(fmt_duration $((SECONDS - start)))"
	else
		failed+=("$s")
		log_error "golden $s: FAILED after $(fmt_duration $((SECONDS - start)))"
	fi
done
echo "golden: ${passed} passed, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]] || die "failed golden trees: ${failed[*]}"
