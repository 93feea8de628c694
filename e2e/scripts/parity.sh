#!/usr/bin/env bash
# The differential parity suite: Kubebuilder ([e2e] kubebuilder of versions.toml) is the oracle.
#
# Every scenario is a list of commands run through both tools, each in its own directory with the
# same name (so derived names agree), after `go mod init` with the same module path:
#   - the three projects of Kubebuilder's own `test/testdata/generate.sh` (project-v4,
#     project-v4-multigroup, project-v4-with-plugins), read at test time from the kubebuilder
#     module in the Go module cache, by running that script's function with its commands recorded
#     instead of executed;
#   - opbuilder's golden scripts (e2e/testdata/*/commands), translated for kubebuilder;
#   - users' own scripts (e2e/parity/scripts/*.commands, scenarios script-*): every line through
#     both tools;
#   - interop scenarios (e2e/parity/interop/*.commands): lines prefixed `kb:` or `op:` run through
#     that tool only, in a project the other tool started. They are compared against the same
#     script run by kubebuilder alone.
# A script line `opmake TARGET...` names make targets the second tree (opbuilder's, or the mixed one
# of an interop scenario) must pass after the comparison, e.g. `opmake build test`.
# A line `extplugins` runs the scenario's commands with EXTERNAL_PLUGINS_PATH set, for both tools,
# to a plugins root holding docs/examples/external-plugins (the example script plugin) and
# kindindex.acme.io/v1, a Go program (e2e/parity/kindindex) built per run; a line `exact GLOB`
# makes the comparison require the files matching GLOB to be the same bytes in both trees.
# Then `go mod tidy` and `make generate manifests` run in both trees, and e2e/parity/compare checks
# them semantically (see its doc comment). Lines listed in e2e/parity/unsupported.txt are skipped
# for both tools; differences listed in e2e/parity/allowlist.txt are accepted. Anything else fails.
#
# Usage: parity.sh [SCENARIO...]     (default: all; names as printed, e.g. project-v4, golden-project)
# Environment: PARITY_KEEP=1 keeps the work directory and prints its path;
# OPBUILDER_PARITY_KUBEBUILDER=vX.Y.Z uses that Kubebuilder release as the oracle.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=parity-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/parity-lib.sh"
need_cmd go make kubectl cargo

scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
parity_dir="$OPBUILDER_ROOT/e2e/parity"
# The oracle: versions.toml's release, or OPBUILDER_PARITY_KUBEBUILDER (kubebuilder-delta.sh sets it
# to try a newer release before opbuilder moves to it).
kb_version=${OPBUILDER_PARITY_KUBEBUILDER:-$(pin e2e.kubebuilder)}
kb_bin=$("$scripts/go-tool.sh" kubebuilder sigs.k8s.io/kubebuilder/v4 "$kb_version" sigs.k8s.io/kubebuilder/v4)
kb_src=$(go mod download -json "sigs.k8s.io/kubebuilder/v4@$kb_version" | awk -F'"' '$2 == "Dir" { print $4 }')
[[ -r $kb_src/test/testdata/generate.sh ]] || die "kubebuilder source not found in the module cache ($kb_src)"
op_bin=${OPBUILDER_BIN:-}
if [[ -z $op_bin ]]; then
	cargo build --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
	op_bin="$OPBUILDER_TARGET_DIR/debug/opbuilder"
fi
# helm renders the charts of the helm plugin for the comparison.
OPBUILDER_PARITY_HELM=$("$scripts/go-tool.sh" helm)
export OPBUILDER_PARITY_HELM

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-parity.XXXXXX")
if [[ -n ${PARITY_KEEP:-} ]]; then
	log_info "keeping $work"
else
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/scenarios"
# The compare tool, built per run (runs from several checkouts must not share one binary).
compare_bin="$work/parity-compare"
(cd "$parity_dir" && go build -o "$compare_bin" .)
# The external plugins of the `extplugins` scenarios: the example script plugin, and a compiled
# one (one plugins root, the same executables for both tools).
ext_plugins="$work/plugins"
mkdir -p "$ext_plugins/kindindex.acme.io/v1"
cp -R "$OPBUILDER_ROOT/docs/examples/external-plugins/." "$ext_plugins/"
(cd "$parity_dir" && go build -o "$ext_plugins/kindindex.acme.io/v1/kindindex.acme.io" ./kindindex)

# Kubebuilder's scripts: one file per project.
kubebuilder_scripts "$kb_src" | awk -v dir="$work/scenarios" '
	/^### / { f = dir "/" $2 ".script"; printf "" > f; next }
	{ print >> f }
'
# opbuilder's golden scripts: `opbuilder ...` lines become tool-neutral `kb ...` lines; the
# post-step flags have the same meaning in both tools once translated (see run_line).
for g in "$OPBUILDER_ROOT"/e2e/testdata/*/commands; do
	name=golden-$(basename "$(dirname "$g")")
	repo=$(sed -n 's/.*--repo \([^ ]*\).*/\1/p' "$g" | head -n 1)
	{
		printf 'gomodinit %s\n' "$repo"
		grep -v '^[[:space:]]*\(#\|$\)' "$g" | sed 's/^opbuilder /kb /'
	} >"$work/scenarios/$name.script"
done
shopt -s nullglob
for i in "$parity_dir"/interop/*.commands; do
	cp "$i" "$work/scenarios/interop-$(basename "$i" .commands).script"
done
# Users' own scripts (e2e/parity/scripts/*.commands): every line through both tools.
for i in "$parity_dir"/scripts/*.commands; do
	cp "$i" "$work/scenarios/script-$(basename "$i" .commands).script"
done

selected=("$@")
if [[ ${#selected[@]} -eq 0 ]]; then
	for s in "$work"/scenarios/*.script; do
		selected+=("$(basename "$s" .script)")
	done
fi

# run_line TOOL DIR LINE: run one recorded `kb ARGS` line with kubebuilder or opbuilder.
run_line() {
	local tool=$1 dir=$2 line=$3
	local -a args
	eval "args=(${line#kb })"
	local -a out=()
	local a
	for a in "${args[@]}"; do
		if [[ $a == --skip-post-steps && $tool == kb ]]; then
			# kubebuilder has no such flag: its nearest equivalents per command.
			case "${args[0]}" in
			init) out+=(--fetch-deps=false --skip-go-version-check) ;;
			create) out+=(--make=false) ;;
			esac
			continue
		fi
		out+=("$a")
	done
	local -a env=()
	if [[ -n $scenario_plugins ]]; then
		env=("EXTERNAL_PLUGINS_PATH=$scenario_plugins")
	fi
	if [[ $tool == kb ]]; then
		(cd "$dir" && env "${env[@]}" "$kb_bin" "${out[@]}")
	else
		(cd "$dir" && env "${env[@]}" "$op_bin" "${out[@]}")
	fi
}

failed=()
passed=0
for s in "${selected[@]}"; do
	script="$work/scenarios/$s.script"
	[[ -f $script ]] || die "unknown scenario $s (have: $(cd "$work/scenarios" && ls | sed 's/\.script$//' | xargs))"
	if [[ $s == golden-keywords ]]; then
		# Kubebuilder writes Go that does not compile for these kinds (the reason the scenario exists).
		log_info "parity $s: skipped for kubebuilder by design (Go-keyword kinds); opbuilder's tree is built by the golden checks"
		continue
	fi
	if grep -Eq -- '--plugins[= ]rust\.opbuilder\.io' "$script"; then
		# opbuilder's own layout (with or without a plugin version, as `init --plugins=rust.opbuilder.io`
		# means the newest): Kubebuilder has no counterpart to compare with.
		log_info "parity $s: skipped: the Rust layout is opbuilder's own (its webhook and metrics objects are compared with go/v4's by rust-parity.sh; its tree is built by the golden checks)"
		continue
	fi
	if grep -Eq -- '--plugins[= ]([^ ]*,)?certs(\.opbuilder\.io)?/' "$script"; then
		# The manager keeps its own webhook certificates (opbuilder's certs plugin, issue 48): by
		# design the project has no cert-manager part to compare, and Kubebuilder has no such plugin.
		log_info "parity $s: skipped: certs/v1-alpha is opbuilder's own plugin (no cert-manager by design); its tree is built by the golden checks and proven on the node by the cluster stage"
		continue
	fi
	if grep -Eq -- '--plugins[= ]([^ ]*,)?telemetry(\.opbuilder\.io)?/' "$script"; then
		# OpenTelemetry wired into the manager and the controllers (opbuilder's telemetry plugin,
		# issue 49): Kubebuilder has no such plugin, so there is no tree of its to compare with.
		log_info "parity $s: skipped: telemetry/v1-alpha is opbuilder's own plugin; its tree is built by the golden checks and its traces are proven against a real collector by the scenario telemetry (e2e/scripts/scenarios.sh)"
		continue
	fi
	# The help is read whole before it is searched (a `| grep -q` under pipefail can see the writer
	# killed by SIGPIPE once grep has left, and would skip the scenario though the flag exists),
	# and a failing oracle stops the job rather than skip the scenario.
	if [[ $s == golden-ssa ]]; then
		kb_help=$("$kb_bin" create api --help 2>&1) ||
			die "kubebuilder $kb_version create api --help failed: $kb_help"
		if ! grep -q -- '--ssa' <<<"$kb_help"; then
			# `create api --ssa` came after Kubebuilder v4.15 (an oracle without the flag).
			log_info "parity $s: skipped: --ssa is beyond Kubebuilder $kb_version; opbuilder's tree is built by the golden checks"
			continue
		fi
	fi
	start=$SECONDS
	log_info "parity $s"
	# The directory names become the project names: give both the scenario's own name.
	kbdir="$work/kb/$s/$s" opdir="$work/op/$s/$s"
	mkdir -p "$kbdir" "$opdir"
	: >"$work/$s.commands"
	opmake_targets=""
	scenario_plugins=""
	exact_args=()
	ok=1
	while IFS= read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		case "$line" in
		opmake\ *)
			# Make targets the second tree must pass after the comparison's own `make generate
			# manifests` (a user's script builds; interop projects build and pass `make test`).
			opmake_targets+=" ${line#opmake }"
			continue
			;;
		extplugins)
			scenario_plugins=$ext_plugins
			continue
			;;
		exact\ *)
			exact_args+=(-exact "${line#exact }")
			continue
			;;
		gomodinit\ *)
			mod=${line#gomodinit }
			(cd "$kbdir" && go mod init "$mod" >/dev/null 2>&1)
			(cd "$opdir" && go mod init "$mod" >/dev/null 2>&1)
			continue
			;;
		esac
		# Interop lines (`kb: ...`, `op: ...`) run in the second tree with the tool they name; the
		# first tree always runs kubebuilder alone, as the reference.
		tool=op
		case "$line" in
		kb:\ *) tool=kb line="kb ${line#kb: }" ;;
		op:\ *) line="kb ${line#op: }" ;;
		esac
		if is_unsupported "$parity_dir/unsupported.txt" "$s" "$line"; then
			log_info "  skip (unsupported.txt): $line"
			continue
		fi
		kb_rc=0 op_rc=0
		run_line kb "$kbdir" "$line" >"$work/$s.kb.log" 2>&1 || kb_rc=$?
		run_line "$tool" "$opdir" "$line" >"$work/$s.op.log" 2>&1 || op_rc=$?
		# Post-steps (`make generate`) then find the tools instead of building them per project.
		# Not with external plugins: their scripts skip the post-steps, and Kubebuilder would read
		# the tools in bin/ (over 100 MB) into every plugin request.
		if [[ -z $scenario_plugins ]]; then
			for d in "$kbdir" "$opdir"; do
				[[ -f $d/Makefile ]] && "$scripts/seed-tools.sh" "$d"
			done
		fi
		# Neither tool may warn about a block or marker it could not find in the other's files.
		if grep -qiE 'unable to find|could not find|not found.*(marker|block)|warn.*(marker|block)' "$work/$s.kb.log" "$work/$s.op.log"; then
			log_error "  a tool warned about a missing block or marker: $line"
			grep -iE -B2 -A2 'unable to find|could not find|not found.*(marker|block)|warn.*(marker|block)' "$work/$s.kb.log" "$work/$s.op.log" >&2 || true
			ok=0
		fi
		if ((kb_rc == 0 && op_rc != 0)); then
			log_error "  kubebuilder accepts, opbuilder refuses (exit $op_rc): $line"
			sed 's/^/      /' "$work/$s.op.log" >&2
			ok=0
		elif ((kb_rc != 0 && op_rc == 0)); then
			log_warn "  opbuilder accepts, kubebuilder refuses (exit $kb_rc): $line"
			sed 's/^/      /' "$work/$s.kb.log" | tail -n 5 >&2
		elif ((kb_rc != 0)); then
			log_error "  both tools refuse: $line"
			tail -n 5 "$work/$s.kb.log" "$work/$s.op.log" >&2
			ok=0
		fi
	done <"$script"
	for d in "$kbdir" "$opdir"; do
		"$scripts/seed-tools.sh" "$d"
		if ! (cd "$d" && go mod tidy >"$d/.parity-tidy.log" 2>&1 && make generate manifests >"$d/.parity-make.log" 2>&1); then
			log_error "  go mod tidy / make generate manifests failed in $d"
			tail -n 20 "$d"/.parity-*.log >&2
			ok=0
		fi
		rm -f "$d"/.parity-*.log
	done
	if [[ -n $opmake_targets ]]; then
		[[ $opmake_targets == *" test"* ]] && "$scripts/link-envtest.sh" "$opdir" >/dev/null
		log_info "  make$opmake_targets (second tree)"
		# shellcheck disable=SC2086 # the targets are words
		if ! (cd "$opdir" && make $opmake_targets >"$work/$s.opmake.log" 2>&1); then
			log_error "  make$opmake_targets failed in the second tree"
			tail -n 40 "$work/$s.opmake.log" >&2
			ok=0
		fi
	fi
	# Compare even after a refused command: the full list of differences is the useful report.
	"$compare_bin" -scenario "$s" -allowlist "$parity_dir/allowlist.txt" "${exact_args[@]}" "$kbdir" "$opdir" || ok=0
	if ((ok)); then
		passed=$((passed + 1))
		log_info "parity $s: ok in $(fmt_duration $((SECONDS - start)))"
	else
		failed+=("$s")
		log_error "parity $s: FAILED after $(fmt_duration $((SECONDS - start)))"
	fi
done
echo "parity: ${passed} passed, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]] || die "parity differences in: ${failed[*]} (fix them, or list a deliberate departure in e2e/parity/allowlist.txt with its reason)"
