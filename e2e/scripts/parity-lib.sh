# shellcheck shell=bash
# Kubebuilder's own test scripts as scenarios, and the list of lines opbuilder does not run yet,
# shared by parity.sh and generate-parity.sh. Source it after lib.sh.

# kubebuilder_scripts KB_SRC: print Kubebuilder's test/testdata/generate.sh (from its module
# directory KB_SRC) as scenarios: `### NAME`, `gomodinit MODULE`, `kb ARGS...` (shell-quoted). The
# script's own function runs with every external command stubbed and `$kb` recording its
# arguments, so its conditions and quoting are Kubebuilder's.
kubebuilder_scripts() {
	local body
	body=$(sed -e '/^source /d' -e '/^build_kb$/d' "$1/test/testdata/generate.sh")
	(
		header_text() { :; }
		pushd() { :; }
		popd() { :; }
		mkdir() { :; }
		rm() { :; }
		make() { :; }
		go() { if [[ "$1 $2" == "mod init" ]]; then printf 'gomodinit %q\n' "$3"; fi; }
		record() {
			printf 'kb'
			printf ' %q' "$@"
			printf '\n'
		}
		# shellcheck disable=SC2034 # used by the evaluated script
		kb=record
		eval "$(printf '%s\n' "$body" | sed -e '/^scaffold_test_project /d' -e 's/^function scaffold_test_project {/function kb_scaffold {/')"
		scaffold_test_project() {
			printf '### %s\n' "$1"
			kb_scaffold "$@"
		}
		eval "$(printf '%s\n' "$body" | sed -n '/^scaffold_test_project /p')"
	)
}

# parity_repo_scenarios: the names of the scenarios parity.sh makes from this repository, one a
# line: golden-<tree> (e2e/testdata/<tree>/commands), interop-<name> and script-<name>
# (e2e/parity/interop/ and e2e/parity/scripts/, <name>.commands).
parity_repo_scenarios() {
	local f
	for f in "$OPBUILDER_ROOT"/e2e/testdata/*/commands; do
		[[ -f $f ]] && echo "golden-$(basename "$(dirname "$f")")"
	done
	for f in "$OPBUILDER_ROOT"/e2e/parity/interop/*.commands; do
		[[ -f $f ]] && echo "interop-$(basename "$f" .commands)"
	done
	for f in "$OPBUILDER_ROOT"/e2e/parity/scripts/*.commands; do
		[[ -f $f ]] && echo "script-$(basename "$f" .commands)"
	done
	return 0
}

# is_unsupported UNSUPPORTED_FILE SCENARIO LINE: whether e2e/parity/unsupported.txt
# (`SCENARIO-GLOB | COMMAND-GLOB | reason`) lists the line; such a line is skipped.
is_unsupported() {
	local file=$1 scenario=$2 line=$3 sg cg
	while IFS='|' read -r sg cg _; do
		sg=$(echo "$sg" | xargs)
		cg=$(echo "$cg" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
		[[ -z $sg || $sg == \#* ]] && continue
		# shellcheck disable=SC2053 # glob match on purpose
		if [[ $scenario == $sg && $line == $cg ]]; then
			return 0
		fi
	done <"$file"
	return 1
}
