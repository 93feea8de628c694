#!/usr/bin/env bash
# Benchmark: opbuilder against the pinned kubebuilder (versions.toml e2e.kubebuilder), side by
# side, plus opbuilder's own cost.
# Not a test: it prints numbers and never fails on them (only when a command itself fails).
#
# Usage: bash e2e/bench.sh [PAIRS]     (default 7 paired repetitions)
#
# 1. Paired wall time. Each repetition runs every step once with each tool, in fresh
#    directories, alternating which tool goes first; the ratio kubebuilder/opbuilder is taken
#    per pair and the median is printed. Post-steps are off on both sides: kubebuilder with
#    `--fetch-deps=false --skip-go-version-check` (init) and `--make=false` (create),
#    opbuilder with `--skip-post-steps`. Each timed run starts after `sync`, so neither tool
#    pays for the other's unwritten data. kubebuilder is built from the Go module proxy by
#    e2e/scripts/go-tool.sh (cached by version, as the parity suite does).
# 2. opbuilder's instruction counts (valgrind --tool=callgrind) and peak RSS (/usr/bin/time),
#    including `create api` in a project that already has 199 kinds. Skipped with a note when
#    valgrind or /usr/bin/time is missing. CI keeps such counts under a budget:
#    e2e/scripts/instructions.sh against e2e/instructions.toml (`bash e2e/run.sh instructions`).
# 3. What durability costs: paired wall time of opbuilder's `init` and `create api` as they are
#    and with fsync turned off (OPBUILDER_FSYNC=0).
# 4. What users wait for: from an empty directory to `go build ./...` passing, i.e. init +
#    create api + create webhook with each tool's default post-steps, then `go build ./...`
#    (warm Go module and build caches: one untimed round first). Paired, WAIT_PAIRS times
#    (default 3): kubebuilder, opbuilder with its per-user tool cache (TOOLS_CACHE of the
#    generated Makefile) warm, and opbuilder with an empty one (so it builds controller-gen
#    like kubebuilder does), the order rotating. Ratios are taken per repetition.
#
# 5. The floor (section "floor"): each tool against `cp -r` of the finished tree, the least any
#    scaffolder could spend on this file system.
#
# 6. The Rust layout (section "rust"): a generated project's cold `cargo build` (a fresh target
#    directory: every dependency compiled, the crates already downloaded), then the incremental
#    `cargo build` after one more `create api` (goal: at most 20 s), and the manager's size.
#
# 7. The noisy neighbour (section "neighbour"): opbuilder's `create api` on a quiet file system
#    against the same right after another process wrote NEIGHBOUR_MB (default 800) MB of
#    unrelated data to the same file system and left it unsynced, as a `cargo build` or
#    `go build` beside it does. opbuilder fsyncs only the files and directories it wrote, so the
#    second should stay within 2x of the first (a `syncfs` of the whole file system, as the
#    commit did before, waits for all of the other process's data). Paired, the order
#    alternating; the ratio is taken per pair.
#
# 8. The inner loop (section "innerloop", not in the default list: it needs root and the e2e node
#    of e2e/scripts/cluster.sh, which it starts and stops, waiting for the machine's node lock):
#    for a go/v4 project and a Rust-layout one, each a kind with a controller, on the node: the
#    cold image (`make docker-build` after `docker builder prune -af`, which empties BuildKit's
#    layer cache and cache mounts and keeps the base images), then INNERLOOP_REPS (default 3)
#    times: one edit of the controller, and from it `make docker-build`, `cluster.sh load` (what
#    `kind load docker-image` does), `make deploy`, until the pod whose template carries the new
#    image ID is Ready. Medians, with each step's. The host's cargo builds as the e2e tests do
#    (use_rust_target: a shared target directory, no debug info) for the Rust layout's
#    `make manifests`; the image builds use the projects' own Dockerfiles, unchanged.
#
# 9. Generated managers at scale (section "scale", issue 46; not in the default list: about 45 min
#    at 10,000 objects, with a release build of a Rust project): for a go/v4 project and a
#    Rust-layout one, one after the other, each on a fresh control plane of
#    e2e/scripts/control-plane.sh, the manager out of cluster with SCALE_OBJECTS (default 10000)
#    objects: the first sync, memory, API requests and writes at steady state, reconcile
#    latency, a manager restart, an API server restart and its relist. e2e/scripts/scale.sh
#    says what and how; SCALE_LAYOUTS, SCALE_STEADY_SECONDS, ... there.
#
# 10. Faults at scale (section "scalefaults", not in the default list; root for go/v4): the same
#    projects, SCALE_OBJECTS objects, two managers with leader election; the leader killed
#    mid-sync, the API server restarted mid-sync, 100 objects deleted: every object must end with
#    its status, none Terminating, one manager reconciling at a time (the section fails if not).
#
# 11. The node restarted at scale (section "scalenode", not in the default list: root, and the
#    node of e2e/scripts/cluster.sh, which it starts and stops): the same projects' images
#    deployed with two replicas, SCALE_OBJECTS objects, the node restarted mid-sync
#    (`cluster.sh restart`: every process of it killed at once, then started again); the same
#    checks as the faults.
#
# 12. The leader's pod killed and the API server restarted at scale (section "scalepodfaults", not
#    in the default list: root, the same node): as scalenode, but mid-sync the leader's container
#    is killed (SIGKILL through the node's containerd) and later the node's API server restarts
#    (`cluster.sh restart-apiserver`); the same checks.
#
# 13. make undeploy with objects present (section "scaleundeploy", not in the default list: root,
#    the same node): each project's image deployed (one replica), SCALE_OBJECTS (default 100)
#    objects with their status, half in the manager's namespace and half in another; how long
#    `make undeploy` takes (goal: 60 s) and what it leaves (goal: nothing, none Terminating; the
#    section fails if anything is left).
#
# BENCH_SECTIONS picks sections (default "paired floor durability alone wait rust neighbour"),
# e.g. `BENCH_SECTIONS=wait bash e2e/bench.sh`. BENCH_OPBUILDER=PATH benchmarks that opbuilder
# binary instead of building this checkout (to compare two versions).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pairs=${1:-7}
wait_pairs=${WAIT_PAIRS:-3}
sections=" ${BENCH_SECTIONS:-paired floor durability alone wait rust neighbour} "
want() { [[ $sections == *" $1 "* ]]; }
if [[ -n ${BENCH_OPBUILDER:-} ]]; then
	op=$BENCH_OPBUILDER
else
	cargo build --release --quiet --manifest-path "$root/Cargo.toml"
	op="${CARGO_TARGET_DIR:-$root/target}/release/opbuilder"
fi
[[ $op == /* ]] || op="$PWD/$op"
# Only the sections that run kubebuilder build it.
kb=""
if want paired || want floor || want wait; then
	kb=$(bash "$root/e2e/scripts/go-tool.sh" kubebuilder)
fi
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
	# Start on a clean file system: what the setup or the other tool's last run left unwritten
	# would otherwise be written back during this run, competing with it for the disk.
	sync
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
[[ -z $kb ]] || echo "kubebuilder: $kb ($("$kb" version 2>/dev/null | awk '/^KubeBuilder:/ { print $2 }'))"
echo "machine:     $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
if want paired; then
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
fi

# What durability costs: opbuilder against itself with fsync turned off (OPBUILDER_FSYNC=0).
if want durability; then
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
fi

# The floor: what the file system alone costs here. A "tool" that only copies the finished tree
# (`cp -r`, one process, no checks, no transaction, nothing synced) bounds from below what any
# scaffolder can reach; kubebuilder / floor is the most any tool could be faster on this disk.
if want floor; then
floor_trees="$work/floor-trees"
mkdir -p "$floor_trees/init" "$floor_trees/script"
(cd "$floor_trees/init" && op_init) >/dev/null 2>&1
(cd "$floor_trees/script" && run_script op) >/dev/null 2>&1
copy_init() { cp -r "$floor_tree/." .; }
copy_api() { :; }
copy_webhook() { :; }
echo
echo "The floor, $pairs pairs, medians: the finished tree copied with cp -r (the whole script's"
echo "tree in one copy), against each tool:"
echo
printf '| %-40s | %14s | %14s | %14s | %14s | %14s | %14s |\n' "command" "kubebuilder" "its cp -r" "kb / cp -r" "opbuilder" "its cp -r" "op / cp -r"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})"
for step in init script; do
	floor_tree="$floor_trees/$step"
	paired kb copy "$step"
	mv "$work/$step.copy" "$work/$step.copy-kb"
	paired op copy "$step"
	awk -v l="${label[$step]}" -v k="$(median <"$work/$step.kb")" -v ck="$(median <"$work/$step.copy-kb")" \
		-v rk="$(median <"$work/$step.kb-copy")" -v o="$(median <"$work/$step.op")" \
		-v co="$(median <"$work/$step.copy")" -v ro="$(median <"$work/$step.op-copy")" \
		'BEGIN { printf "| %-40s | %11.1f ms | %11.1f ms | %13.0fx | %11.1f ms | %11.1f ms | %13.1fx |\n", l, k / 1e6, ck / 1e6, rk, o / 1e6, co / 1e6, ro }'
done
fi

# opbuilder alone: instructions and peak RSS per command.
if want alone; then
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
fi

# What users wait for: init + create api + create webhook with default post-steps, then
# `go build ./...`, in an empty directory. TOOLS_CACHE only matters to opbuilder's Makefile.
wait_kb() {
	"$kb" init "${project[@]}" &&
		"$kb" create api --group ship --version v1 --kind Frigate --resource --controller &&
		"$kb" create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation &&
		go build ./...
}
wait_op() {
	"$op" init "${project[@]}" &&
		"$op" create api --group ship --version v1 --kind Frigate --resource --controller &&
		"$op" create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation &&
		go build ./...
}
# wait_run NAME TOOLS_CACHE FN: wall time in nanoseconds of FN in a fresh directory.
wait_run() {
	local dir="$work/wait-$1" t0 t1
	rm -rf "$dir" && mkdir -p "$dir"
	t0=$(date +%s%N)
	(cd "$dir" && TOOLS_CACHE=$2 "$3") >"$dir.log" 2>&1 || {
		cat "$dir.log" >&2
		echo "bench: what users wait for failed for $1" >&2
		exit 1
	}
	t1=$(date +%s%N)
	rm -rf "$dir"
	echo $((t1 - t0))
}
if want wait; then
	echo
	echo "What users wait for: init + create api + create webhook with default post-steps, then"
	echo "go build ./... ($wait_pairs repetitions, medians; warm module and build caches; load $(cut -d' ' -f1-3 /proc/loadavg)):"
	echo
	warm_cache="$work/tools-warm"
	# One untimed round of each: warms the module and build caches and opbuilder's tool cache.
	wait_run warmup-kb "$work/tools-unused" wait_kb >/dev/null
	wait_run warmup-op "$warm_cache" wait_op >/dev/null
	: >"$work/wait.kb" && : >"$work/wait.warm" && : >"$work/wait.cold"
	: >"$work/wait.kb-warm" && : >"$work/wait.kb-cold"
	for ((i = 0; i < wait_pairs; i++)); do
		order=(kb warm cold)
		case $((i % 3)) in
		1) order=(warm cold kb) ;;
		2) order=(cold kb warm) ;;
		esac
		declare -A took=()
		for who in "${order[@]}"; do
			case $who in
			kb) took[kb]=$(wait_run "kb-$i" "$work/tools-unused" wait_kb) ;;
			warm) took[warm]=$(wait_run "warm-$i" "$warm_cache" wait_op) ;;
			cold) took[cold]=$(wait_run "cold-$i" "$work/tools-cold-$i" wait_op) ;;
			esac
		done
		echo "${took[kb]}" >>"$work/wait.kb"
		echo "${took[warm]}" >>"$work/wait.warm"
		echo "${took[cold]}" >>"$work/wait.cold"
		awk -v a="${took[kb]}" -v b="${took[warm]}" 'BEGIN { print a / b }' >>"$work/wait.kb-warm"
		awk -v a="${took[kb]}" -v b="${took[cold]}" 'BEGIN { print a / b }' >>"$work/wait.kb-cold"
		awk -v i="$i" -v k="${took[kb]}" -v w="${took[warm]}" -v c="${took[cold]}" \
			'BEGIN { printf "  repetition %d: kubebuilder %.2f s, opbuilder (tool cache warm) %.2f s, opbuilder (tool cache empty) %.2f s\n", i + 1, k / 1e9, w / 1e9, c / 1e9 }'
	done
	echo
	printf '| %-40s | %14s | %22s |\n' "tool" "wall time" "kubebuilder / this"
	printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..24})"
	awk -v t="$(median <"$work/wait.kb")" 'BEGIN { printf "| %-40s | %12.2f s | %22s |\n", "kubebuilder", t / 1e9, "1x" }'
	awk -v t="$(median <"$work/wait.warm")" -v r="$(median <"$work/wait.kb-warm")" \
		'BEGIN { printf "| %-40s | %12.2f s | %21.2fx |\n", "opbuilder, tool cache warm", t / 1e9, r }'
	awk -v t="$(median <"$work/wait.cold")" -v r="$(median <"$work/wait.kb-cold")" \
		'BEGIN { printf "| %-40s | %12.2f s | %21.2fx |\n", "opbuilder, tool cache empty", t / 1e9, r }'
fi

if want rust; then
	echo
	echo "## The Rust layout: building a generated project"
	echo
	rust_dir="$work/rust/bench"
	mkdir -p "$rust_dir"
	(
		cd "$rust_dir"
		"$op" init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name bench >/dev/null
		"$op" create api --group ship --version v1 --kind Frigate --resource --controller >/dev/null
		export CARGO_TARGET_DIR="$work/rust/target"
		cargo fetch --quiet
		ns() { date +%s%N; }
		t0=$(ns)
		cargo build --quiet
		t1=$(ns)
		"$op" create api --group ship --version v1 --kind Cruiser --resource --controller >/dev/null
		t2=$(ns)
		cargo build --quiet
		t3=$(ns)
		size=$(stat -c %s "$CARGO_TARGET_DIR/debug/bench")
		printf '| %-58s | %12s |\n' "step" "wall time"
		printf '|%s|%s|\n' "$(printf -- '-%.0s' {1..60})" "$(printf -- '-%.0s' {1..14})"
		awk -v t=$((t1 - t0)) 'BEGIN { printf "| %-58s | %10.1f s |\n", "cold cargo build (debug, every dependency)", t / 1e9 }'
		awk -v t=$((t3 - t2)) 'BEGIN { printf "| %-58s | %10.1f s |\n", "cargo build after one more create api (goal: 20 s)", t / 1e9 }'
		awk -v b="$size" 'BEGIN { printf "\nthe manager (debug): %.1f MB\n", b / 1e6 }'
	)
fi

# The inner loop on the e2e node: edit -> image -> pod Ready, for both layouts.
if want innerloop; then
(
	# shellcheck source-path=SCRIPTDIR source=scripts/lib.sh
	source "$root/e2e/scripts/lib.sh"
	((EUID == 0)) || die "the innerloop section needs root (it starts the e2e node)"
	cs="$root/e2e/scripts/cluster.sh"
	node="$work/node"
	reps=${INNERLOOP_REPS:-3}
	trap '"$cs" stop "$node" >"$work/node-stop.log" 2>&1 || cat "$work/node-stop.log" >&2' EXIT
	"$cs" start "$node" >"$work/node-start.log" 2>&1 || {
		tail -n 40 "$work/node-start.log" >&2
		die "cluster.sh start failed"
	}
	eval "$("$cs" env "$node")"
	use_rust_target
	# The inner loop edits and builds again: incremental, as a user's cargo.
	unset CARGO_INCREMENTAL
	k() { "$(k8s_bin_dir)/kubectl" --kubeconfig "$node/kubeconfig" --request-timeout=30s "$@"; }
	now() { date +%s%N; }
	secs() { awk -v n="$1" 'BEGIN { printf "%.1f s", n / 1e9 }'; }

	# ready_with ID NS: a pod of the manager whose template carried image ID is Ready.
	ready_with() {
		k -n "$2" get pods -l control-plane=controller-manager -o \
			'jsonpath={range .items[*]}{.metadata.annotations.opbuilder\.io/image-id} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
			grep -qx "$1 True"
	}

	# layout NAME: the numbers of one layout, as table rows.
	layout() {
		local name=$1 dir="$work/innerloop/bench$1" img="example.com/bench$1:dev" ns="bench$1-system" i id
		local t0 t1 t2 t3 t4 cold size
		mkdir -p "$dir"
		cd "$dir"
		{
			case $name in
			go)
				"$op" init --domain example.com --repo example.com/benchgo --project-name benchgo
				"$op" create api --group ship --version v1 --kind Frigate --resource --controller
				edit() { sed -i -E "s/\"Reconciling[^\"]*\"/\"Reconciling (edit $1)\"/" internal/controller/frigate_controller.go; }
				;;
			rust)
				"$op" init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name benchrust
				"$op" create api --group ship --version v1 --kind Frigate --resource --controller
				edit() { sed -i -E "s/\"the Frigate is reconciled[^\"]*\"/\"the Frigate is reconciled (edit $1)\"/" src/controllers/frigate.rs; }
				;;
			esac
			"$root/e2e/scripts/seed-tools.sh" "$dir"
			make manifests
		} >"$work/innerloop-$name.log" 2>&1 || { tail -n 30 "$work/innerloop-$name.log" >&2; die "$name: the project could not be made"; }
		run() { "$@" >>"$work/innerloop-$name.log" 2>&1 || { tail -n 30 "$work/innerloop-$name.log" >&2; die "$name: $* failed"; }; }
		docker builder prune -af >/dev/null
		t0=$(now)
		run make docker-build IMG="$img"
		cold=$(($(now) - t0))
		size=$(docker image inspect -f '{{ .Size }}' "$img")
		run "$cs" load "$node" "$img"
		run make deploy IMG="$img"
		wait_for 300 "the $name manager" ready_with "$(docker image inspect -f '{{ .Id }}' "$img")" "$ns" ||
			die "$name: the first deploy did not become Ready"
		: >"$work/il-$name.build" && : >"$work/il-$name.load" && : >"$work/il-$name.deploy"
		: >"$work/il-$name.ready" && : >"$work/il-$name.total"
		for ((i = 1; i <= reps; i++)); do
			t0=$(now)
			edit "$i"
			run make docker-build IMG="$img"
			t1=$(now)
			run "$cs" load "$node" "$img"
			t2=$(now)
			run make deploy IMG="$img"
			t3=$(now)
			id=$(docker image inspect -f '{{ .Id }}' "$img")
			until ready_with "$id" "$ns"; do
				(($(now) - t3 < 300 * 1000000000)) || die "$name: edit $i did not become Ready"
				sleep 0.2
			done
			t4=$(now)
			echo $((t1 - t0)) >>"$work/il-$name.build"
			echo $((t2 - t1)) >>"$work/il-$name.load"
			echo $((t3 - t2)) >>"$work/il-$name.deploy"
			echo $((t4 - t3)) >>"$work/il-$name.ready"
			echo $((t4 - t0)) >>"$work/il-$name.total"
			printf '  %s, edit %d: image %s, load %s, deploy %s, to Ready %s: %s (load %s)\n' "$name" "$i" \
				"$(secs $((t1 - t0)))" "$(secs $((t2 - t1)))" "$(secs $((t3 - t2)))" "$(secs $((t4 - t3)))" \
				"$(secs $((t4 - t0)))" "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
		done
		run make undeploy
		printf '| %-8s | %9s | %8s | %10s | %10s | %10s | %10s | %10s | %14s |\n' "$name" \
			"$(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1e6 }')" "$(secs "$cold")" \
			"$(secs "$(median <"$work/il-$name.build")")" "$(secs "$(median <"$work/il-$name.load")")" \
			"$(secs "$(median <"$work/il-$name.deploy")")" "$(secs "$(median <"$work/il-$name.ready")")" \
			"$(secs "$(median <"$work/il-$name.total")")" "${goal[$name]}"
	}
	declare -A goal=([go]="30 s" [rust]="45 s")
	echo
	echo "The inner loop on the e2e node, $reps edits per layout, medians (load $(cut -d' ' -f1-3 /proc/loadavg)):"
	echo "cold image after docker builder prune -af; after an edit: make docker-build, cluster.sh load,"
	echo "make deploy, and until the pod with the new image ID is Ready."
	echo
	printf '| %-8s | %9s | %8s | %10s | %10s | %10s | %10s | %10s | %14s |\n' layout image cold "edit: image" load deploy "to Ready" "edit -> Ready" "goal"
	printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..11})" \
		"$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})" \
		"$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..16})"
	for l in ${INNERLOOP_LAYOUTS:-go rust}; do layout "$l"; done
	echo "(load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
)
fi

# The noisy neighbour: `create api` right after another process left unsynced data behind.
# nb_run MODE I: wall time in nanoseconds of `create api` in a fresh project; with MODE noisy,
# NEIGHBOUR_MB of zeros are written to a file beside it first (by `head`, and not synced).
nb_run() {
	local mode=$1 i=$2 dir="$work/nb-$1-$2" t0 t1
	mkdir -p "$dir"
	(cd "$dir" && op_init) >"$dir.log" 2>&1 || {
		cat "$dir.log" >&2
		echo "bench: init failed" >&2
		exit 1
	}
	sync
	if [[ $mode == noisy ]]; then
		head -c "${nb_mb}M" /dev/zero >"$work/neighbour.dat"
	fi
	t0=$(date +%s%N)
	(cd "$dir" && op_api Frigate) >>"$dir.log" 2>&1 || {
		cat "$dir.log" >&2
		echo "bench: create api failed" >&2
		exit 1
	}
	t1=$(date +%s%N)
	# Deleting the neighbour's file drops its unwritten pages, so the next run starts quiet.
	rm -rf "$work/neighbour.dat" "$dir"
	sync
	echo $((t1 - t0))
}
if want neighbour; then
	nb_mb=${NEIGHBOUR_MB:-800}
	echo
	echo "The noisy neighbour, $pairs pairs, medians: create api on a quiet file system, and right after"
	echo "another process wrote $nb_mb MB to it without syncing (load $(cut -d' ' -f1-3 /proc/loadavg)):"
	echo
	: >"$work/nb.quiet" && : >"$work/nb.noisy" && : >"$work/nb.ratio"
	for ((i = 0; i < pairs; i++)); do
		if ((i % 2)); then
			tn=$(nb_run noisy "$i")
			tq=$(nb_run quiet "$i")
		else
			tq=$(nb_run quiet "$i")
			tn=$(nb_run noisy "$i")
		fi
		echo "$tq" >>"$work/nb.quiet"
		echo "$tn" >>"$work/nb.noisy"
		awk -v n="$tn" -v q="$tq" 'BEGIN { print n / q }' >>"$work/nb.ratio"
	done
	printf '| %-40s | %14s | %14s | %22s |\n' "command" "quiet" "after $nb_mb MB" "after / quiet"
	printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..24})"
	awk -v q="$(median <"$work/nb.quiet")" -v n="$(median <"$work/nb.noisy")" -v r="$(median <"$work/nb.ratio")" \
		'BEGIN { printf "| %-40s | %11.1f ms | %11.1f ms | %21.2fx |\n", "create api", q / 1e6, n / 1e6, r;
			printf "\nafter / quiet: %.2fx, %s\n", r, (r <= 2 ? "within 2x (goal met)" : "over 2x (goal missed)") }'
fi

# Generated managers at scale, and faults at scale (e2e/scripts/scale.sh).
if want scale; then
	bash "$root/e2e/scripts/scale.sh" bench "$op"
fi
if want scalefaults; then
	bash "$root/e2e/scripts/scale.sh" faults "$op"
fi
if want scalenode; then
	bash "$root/e2e/scripts/scale.sh" node "$op"
fi
if want scalepodfaults; then
	bash "$root/e2e/scripts/scale.sh" podfaults "$op"
fi
if want scaleundeploy; then
	bash "$root/e2e/scripts/scale.sh" undeploy "$op"
fi
