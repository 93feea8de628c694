#!/usr/bin/env bash
# The `alpha generate` property over Kubebuilder's own scripts: for project-v4,
# project-v4-multigroup and project-v4-with-plugins (test/testdata/generate.sh of the pinned
# Kubebuilder, read as parity.sh reads it), opbuilder runs every line (lines listed in
# e2e/parity/unsupported.txt are skipped, as in parity.sh; post-steps are skipped so the tree is
# exactly what opbuilder scaffolded, before any user edit or generator), then
# `opbuilder alpha generate` scaffolds the project again from its PROJECT into a new directory,
# and the two trees must be equal file by file: same paths, same bytes.
#
# One known limit: PROJECT lists resources, not the order of the commands. alpha generate replays
# types with their first controller, then the named controllers, then the webhooks; a script that
# interleaves them (project-v4 adds Captain's second controller and webhooks before FirstMate)
# gets the same blocks in cmd/main.go (and test/e2e/e2e_test.go) in another order. ORDER_ONLY
# lists those files per scenario: there the lines are compared as sorted lists (same lines, any
# order); every other file must be byte-identical.
#
# The helm edit of project-v4-with-plugins needs `make build-installer`'s output: see run_op.
#
# The golden scripts have the same check in `cargo test` (e2e/generate.rs); the interop scenarios
# are not replayed: their trees hold lines Kubebuilder wrote, which opbuilder does not write.
#
# Usage: generate-parity.sh [SCENARIO...]   (default: the three)
# A scenario of parity.sh that is not one of the three (golden-*, interop-*, script-*, which
# `bash e2e/run.sh parity NAME...` passes to both scripts) is skipped with a note; a name that
# neither script knows is refused (exit 2) before anything is built.
# Environment: PARITY_KEEP=1 keeps the work directory and prints its path.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=parity-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/parity-lib.sh"
need_cmd go cargo

parity_dir="$OPBUILDER_ROOT/e2e/parity"
kb_version=$(pin e2e.kubebuilder)
kb_src=$(go mod download -json "sigs.k8s.io/kubebuilder/v4@$kb_version" | awk -F'"' '$2 == "Dir" { print $4 }')
[[ -r $kb_src/test/testdata/generate.sh ]] || die "kubebuilder source not found in the module cache ($kb_src)"

known=(project-v4 project-v4-multigroup project-v4-with-plugins)
declare -A ORDER_ONLY=(
	[project-v4]="cmd/main.go"
	[project-v4-multigroup]="cmd/main.go test/e2e/e2e_test.go"
	[project-v4-with-plugins]="cmd/main.go"
)
# What parity.sh compares besides: Kubebuilder's other scripts and this repository's scenarios.
others=" $(kubebuilder_scripts "$kb_src" | awk '/^### / { print $2 }' | xargs) $(parity_repo_scenarios | xargs) "

selected=()
for s in "${@:-${known[@]}}"; do
	case " ${known[*]} " in
	*" $s "*) selected+=("$s") ;;
	*)
		if [[ $others == *" $s "* ]]; then
			log_info "$s is compared by parity.sh; alpha generate is checked on Kubebuilder's scripts only: skipped"
		else
			log_error "unknown scenario '$s'; it replays ${known[*]} (for example: bash e2e/run.sh generate-parity project-v4)"
			exit 2
		fi
		;;
	esac
done
[[ ${#selected[@]} -gt 0 ]] || {
	echo "generate-parity: nothing selected"
	exit 0
}
op_bin=${OPBUILDER_BIN:-}
if [[ -z $op_bin ]]; then
	cargo build --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
	op_bin="$OPBUILDER_TARGET_DIR/debug/opbuilder"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-generate-parity.XXXXXX")
if [[ -n ${PARITY_KEEP:-} ]]; then
	log_info "keeping $work"
else
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/scenarios"
kubebuilder_scripts "$kb_src" | awk -v dir="$work/scenarios" '
	/^### / { f = dir "/" $2 ".script"; printf "" > f; next }
	{ print >> f }
'

# installer_from_copy DIR: write DIR/dist/install.yaml as `make build-installer` makes it, but in
# a throwaway copy of DIR (go mod tidy, controller-gen and kustomize change many files there), so
# DIR keeps exactly what opbuilder scaffolded.
installer_from_copy() {
	local dir=$1 copy
	copy="$work/installer/$(basename "$dir")"
	rm -rf "$copy" && mkdir -p "$(dirname "$copy")"
	cp -R "$dir" "$copy"
	"$OPBUILDER_ROOT/e2e/scripts/seed-tools.sh" "$copy" &&
		(cd "$copy" && go mod tidy && make build-installer) &&
		mkdir -p "$dir/dist" && cp "$copy/dist/install.yaml" "$dir/dist/install.yaml"
}

# run_op DIR LINE: one recorded `kb ARGS` line through opbuilder, without post-steps. The helm
# edit converts `make build-installer`'s output: that file is made in a copy first (above) and the
# edit told not to run make, which is what alpha generate does too.
run_op() {
	local dir=$1 line=$2
	local -a args
	eval "args=(${line#kb })"
	case "${args[0]}" in
	init | create) args+=(--skip-post-steps) ;;
	edit)
		if [[ " ${args[*]} " == *" --plugins=helm.kubebuilder.io/v2-alpha "* ]]; then
			installer_from_copy "$dir" || return 1
			args+=(--skip-build-installer)
		fi
		;;
	esac
	(cd "$dir" && "$op_bin" "${args[@]}")
}

# same_tree SCENARIO WANT GOT: compare file by file; prints each difference.
same_tree() {
	local s=$1 want=$2 got=$3 rc=0 f
	local order_only=" ${ORDER_ONLY[$s]:-} "
	while IFS= read -r f; do
		if [[ ! -f $want/$f ]]; then
			echo "  only in the regenerated tree: $f"
			rc=1
		elif [[ ! -f $got/$f ]]; then
			echo "  missing from the regenerated tree: $f"
			rc=1
		elif ! cmp -s "$want/$f" "$got/$f"; then
			if [[ $order_only == *" $f "* ]] && cmp -s <(sort "$want/$f") <(sort "$got/$f"); then
				continue
			fi
			echo "  differs: $f"
			diff -u "$want/$f" "$got/$f" | head -n 20 | sed 's/^/      /'
			rc=1
		fi
	done < <({
		(cd "$want" && find . -type f)
		(cd "$got" && find . -type f)
	} | sed 's|^\./||' | sort -u)
	return $rc
}

failed=()
passed=0
for s in "${selected[@]}"; do
	script="$work/scenarios/$s.script"
	[[ -f $script ]] || die "Kubebuilder's generate.sh has no scenario $s"
	start=$SECONDS
	log_info "generate-parity $s"
	dir="$work/op/$s/$s" out="$work/gen/$s/$s"
	mkdir -p "$dir" "$(dirname "$out")"
	ok=1
	while IFS= read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		if [[ $line == gomodinit\ * ]]; then
			(cd "$dir" && go mod init "${line#gomodinit }" >/dev/null 2>&1)
			continue
		fi
		if is_unsupported "$parity_dir/unsupported.txt" "$s" "$line"; then
			log_info "  skip (unsupported.txt): $line"
			continue
		fi
		if ! run_op "$dir" "$line" >"$work/$s.log" 2>&1; then
			log_error "  opbuilder refuses: $line"
			tail -n 5 "$work/$s.log" >&2
			ok=0
		fi
	done <"$script"
	if ! "$op_bin" alpha generate --input-dir "$dir" --output-dir "$out" >"$work/$s.gen.log" 2>&1; then
		log_error "  alpha generate failed"
		tail -n 10 "$work/$s.gen.log" >&2
		ok=0
	elif ! same_tree "$s" "$dir" "$out" >&2; then
		log_error "  alpha generate gave another tree (above)"
		ok=0
	fi
	if ((ok)); then
		passed=$((passed + 1))
		log_info "generate-parity $s: ok in $(fmt_duration $((SECONDS - start)))"
	else
		failed+=("$s")
		log_error "generate-parity $s: FAILED after $(fmt_duration $((SECONDS - start)))"
	fi
done
echo "generate-parity: ${passed} passed, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]] || die "alpha generate differs from the scripted project in: ${failed[*]}"
