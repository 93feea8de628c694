#!/usr/bin/env bash
# Benchmark: how long scaffolding takes, without post-steps (no Go involved).
# Not a test: it reports numbers and never fails on them.
#
# Usage: bash e2e/bench.sh [RUNS]     (default 50)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-50}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/opbuilder"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now_ns() { date +%s%N; }

measure() { # measure LABEL SETUP-FN CMD...
	local label=$1 setup=$2
	shift 2
	local total=0 best= t0 t1 d i
	for ((i = 0; i < runs; i++)); do
		local dir="$work/$label-$i"
		mkdir -p "$dir"
		(cd "$dir" && $setup)
		t0=$(now_ns)
		(cd "$dir" && "$@" >/dev/null 2>&1)
		t1=$(now_ns)
		d=$((t1 - t0))
		total=$((total + d))
		if [[ -z $best || $d -lt $best ]]; then best=$d; fi
	done
	awk -v l="$label" -v t="$total" -v n="$runs" -v b="$best" 'BEGIN {
		printf "%-28s mean %6.2f ms   best %6.2f ms   (%d runs, includes process start)\n", l, t / n / 1e6, b / 1e6, n
	}'
}

no_setup() { :; }
init_setup() { "$bin" init --domain example.com --repo example.com/bench --project-name bench --skip-post-steps >/dev/null; }

measure "baseline: version" no_setup "$bin" version
measure "init" no_setup "$bin" init --domain example.com --repo example.com/bench --project-name bench --skip-post-steps
measure "init --dry-run" no_setup "$bin" init --domain example.com --repo example.com/bench --project-name bench --dry-run
measure "create api (after init)" init_setup "$bin" create api --group ingress --version v1 --kind App --resource --controller --skip-post-steps
# What durability costs: the same commands with fsync turned off (OPBUILDER_FSYNC=0).
measure "init, no fsync" no_setup env OPBUILDER_FSYNC=0 "$bin" init --domain example.com --repo example.com/bench --project-name bench --skip-post-steps
measure "create api, no fsync" init_setup env OPBUILDER_FSYNC=0 "$bin" create api --group ingress --version v1 --kind App --resource --controller --skip-post-steps
