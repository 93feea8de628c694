#!/usr/bin/env bash
# Benchmark: opbuilder against kubebuilder v4.15, side by side, plus opbuilder's own cost.
# Not a test: it prints numbers and never fails on them (only when a command itself fails).
#
# Usage: bash e2e/bench.sh [PAIRS]     (default 7 paired repetitions)
#
# 1. Paired wall time. Each repetition runs every step once with each tool, in fresh
#    directories, alternating which tool goes first; the ratio kubebuilder/opbuilder is taken
#    per pair and the median is printed. Post-steps are off on both sides: kubebuilder with
#    `--fetch-deps=false --skip-go-version-check` (init) and `--make=false` (create),
#    opbuilder with `--skip-post-steps`. kubebuilder is built from the Go module proxy by
#    e2e/scripts/go-tool.sh (cached by version, as the parity suite does).
# 2. opbuilder's instruction counts (valgrind --tool=callgrind) and peak RSS (/usr/bin/time),
#    including `create api` in a project that already has 199 kinds. Skipped with a note when
#    valgrind or /usr/bin/time is missing.
# 3. What durability costs: paired wall time of opbuilder's `init` and `create api` as they are
#    and with fsync turned off (OPBUILDER_FSYNC=0).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pairs=${1:-7}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
op="$root/target/release/opbuilder"
kb=$(bash "$root/e2e/scripts/go-tool.sh" kubebuilder)
work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

project=(--domain example.com --repo example.com/bench --project-name bench)
op_init() { "$op" init "${project[@]}" --skip-post-steps; }
kb_init() { "$kb" init "${project[@]}" --fetch-deps=false --skip-go-version-check; }
op_api() { "$op" create api --group ship --version v1 --kind "$1" --resource --controller --skip-post-steps; }
kb_api() { "$kb" create api --group ship --version v1 --kind "$1" --resource --controller --make=false; }
op_webhook() { "$op" create webhook --group ship --version v1 --kind "$1" --defaulting --programmatic-validation --skip-post-steps; }
kb_webhook() { "$kb" create webhook --group ship --version v1 --kind "$1" --defaulting --programmatic-validation --make=false; }
# opbuilder without durability: fsync turned off, to show what syncing costs.
nosync_init() { OPBUILDER_FSYNC=0 op_init; }
nosync_api() { OPBUILDER_FSYNC=0 op_api "$@"; }

# Each step: setup_<step> TOOL (untimed), then run_<step> TOOL (timed), in an empty directory.
setup_init() { :; }
run_init() { "${1}_init"; }
setup_api() { "${1}_init"; }
run_api() { "${1}_api" Frigate; }
setup_webhook() { "${1}_init" && "${1}_api" Frigate; }
run_webhook() { "${1}_webhook" Frigate; }
setup_script() { :; }
run_script() {
	"${1}_init" && "${1}_api" Frigate && "${1}_api" Destroyer && "${1}_api" Cruiser &&
		"${1}_webhook" Frigate && "${1}_webhook" Destroyer
}
steps=(init api webhook script)
declare -A label=(
	[init]="init"
	[api]="create api"
	[webhook]="first create webhook"
	[script]="init + 3 create api + 2 create webhook"
)

# time_step TOOL STEP DIR: prints the wall time of run_STEP in nanoseconds.
time_step() {
	local tool=$1 step=$2 dir=$3 t0 t1
	mkdir -p "$dir"
	(cd "$dir" && "setup_$step" "$tool") >"$dir.log" 2>&1 || {
		cat "$dir.log" >&2
		echo "bench: setup of $step failed for $tool" >&2
		exit 1
	}
	t0=$(date +%s%N)
	(cd "$dir" && "run_$step" "$tool") >>"$dir.log" 2>&1 || {
		cat "$dir.log" >&2
		echo "bench: $step failed for $tool" >&2
		exit 1
	}
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# paired A B STEP: $pairs repetitions of STEP with tools A and B, alternating which goes first;
# leaves the times in $work/STEP.A and $work/STEP.B and the per-pair ratios A/B in $work/STEP.A-B.
paired() {
	local a=$1 b=$2 step=$3 i ta tb
	: >"$work/$step.$a" && : >"$work/$step.$b" && : >"$work/$step.$a-$b"
	for ((i = 0; i < pairs; i++)); do
		if ((i % 2)); then
			tb=$(time_step "$b" "$step" "$work/$step-$b-$i")
			ta=$(time_step "$a" "$step" "$work/$step-$a-$i")
		else
			ta=$(time_step "$a" "$step" "$work/$step-$a-$i")
			tb=$(time_step "$b" "$step" "$work/$step-$b-$i")
		fi
		echo "$ta" >>"$work/$step.$a"
		echo "$tb" >>"$work/$step.$b"
		awk -v a="$ta" -v b="$tb" 'BEGIN { print a / b }' >>"$work/$step.$a-$b"
		rm -rf "$work/$step-$a-$i" "$work/$step-$b-$i"
	done
}

echo "opbuilder:   $op"
echo "kubebuilder: $kb ($("$kb" version 2>/dev/null | awk '/^KubeBuilder:/ { print $2 }'))"
echo "machine:     $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Paired wall time, $pairs pairs, medians (post-steps off on both sides):"
echo
printf '| %-40s | %14s | %14s | %22s |\n' "command" "kubebuilder" "opbuilder" "kubebuilder / opbuilder"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..24})"
for step in "${steps[@]}"; do
	paired kb op "$step"
	awk -v l="${label[$step]}" -v k="$(median <"$work/$step.kb")" -v o="$(median <"$work/$step.op")" \
		-v r="$(median <"$work/$step.kb-op")" \
		'BEGIN { printf "| %-40s | %11.1f ms | %11.1f ms | %21.0fx |\n", l, k / 1e6, o / 1e6, r }'
done

# What durability costs: opbuilder against itself with fsync turned off (OPBUILDER_FSYNC=0).
echo
echo "Durability cost, $pairs pairs, medians (opbuilder synced against OPBUILDER_FSYNC=0):"
echo
printf '| %-40s | %14s | %14s | %22s |\n' "command" "synced" "no fsync" "synced / no fsync"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..24})"
for step in init api; do
	paired op nosync "$step"
	awk -v l="${label[$step]}" -v s="$(median <"$work/$step.op")" -v n="$(median <"$work/$step.nosync")" \
		-v r="$(median <"$work/$step.op-nosync")" \
		'BEGIN { printf "| %-40s | %11.1f ms | %11.1f ms | %21.2fx |\n", l, s / 1e6, n / 1e6, r }'
done

# opbuilder alone: instructions and peak RSS per command.
big="$work/big"
mkdir -p "$big"
(
	cd "$big"
	op_init
	for i in $(seq -w 1 199); do op_api "Kind$i"; done
) >/dev/null 2>&1

# measure LABEL SETUP CMD...: copies the setup tree (or starts empty) and runs CMD there.
measure() {
	local label=$1 setup=$2 dir ins="n/a" rss="n/a"
	shift 2
	if command -v valgrind >/dev/null; then
		dir=$(fresh "$setup")
		ins=$( (cd "$dir" && valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$@" 2>&1 >/dev/null) |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
		ins=$(awk -v n="$ins" 'BEGIN { printf "%.2f M", n / 1e6 }')
	fi
	if [[ -x /usr/bin/time ]]; then
		dir=$(fresh "$setup")
		rss=$( (cd "$dir" && /usr/bin/time -f 'maxrss %M' "$@" 2>&1 >/dev/null) | sed -n 's/^maxrss //p')
		rss=$(awk -v k="$rss" 'BEGIN { printf "%.1f MB", k / 1024 }')
	fi
	printf '| %-40s | %14s | %14s |\n' "$label" "$ins" "$rss"
}
fresh() {
	local dir
	dir=$(mktemp -d "$work/run.XXXXXX")
	case $1 in
	empty) ;;
	init) (cd "$dir" && op_init) >/dev/null 2>&1 ;;
	api) (cd "$dir" && op_init && op_api Frigate) >/dev/null 2>&1 ;;
	big) cp -a "$big/." "$dir/" ;;
	esac
	echo "$dir"
}

echo
echo "opbuilder alone (release build; instructions counted by callgrind, peak RSS by /usr/bin/time):"
command -v valgrind >/dev/null || echo "(valgrind not installed: no instruction counts)"
[[ -x /usr/bin/time ]] || echo "(/usr/bin/time not installed: no peak RSS)"
echo
printf '| %-40s | %14s | %14s |\n' "command" "instructions" "peak RSS"
printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})"
measure "version" empty "$op" version
measure "init" empty "$op" init "${project[@]}" --skip-post-steps
measure "init --dry-run" empty "$op" init "${project[@]}" --dry-run
measure "create api" init "$op" create api --group ship --version v1 --kind Frigate --resource --controller --skip-post-steps
measure "create webhook" api "$op" create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation --skip-post-steps
measure "create api, 199 kinds present" big "$op" create api --group ship --version v1 --kind Last --resource --controller --skip-post-steps
measure "create webhook, 199 kinds present" big "$op" create webhook --group ship --version v1 --kind Kind001 --defaulting --programmatic-validation --skip-post-steps
