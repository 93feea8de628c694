#!/usr/bin/env bash
# Run verify-project.sh on a copy of every golden tree under e2e/testdata (or the named ones).
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
failed=()
passed=0
for s in "${scenarios[@]}"; do
	src="$OPBUILDER_ROOT/e2e/testdata/$s/tree"
	[[ -d $src ]] || die "no golden tree for scenario $s"
	cp -r "$src" "$work/$s"
	start=$SECONDS
	if "$(dirname "${BASH_SOURCE[0]}")/verify-project.sh" "${flags[@]}" "$work/$s"; then
		passed=$((passed + 1))
		log_info "golden $s: ok in $(fmt_duration $((SECONDS - start)))"
	else
		failed+=("$s")
		log_error "golden $s: FAILED after $(fmt_duration $((SECONDS - start)))"
	fi
done
echo "golden: ${passed} passed, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]] || die "failed golden trees: ${failed[*]}"
