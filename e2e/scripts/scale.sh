#!/usr/bin/env bash
# Generated managers at scale (issue 46): e2e/bench.sh's sections `scale` and `scalefaults`.
# Not a test: it prints numbers and what it saw, and fails only when something it runs fails,
# (faults) an object is lost or stuck, or (SCALE_STRICT=1) a manager writes while nothing changes.
#
# For each layout (SCALE_LAYOUTS, default "go rust", one after the other, each on a fresh control
# plane of e2e/scripts/control-plane.sh, so neither's requests or load reach the other's numbers),
# a fresh project: one kind (Frigate, ship.example.com/v1) whose controller sets an Available
# condition: the Rust layout's scaffolded controller as it is; go/v4's scaffold plus the lines a
# Kubebuilder user writes for it (e2e/bench/go-condition.py). The manager is the built binary
# (go build; cargo build --release, or a debug build when SCALE_RUST_PROFILE=debug), run out of
# cluster as `make run` runs it, as the ServiceAccount of config/default with its RBAC (through a token): its requests are a
# service account's to API Priority and Fairness, as in a cluster. Metrics and probes on free
# ports, leader election off, the scaffold's other defaults (log level included); GOGC and
# GOMEMLIMIT of lib.sh are not passed on.
#
# bench: SCALE_OBJECTS (default 10000) Frigates, half created before the manager starts and half
# while it runs (4 connections, as fast as the API server takes them). Measured, from the API
# server's own metrics (apiserver_request_total by verb and resource, less the benchmark's own
# requests; APF's dispatched and rejected requests of the service-accounts flow schema) and the
# manager's (/proc/PID/status, controller_runtime_reconcile_* of its /metrics):
#   1. first sync: from the manager's start until every Frigate has the condition (a list and
#      watch of the benchmark's own, as admin), the requests meanwhile, reconcile p50/p99;
#   2. steady: resident memory once reconciles stop, and SCALE_STEADY_SECONDS (default 600)
#      later, with the requests and writes per minute in between;
#   3. manager restart (SIGTERM, then a new process): until it has reconciled every object, its
#      requests and writes, its peak resident memory (its first list and sync);
#   4. API server restart (etcd kept): until the manager has reconciled every object again (or
#      SCALE_RESYNC_TIMEOUT, default 300 s), until a Frigate created after the restart has the
#      condition, the requests since, and the manager's peak resident memory since the restart
#      (VmHWM, reset through /proc/PID/clear_refs): the relist;
#   5. the 429s of every window.
# SCALE_SETTLE_SECONDS (default 10): how long the reconcile count must stay still to call a
# manager settled. SCALE_PARALLEL=1 runs the layouts at once (each on its plane), for the smoke.
# SCALE_STRICT=1 (the CI smoke, `bash e2e/run.sh scale`) fails the run when a layout wrote
# anything in the steady window, or a restarted manager did not reconcile every object, or the
# Frigate made after the API server restart did not get its condition (within the timeouts).
# faults (root for go/v4: its manager reads the leader-election namespace from the in-cluster
# file, so it runs in a mount namespace that has one): SCALE_OBJECTS Frigates, half before and
# half while two managers with --leader-elect run; the leader killed (SIGKILL) once
# SCALE_FAULT_KILL_AT (default 30) percent have the condition and a new manager started in its
# place; the API server restarted at SCALE_FAULT_RESTART_AT (default 60) percent; 100 Frigates
# deleted meanwhile. Then every Frigate must have the condition within SCALE_SYNC_TIMEOUT
# (default 1800 s), the deleted ones must be gone (none stuck Terminating), and at no second may
# two managers' reconcile counters both have grown (one leader at a time; sampled every second).
#
# node (root: the node of e2e/scripts/cluster.sh, started and stopped here): the managers in pods
# and the node restarted mid-sync (see node_layout). podfaults (root, the same node): the managers
# in pods, the leader's container killed mid-sync and later the node's API server restarted (see
# pod_faults). undeploy (root, the same node): `make
# undeploy` with SCALE_OBJECTS (default 100 here) objects present (see undeploy_layout).
#
# Usage: scale.sh bench|faults|node|podfaults|undeploy OPBUILDER
# Needs: go, cargo, make, kubectl, curl, python3 with PyYAML; SCALE_KEEP=1 keeps the work
# directory (projects, logs, snapshots) and prints its path.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd go cargo make kubectl curl
need_pyyaml

[[ $# -eq 2 && ($1 == bench || $1 == faults || $1 == node || $1 == podfaults || $1 == undeploy) ]] ||
	die "usage: $0 bench|faults|node|podfaults|undeploy OPBUILDER"
mode=$1 op=$2
if [[ $mode == undeploy ]]; then objects=${SCALE_OBJECTS:-100}; else objects=${SCALE_OBJECTS:-10000}; fi
layouts=${SCALE_LAYOUTS:-go rust}
steady=${SCALE_STEADY_SECONDS:-600}
sync_timeout=${SCALE_SYNC_TIMEOUT:-1800}
resync_timeout=${SCALE_RESYNC_TIMEOUT:-300}
settle_seconds=${SCALE_SETTLE_SECONDS:-10}
parallel=${SCALE_PARALLEL:-0}
kill_at=${SCALE_FAULT_KILL_AT:-30}
restart_at=${SCALE_FAULT_RESTART_AT:-60}
undeploy_timeout=${SCALE_UNDEPLOY_TIMEOUT:-300}
for v in objects steady sync_timeout resync_timeout settle_seconds kill_at restart_at undeploy_timeout; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
if [[ $mode == faults || $mode == node || $mode == podfaults ]]; then
	((objects >= 200)) || die "SCALE_OBJECTS must be at least 200 for the faults (100 are deleted), got $objects"
else
	((objects >= 10)) || die "SCALE_OBJECTS must be at least 10, got $objects"
fi
rust_profile=${SCALE_RUST_PROFILE:-release}
[[ $rust_profile == release || $rust_profile == debug ]] ||
	die "SCALE_RUST_PROFILE must be release or debug, got '$rust_profile'"
strict=${SCALE_STRICT:-0}
rust_finalizer=${SCALE_RUST_FINALIZER:-0}
[[ $rust_finalizer == 0 || $rust_finalizer == 1 ]] || die "SCALE_RUST_FINALIZER must be 0 or 1, got '$rust_finalizer'"
for l in $layouts; do [[ $l == go || $l == rust ]] || die "SCALE_LAYOUTS: unknown layout '$l' (go, rust)"; done
[[ $mode == bench || $EUID -eq 0 || " $layouts " != *" go "* ]] ||
	die "the faults of go/v4 need root (its manager runs in a mount namespace with the in-cluster namespace file)"
[[ $mode == bench || $mode == faults || $EUID -eq 0 ]] || die "the node ($mode) needs root (e2e/scripts/cluster.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-scale.XXXXXX")
# Every process started is recorded in $work/pids, every control plane is $work/LAYOUT-plane:
# cleanup finds them there, whichever (sub)shell started them (SCALE_PARALLEL).
track() { echo "$1" >>"$work/pids"; }
cleanup() {
	local p
	if [[ -f $work/pids ]]; then
		while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$work/pids"
	fi
	for p in "$work"/*-plane; do
		[[ -d $p ]] && { "$scripts/control-plane.sh" stop "$p" >/dev/null 2>&1 || true; }
	done
	if [[ -d $work/node ]]; then
		"$scripts/cluster.sh" stop "$work/node" >"$work/node-stop.log" 2>&1 || tail -n 20 "$work/node-stop.log" >&2
	fi
	if [[ ${SCALE_KEEP:-0} == 1 ]]; then
		echo "scale.sh: the work directory is kept: $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

kind=Frigate
plural=frigates
group=ship.example.com
namespace=scale
collection="/apis/$group/v1/namespaces/$namespace/$plural"
resources="$group/*,/events,events.k8s.io/events"
load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="${2:-$(now)}" 'BEGIN { printf "%.1f", b - a }'; }
py() { python3 "$scripts/scale.py" "$@"; }

# ---------------------------------------------------------------- the projects

# project LAYOUT [image]: a fresh project in $work/LAYOUT/scaleLAYOUT with its manager built (not
# with `image`: its Dockerfile builds it); prints the manager's path.
project() {
	local layout=$1 dir="$work/$1/scale$1" build=${2:-binary}
	mkdir -p "$dir"
	(
		cd "$dir"
		case $layout in
		go)
			"$op" init --domain example.com --repo "example.com/scale$layout" --project-name "scale$layout"
			"$scripts/seed-tools.sh" "$dir"
			"$op" create api --group ship --version v1 --kind "$kind" --resource --controller
			python3 "$OPBUILDER_ROOT/e2e/bench/go-condition.py" "$dir" "$kind"
			make generate manifests
			go vet ./internal/controller/
			[[ $build == image ]] || go build -o bin/manager ./cmd
			;;
		rust)
			"$op" init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name "scale$layout"
			"$scripts/seed-tools.sh" "$dir"
			"$op" create api --group ship --version v1 --kind "$kind" --resource --controller
			if [[ $rust_finalizer == 1 ]]; then
				sed -i 's|^pub const FINALIZER: Option<&str> = None;$|pub const FINALIZER: Option<\&str> = Some("ship.example.com/finalizer");|' \
					src/controllers/frigate.rs
				grep -q '^pub const FINALIZER: Option<&str> = Some(' src/controllers/frigate.rs || {
					echo "SCALE_RUST_FINALIZER: the scaffold's FINALIZER constant was not found" >&2
					exit 1
				}
			fi
			use_rust_target
			make manifests
			if [[ $build == image ]]; then
				:
			elif [[ $rust_profile == release ]]; then
				cargo build --release --quiet --bin "scale$layout"
			else
				cargo build --quiet --bin "scale$layout"
			fi
			;;
		esac
	) >"$work/$layout-project.log" 2>&1 || {
		tail -n 40 "$work/$layout-project.log" >&2
		die "$layout: the project could not be made or built"
	}
	case $layout in
	go) echo "$dir/bin/manager" ;;
	rust) echo "$dir/target/$rust_profile/scale$layout" ;;
	esac
}

# ---------------------------------------------------------------- a plane and a manager

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		port_free "$p" && port_free $((p + 1)) && echo "$p" && return
	done
}

# plane LAYOUT: a fresh control plane with the CRD, the namespace of the Frigates and the
# manager's identity (config/default's Namespace, ServiceAccount and RBAC); exports KUBECONFIG
# (admin) and sets plane_dir and manager_kubeconfig.
plane() {
	local layout=$1 dir="$work/$1/scale$1"
	plane_dir="$work/$layout-plane"
	"$scripts/control-plane.sh" start "$plane_dir" >"$work/$layout-plane-start.log" 2>&1 || {
		tail -n 40 "$work/$layout-plane-start.log" >&2
		die "$layout: the control plane did not start"
	}
	eval "$("$scripts/control-plane.sh" env "$plane_dir")"
	PATH="$(dirname "$OPBUILDER_E2E_KUBECTL"):$PATH"
	kubectl kustomize "$dir/config/crd" | kubectl apply --server-side -f - >/dev/null
	kubectl wait --for=condition=Established "crd/$plural.$group" --timeout=60s >/dev/null
	kubectl create namespace "$namespace" >/dev/null
	kubectl kustomize "$dir/config/default" >"$work/$layout-default.yaml"
	manager_identity "$work/$layout-default.yaml"
	token_kubeconfig "scale$layout-controller-manager" "scale$layout-system" >"$work/$layout-manager.kubeconfig"
	manager_kubeconfig="$work/$layout-manager.kubeconfig"
}

# start_manager LAYOUT BIN NAME [FLAG...]: the manager as its ServiceAccount, metrics (plain HTTP)
# and probes on free ports; sets pid_NAME and metrics_NAME (the URL), waits for /healthz.
start_manager() {
	local layout=$1 bin=$2 name=$3 port pid
	shift 3
	port=$(free_port)
	local cmd=(env -u GOGC -u GOMEMLIMIT KUBECONFIG="$manager_kubeconfig" POD_NAMESPACE="scale$layout-system"
		"$bin" --metrics-bind-address="127.0.0.1:$port" --metrics-secure=false
		--health-probe-bind-address="127.0.0.1:$((port + 1))" "$@")
	if [[ $layout == go && " $* " == *" --leader-elect "* ]]; then
		# controller-runtime reads the Lease's namespace from the in-cluster file when it runs
		# outside a cluster with leader election and no namespace option: give it one, in a
		# mount namespace of its own (a tmpfs over /run, where /var/run points).
		# The file holds the name alone: controller-runtime takes its bytes as they are.
		cmd=(unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /run &&
			mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
			printf %s "$0" >/run/secrets/kubernetes.io/serviceaccount/namespace && exec "$@"' "scale$layout-system" "${cmd[@]}")
	fi
	"${cmd[@]}" >>"$work/$layout-$name.log" 2>&1 &
	pid=$!
	track "$pid"
	printf -v "pid_$name" '%s' "$pid"
	printf -v "metrics_$name" '%s' "http://127.0.0.1:$port/metrics"
	echo "http://127.0.0.1:$port/metrics" >"$work/$layout-$name.url"
	WAIT_FOR_PID=$pid wait_for 60 "the $layout manager $name's /healthz" curl -fsS "http://127.0.0.1:$((port + 1))/healthz" || {
		tail -n 30 "$work/$layout-$name.log" >&2
		die "$layout: manager $name did not start"
	}
}

# stop_manager NAME: SIGTERM, and wait (at most 60 s) until it has exited.
stop_manager() {
	local pid_var="pid_$1" i
	kill -TERM "${!pid_var}" 2>/dev/null || true
	for ((i = 0; i < 600; i++)); do
		kill -0 "${!pid_var}" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "${!pid_var}" 2>/dev/null || true
	wait "${!pid_var}" 2>/dev/null || true
}

# The manager's process: the one under unshare's sh when there is one (exec keeps the PID).
mib() { awk -v k="$2" '$1 == k":" { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
rss() { mib "$1" VmRSS; }
peak() { mib "$1" VmHWM; }
reset_peak() { echo 5 >"/proc/$1/clear_refs"; }
# The project's one controller: its reconciles, all results.
reconciles() { py manager "$1" 2>/dev/null | py get - reconciles; }
snap() { py apiserver "$KUBECONFIG" >"$work/$1.json"; }

# settle URL: until the manager's reconcile count has not moved for SCALE_SETTLE_SECONDS (default
# 10) seconds (at most 120 s).
settle() {
	local last=-1 same=0 n i
	for ((i = 0; i < 120 && same < settle_seconds; i++)); do
		n=$(reconciles "$1" || echo -1)
		if [[ $n == "$last" ]]; then same=$((same + 1)); else same=0 last=$n; fi
		sleep 1
	done
}

# until_reconciled URL N TIMEOUT T0: until the manager has reconciled N times in all; prints the
# seconds from T0 (a `now`), or "not within TIMEOUT s (n reconciles)".
until_reconciled() {
	local n
	while :; do
		n=$(reconciles "$1" || echo 0)
		if ((n >= $2)); then
			since "$4"
			return
		fi
		if awk -v e="$(since "$4")" -v l="$3" 'BEGIN { exit !(e >= l) }'; then
			echo "not within $3 s ($n reconciles)"
			return
		fi
		sleep 0.5
	done
}

# requests WINDOW BEFORE AFTER MINUTES [OWN...]: the manager's requests between two snapshots,
# saved as WINDOW.requests.json.
requests() {
	local window=$1 before=$2 after=$3 minutes=$4
	shift 4
	py requests "$work/$before.json" "$work/$after.json" "$resources" "$minutes" "$@" >"$work/$window.requests.json"
}
# own_wait FILE: the benchmark's own requests recorded by `scale.py wait` in FILE that were served
# (apiserver_request_total counts the refused ones under their code), as OWN arguments.
own_wait() { py own "$1" "$plural"; }
# own_429 FILE: how many of the requests of `scale.py wait` in FILE were answered 429.
own_429() { py refused "$1" 429; }

# result LAYOUT KEY VALUE
result() { printf '%s\t%s\n' "$2" "$3" >>"$work/$1.results"; }
describe() { # WINDOW: "total (verb resource n, ...)"
	py describe "$work/$1.requests.json"
}

# ---------------------------------------------------------------- bench

bench_layout() {
	local layout=$1 bin half t0 t1 created waited m
	log_info "$layout: building the project and its manager (load $(load))"
	bin=$(project "$layout")
	plane "$layout"
	half=$((objects / 2))
	: >"$work/$layout.results"
	log_info "$layout: creating $half Frigates before the manager starts"
	py create "$KUBECONFIG" "$collection" f 0 "$half" >"$work/$layout-create-before.log"
	result "$layout" load-start "$(load)"

	log_info "$layout: the manager starts; $((objects - half)) more Frigates are created meanwhile"
	snap "$layout-s0"
	# python3 itself in the background (not the function py), so $! is its PID.
	python3 "$scripts/scale.py" wait "$KUBECONFIG" "/apis/$group/v1/$plural" Available "$objects" "$sync_timeout" \
		>"$work/$layout-wait1.json" 2>"$work/$layout-wait1.log" &
	waited=$!
	track "$waited"
	t0=$(now)
	start_manager "$layout" "$bin" main
	py create "$KUBECONFIG" "$collection" f "$half" "$objects" >"$work/$layout-create-during.log"
	created=$(since "$t0")
	wait "$waited" || {
		tail -n 5 "$work/$layout-wait1.log" >&2
		die "$layout: not every Frigate had its status within ${sync_timeout}s of the manager's start"
	}
	t1=$(py get "$work/$layout-wait1.json" done)
	snap "$layout-s1"
	result "$layout" created-during "$created"
	result "$layout" sync "$(since "$t0" "$t1")"
	result "$layout" rss-sync "$(rss "$pid_main")"
	result "$layout" peak-sync "$(peak "$pid_main")"
	m=$(py manager "$metrics_main")
	result "$layout" reconciles-sync "$(py get - reconciles <<<"$m")"
	result "$layout" p50 "$(py get - p50_ms <<<"$m")"
	result "$layout" p99 "$(py get - p99_ms <<<"$m")"
	mapfile -t own < <(own_wait "$work/$layout-wait1.json")
	requests "$layout-sync" "$layout-s0" "$layout-s1" 0 "${own[@]}" "POST $plural=$((objects - half))"
	result "$layout" load-sync "$(load)"

	log_info "$layout: steady state, ${steady}s"
	settle "$metrics_main"
	snap "$layout-s2"
	result "$layout" rss-settled "$(rss "$pid_main")"
	sleep "$steady"
	snap "$layout-s3"
	result "$layout" rss-steady "$(rss "$pid_main")"
	result "$layout" peak-steady "$(peak "$pid_main")"
	requests "$layout-steady" "$layout-s2" "$layout-s3" "$(awk -v s="$steady" 'BEGIN { print s / 60 }')"
	result "$layout" load-steady "$(load)"

	log_info "$layout: the manager restarts"
	stop_manager main
	snap "$layout-s4"
	t0=$(now)
	start_manager "$layout" "$bin" second
	result "$layout" restart-sync "$(until_reconciled "$metrics_second" "$objects" "$resync_timeout" "$t0")"
	result "$layout" peak-restart "$(peak "$pid_second")"
	settle "$metrics_second"
	snap "$layout-s5"
	requests "$layout-restart" "$layout-s4" "$layout-s5" 0

	log_info "$layout: the API server restarts"
	local before resyncing
	before=$(reconciles "$metrics_second")
	reset_peak "$pid_second"
	"$scripts/control-plane.sh" restart-apiserver "$plane_dir" >"$work/$layout-apiserver-restart.log" 2>&1 || {
		tail -n 30 "$work/$layout-apiserver-restart.log" >&2
		die "$layout: the API server did not come back"
	}
	t0=$(now)
	# Both at once, from the API server's return: every object reconciled again (a relist), and
	# a Frigate made now getting its status (the manager works again).
	until_reconciled "$metrics_second" $((before + objects)) "$resync_timeout" "$t0" >"$work/$layout-resync" &
	resyncing=$!
	py create "$KUBECONFIG" "$collection" probe 0 1 >/dev/null
	py wait "$KUBECONFIG" "/apis/$group/v1/$plural" Available $((objects + 1)) "$resync_timeout" \
		>"$work/$layout-wait2.json" 2>"$work/$layout-wait2.log" || true
	t1=$(py get "$work/$layout-wait2.json" done)
	result "$layout" probe-after-restart "${t1:+$(since "$t0" "$t1")}"
	wait "$resyncing"
	result "$layout" apiserver-resync "$(cat "$work/$layout-resync")"
	settle "$metrics_second"
	result "$layout" peak-relist "$(peak "$pid_second")"
	result "$layout" rss-after-relist "$(rss "$pid_second")"
	snap "$layout-s6"
	: >"$work/empty.json"
	mapfile -t own < <(own_wait "$work/$layout-wait2.json")
	py requests "$work/empty.json" "$work/$layout-s6.json" "$resources" 0 "${own[@]}" "POST $plural=1" \
		>"$work/$layout-relist.requests.json"
	result "$layout" load-end "$(load)"
	stop_manager second
	"$scripts/control-plane.sh" stop "$plane_dir" >/dev/null 2>&1
	# The manager's own words about trouble: warnings and errors of its logs, counted.
	result "$layout" log-trouble "$(cat "$work/$layout-main.log" "$work/$layout-second.log" | grep -ciE '"level":"(warn|error)"|\b(WARN|ERROR)\b' || true)"
}

# get LAYOUT KEY
get() { awk -F'\t' -v k="$2" '$1 == k { v = $2 } END { print v }' "$work/$1.results"; }
req() { py get "$work/$1.requests.json" "${2#.}"; }

bench_report() {
	local l row
	echo
	echo "## Generated managers at scale: $objects objects ($(nproc) cores)"
	echo
	printf '| %-62s |' "measure"
	for l in $layouts; do printf ' %-26s |' "$([[ $l == go ]] && echo go/v4 || echo Rust)"; done
	echo
	printf '|%s|' "$(printf -- '-%.0s' {1..64})"
	for l in $layouts; do printf '%s|' "$(printf -- '-%.0s' {1..28})"; done
	echo
	s() { [[ $1 =~ ^[0-9.]+$ ]] && echo "$1 s" || echo "${1:-n/a}"; }
	row() { # LABEL FUNCTION: FUNCTION LAYOUT prints the cell
		printf '| %-62s |' "$1"
		for l in $layouts; do printf ' %-26s |' "$("$2" "$l")"; done
		echo
	}
	c_created() { echo "$(get "$1" created-during) s"; }
	c_sync() { echo "**$(get "$1" sync) s**"; }
	c_sync_req() { echo "$(req "$1-sync" .manager_dispatched) ($(req "$1-sync" .writes) writes, $(req "$1-sync" .watch_events) watch events)"; }
	c_p() { echo "$(get "$1" p50) / $(get "$1" p99) ms"; }
	c_rss_settled() { echo "**$(get "$1" rss-settled) MiB**"; }
	c_rss_steady() { echo "$(get "$1" rss-steady) MiB"; }
	c_peak() { echo "$(get "$1" peak-steady) MiB"; }
	c_steady_req() {
		awk -v n="$(req "$1-steady" .manager_dispatched)" -v e="$(req "$1-steady" .watch_events)" -v s="$steady" \
			'BEGIN { printf "%.1f (%.1f watch events)", n * 60 / s, e * 60 / s }'
	}
	c_steady_writes() { echo "**$(req "$1-steady" .writes_per_minute)**"; }
	c_restart() { s "$(get "$1" restart-sync)"; }
	c_restart_req() { echo "$(req "$1-restart" .manager_dispatched) ($(req "$1-restart" .writes) writes, $(req "$1-restart" .watch_events) watch events)"; }
	c_peak_restart() { echo "$(get "$1" peak-restart) MiB"; }
	c_resync() { s "$(get "$1" apiserver-resync)"; }
	c_probe() { s "$(get "$1" probe-after-restart)"; }
	c_relist_req() { echo "$(req "$1-relist" .manager_dispatched) ($(req "$1-relist" .writes) writes, $(req "$1-relist" .watch_events) watch events)"; }
	c_peak_relist() { echo "**$(get "$1" peak-relist) MiB**"; }
	c_429() {
		local w n=0 r=0
		for w in sync steady restart; do
			n=$((n + $(req "$1-$w" .too_many_requests)))
			r=$((r + $(req "$1-$w" .manager_rejected)))
		done
		echo "$n (the manager's rejected by APF: $r)"
	}
	c_429_relist() {
		echo "$(req "$1-relist" .too_many_requests) (the benchmark's watcher: $(own_429 "$work/$1-wait2.json"); APF: $(req "$1-relist" .manager_rejected))"
	}
	c_trouble() { get "$1" log-trouble; }
	c_load() { echo "$(get "$1" load-start) → $(get "$1" load-end)"; }
	row "created while the manager runs (half; the other half before)" c_created
	row "start → every object's status written" c_sync
	row "API requests of the manager during the first sync" c_sync_req
	row "reconcile p50 / p99 (first sync, the manager's histogram)" c_p
	row "resident memory after the first full sync" c_rss_settled
	row "resident memory after ${steady} s steady" c_rss_steady
	row "peak resident memory (start → steady)" c_peak
	row "API requests per minute, steady" c_steady_req
	row "writes per minute, steady" c_steady_writes
	row "manager restart → every object reconciled" c_restart
	row "API requests of the restarted manager's sync" c_restart_req
	row "peak resident memory of the restarted manager" c_peak_restart
	row "API server restart → every object reconciled again" c_resync
	row "API server restart → a new object's status written" c_probe
	row "API requests after the API server restart" c_relist_req
	row "peak resident memory from the API server restart on (relist)" c_peak_relist
	row "429s, first sync to the restarted manager's sync (all clients)" c_429
	row "429s after the API server restart (all clients)" c_429_relist
	row "warnings and errors in the manager's logs" c_trouble
	row "load (1, 5, 15 min) at start → end" c_load
	echo
	echo "The manager's requests are what APF dispatched for the service-accounts flow schema (its"
	echo "identity alone); the watch events are what the API server sent of the kind and of events to"
	echo "every watcher (the manager's and the benchmark's). Below, the API server's"
	echo "apiserver_request_total of the kind's resources and events by verb, less the benchmark's own"
	echo "(a WATCH is counted there when it ends; a client with WatchList lists through one)."
	echo
	for l in $layouts; do
		echo "$l: first sync $(describe "$l-sync")"
		echo "$l: steady (per ${steady} s) $(describe "$l-steady")"
		echo "$l: manager restart $(describe "$l-restart")"
		echo "$l: after the API server restart $(describe "$l-relist")"
	done
}

# ---------------------------------------------------------------- faults

# with_condition: how many Frigates have the condition, by the last progress line of $layout's
# waiter (`scale.py wait`, SCALE_PROGRESS_SECONDS=1).
with_condition() { sed -n 's|.* scale.py wait: \([0-9]*\)/.*|\1|p' "$work/$layout-wait.log" | tail -n1; }
# until_percent P: until P percent of the Frigates have the condition, or the waiter ($waited)
# ended; fails when none has it 180 s after $t0.
until_percent() {
	local n
	while kill -0 "$waited" 2>/dev/null; do
		n=$(with_condition)
		((${n:-0} * 100 >= $1 * objects)) && return
		if ((${n:-0} == 0)) && awk -v e="$(since "$t0")" 'BEGIN { exit !(e > 180) }'; then
			tail -n 5 "$work/$layout"-*.log >&2
			die "$layout: no Frigate has the condition 180 s after the managers started"
		fi
		sleep 1
	done
}
# until_past N: until more than N Frigates have the condition, or the waiter ($waited) ended.
until_past() {
	while kill -0 "$waited" 2>/dev/null && ((${1} >= $(with_condition))); do sleep 1; done
}
# two_leaders FILE: the seconds (rounds of FILE's "TIME MANAGER COUNT" lines) in which two
# managers' reconcile counts both grew.
two_leaders() {
	awk '{ if ($2 in c && $3 > c[$2]) grew[$1] = grew[$1] " " $2; c[$2] = $3 }
		END { n = 0; for (t in grew) if (split(grew[t], x, " ") > 1) n++; print n }' "$1"
}

faults_layout() {
	local layout=$1 bin half waited t0 leader sampler done left remaining stuck two n v
	log_info "$layout: building the project and its manager (load $(load))"
	bin=$(project "$layout")
	plane "$layout"
	half=$((objects / 2))
	: >"$work/$layout.results"
	py create "$KUBECONFIG" "$collection" f 0 "$half" >"$work/$layout-create-before.log"
	# 100 Frigates are deleted on the way: the others must all get the condition.
	SCALE_PROGRESS_SECONDS=1 python3 "$scripts/scale.py" wait "$KUBECONFIG" "/apis/$group/v1/$plural" Available \
		$((objects - 100)) "$sync_timeout" >"$work/$layout-wait.json" 2>"$work/$layout-wait.log" &
	waited=$!
	track "$waited"
	t0=$(now)
	start_manager "$layout" "$bin" a --leader-elect
	start_manager "$layout" "$bin" b --leader-elect
	# One leader at a time: every second, each live manager's reconcile count, one time stamp
	# for the round.
	(
		while :; do
			t=$(date +%s)
			for n in a b c; do
				[[ -f "$work/$layout-$n.url" && ! -f "$work/$layout-$n.killed" ]] || continue
				c=$(reconciles "$(<"$work/$layout-$n.url")") && echo "$t $n $c"
			done
			sleep 1
		done
	) >"$work/$layout-leaders.log" 2>/dev/null &
	sampler=$!
	track "$sampler"
	py create "$KUBECONFIG" "$collection" f "$half" "$objects" >"$work/$layout-create-during.log"

	until_percent "$kill_at"
	# The leader: the manager that has reconciled (the other waits for the Lease and has not).
	sleep 1
	leader=$(awk '{ c[$2] = $3 } END { for (n in c) if (c[n] > best) { best = c[n]; who = n } print who }' "$work/$layout-leaders.log")
	[[ -n $leader ]] || die "$layout: no manager has reconciled anything yet"
	n=$(with_condition)
	result "$layout" killed-at "$n"
	log_info "$layout: $n/$objects with the condition: the leader ($leader) is killed (SIGKILL), a new manager (c) starts"
	v="pid_$leader"
	date +%s >"$work/$layout-$leader.killed"
	kill -KILL "${!v}"
	start_manager "$layout" "$bin" c --leader-elect
	log_info "$layout: 100 Frigates are deleted"
	# shellcheck disable=SC2046 # one name per word
	kubectl delete "$plural" -n "$namespace" --wait=false $(printf 'f-%05d ' $(seq 100 199)) >/dev/null
	until_percent "$restart_at"
	n=$(with_condition)
	result "$layout" restarted-at "$n"
	log_info "$layout: $n/$objects with the condition: the API server restarts"
	"$scripts/control-plane.sh" restart-apiserver "$plane_dir" >"$work/$layout-apiserver-restart.log" 2>&1 || {
		tail -n 30 "$work/$layout-apiserver-restart.log" >&2
		die "$layout: the API server did not come back"
	}
	wait "$waited" || true
	kill "$sampler" 2>/dev/null || true
	done=$(py get "$work/$layout-wait.json" done)
	kubectl get "$plural" -n "$namespace" -o json >"$work/$layout-final.json"
	read -r left remaining stuck < <(py final "$work/$layout-final.json" Available)
	# Rounds in which two managers' counts both grew.
	two=$(two_leaders "$work/$layout-leaders.log")
	result "$layout" done "${done:+$(since "$t0" "$done")}"
	result "$layout" objects "$left"
	result "$layout" remaining "$remaining"
	result "$layout" stuck "$stuck"
	result "$layout" two-leaders "$two"
	result "$layout" load "$(load)"
	for n in a b c; do
		v="pid_$n"
		[[ -n ${!v:-} ]] && kill -0 "${!v}" 2>/dev/null && stop_manager "$n"
	done
	"$scripts/control-plane.sh" stop "$plane_dir" >/dev/null 2>&1
	log_info "$layout: every status after $(get "$layout" done) s; $(get "$layout" objects) Frigates, without the condition $remaining, Terminating $stuck; rounds with two reconciling managers: $two"
}

faults_report() {
	local l
	echo
	echo "## Faults at scale: $objects objects, two managers with --leader-elect ($(nproc) cores)"
	echo
	echo "| layout | with the condition when the leader was killed / the API server restarted | every status written after | Frigates left | without status | stuck Terminating | rounds two managers reconciled | load at the end |"
	echo "|---|---|---|---|---|---|---|---|"
	for l in $layouts; do
		echo "| $([[ $l == go ]] && echo go/v4 || echo Rust) | $(get "$l" killed-at) / $(get "$l" restarted-at) | $(get "$l" done) s | $(get "$l" objects) | $(get "$l" remaining) | $(get "$l" stuck) | $(get "$l" two-leaders) | $(get "$l" load) |"
	done
}

# ---------------------------------------------------------------- node

# node_up: the one-node cluster of e2e/scripts/cluster.sh in $work/node (waiting for the
# machine's node lock); its environment exported (KUBECONFIG as admin, Docker, kubectl).
node_up() {
	node_dir="$work/node"
	log_info "starting the node of e2e/scripts/cluster.sh (load $(load))"
	"$scripts/cluster.sh" start "$node_dir" >"$work/node-start.log" 2>&1 || {
		tail -n 40 "$work/node-start.log" >&2
		die "the node did not start"
	}
	eval "$("$scripts/cluster.sh" env "$node_dir")"
}

# The restart of the node with the managers in pods: the project's image (its Dockerfile), make
# deploy, two replicas with leader election (the scaffold's --leader-elect), SCALE_OBJECTS
# Frigates, half before the deploy's managers see them and half while they run; at
# SCALE_FAULT_KILL_AT percent 100 are deleted and the node restarts (cluster.sh restart: every
# process of it killed at once, containers included, then started again). The same checks as
# the faults: every Frigate with its status, none Terminating, and at no second two managers'
# reconcile counts growing (each pod's /metrics over HTTPS with a metrics reader's token,
# every second, from the host: pod IPs are reachable through the node's bridge). Mode podfaults
# runs the same with pod_faults in place of node_restart.
# deploy LAYOUT REPLICAS: a fresh project of LAYOUT, its image (its Dockerfile) loaded into the
# node, make deploy, REPLICAS managers rolled out.
deploy() {
	local layout=$1 dir="$work/$1/scale$1" img="scale$1:bench"
	log_info "$layout: the project, its image and make deploy with $2 replica(s) (load $(load))"
	project "$layout" image >/dev/null
	: >"$work/$layout.results"
	(
		cd "$dir"
		[[ $layout == go ]] || use_rust_target
		make docker-build IMG="$img" && "$scripts/cluster.sh" load "$node_dir" "$img" && make deploy IMG="$img"
	) >"$work/$layout-deploy.log" 2>&1 || {
		tail -n 40 "$work/$layout-deploy.log" >&2
		die "$layout: the image could not be built or deployed"
	}
	kubectl -n "scale$layout-system" scale deployment "scale$layout-controller-manager" --replicas="$2" >/dev/null
	kubectl -n "scale$layout-system" rollout status deployment "scale$layout-controller-manager" --timeout=300s >/dev/null
}

# node_restart (node_layout's fault in mode node): the whole node restarts; sets t_restart.
node_restart() {
	local n before
	n=$(with_condition)
	result "$layout" restarted-at "$n"
	log_info "$layout: $n/$objects with the condition, 100 deleted: the node restarts"
	before=$(containers)
	t_restart=$(now)
	"$scripts/cluster.sh" restart "$node_dir" >"$work/$layout-node-restart.log" 2>&1 || {
		tail -n 30 "$work/$layout-node-restart.log" >&2
		die "$layout: the node did not come back"
	}
	result "$layout" node-restart "$(since "$t_restart")"
	# Both managers running again in new containers (the kubelet starts them anew): the checks
	# that follow then see the managers work after the restart, whatever the sync had done before.
	wait_for 300 "both managers in new containers, Ready" anew "$before" ||
		die "$layout: the managers did not come back after the node's restart"
	result "$layout" pods-back "$(since "$t_restart")"
}

# pod_faults (node_layout's faults in mode podfaults): the leader's container killed with SIGKILL
# through the node's containerd (a crash: no SIGTERM, so no Lease released and no request
# finished; the kubelet restarts it in its pod, while the other replica takes the Lease when it
# expires), then at SCALE_FAULT_RESTART_AT percent the node's API server restarted (everything
# else keeps running); sets t_restart (the API server's restart).
pod_faults() {
	local n leader pod id t
	n=$(with_condition)
	result "$layout" killed-at "$n"
	# The leader: the container whose reconcile count is highest (the other waits for the Lease).
	leader=$(awk '{ c[$2] = $3 } END { for (n in c) if (c[n] > best) { best = c[n]; who = n } print who }' "$work/$layout-leaders.log")
	[[ -n $leader ]] || die "$layout: no manager has reconciled anything yet"
	pod=${leader%.*}
	id=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.status.containerStatuses[0].containerID}')
	log_info "$layout: $n/$objects with the condition, 100 being deleted: the leader's container ($pod) is killed"
	t=$(now)
	ctr tasks kill --signal SIGKILL "${id#containerd://}" >/dev/null 2>>"$work/$layout-kill.log"
	wait_for 300 "the killed manager back in a new container, both Ready" anew "$id" ||
		die "$layout: the killed manager did not come back"
	result "$layout" pod-back "$(since "$t")"
	# The API server restarts under a working leader: once the sync has gone on after the kill
	# (a manager has taken the Lease), at SCALE_FAULT_RESTART_AT percent at the earliest.
	until_past "$n"
	result "$layout" takeover "$(since "$t")"
	wait "$creating" && wait "$deleting" || die "$layout: the Frigates could not be created or deleted"
	until_percent "$restart_at"
	n=$(with_condition)
	result "$layout" restarted-at "$n"
	log_info "$layout: $n/$objects with the condition: the API server restarts"
	t_restart=$(now)
	"$scripts/cluster.sh" restart-apiserver "$node_dir" >"$work/$layout-apiserver-restart.log" 2>&1 || {
		tail -n 30 "$work/$layout-apiserver-restart.log" >&2
		die "$layout: the API server did not come back"
	}
	result "$layout" apiserver-restart "$(since "$t_restart")"
}

node_layout() {
	local layout=$1 dir="$work/$1/scale$1" ns="scale$1-system" half waited t0 t_restart sampler creating deleting
	local n done left remaining stuck two restarts
	deploy "$layout" 2
	half=$((objects / 2))
	kubectl create namespace "$namespace" >/dev/null
	kubectl -n "$namespace" create serviceaccount metrics-reader >/dev/null
	kubectl create clusterrolebinding "scale$layout-bench-metrics" --clusterrole="scale$layout-metrics-reader" \
		--serviceaccount="$namespace:metrics-reader" >/dev/null
	kubectl -n "$namespace" create token metrics-reader --duration=2h >"$work/$layout-metrics.token"
	py create "$KUBECONFIG" "$collection" f 0 "$half" >"$work/$layout-create-before.log"
	SCALE_PROGRESS_SECONDS=1 python3 "$scripts/scale.py" wait "$KUBECONFIG" "/apis/$group/v1/$plural" Available \
		$((objects - 100)) "$sync_timeout" >"$work/$layout-wait.json" 2>"$work/$layout-wait.log" &
	waited=$!
	track "$waited"
	t0=$(now)
	# Every second: each manager container (pod name and restart count) and its reconciles.
	(
		export SCALE_METRICS_TOKEN_FILE="$work/$layout-metrics.token"
		while :; do
			t=$(date +%s)
			kubectl -n "$ns" get pods -l control-plane=controller-manager --request-timeout=5s -o \
				jsonpath='{range .items[*]}{.metadata.name}.{.status.containerStatuses[0].restartCount} {.status.podIP}{"\n"}{end}' |
				while read -r instance ip; do
					[[ -n $ip ]] || continue
					c=$(reconciles "https://$ip:8443/metrics") && [[ -n $c ]] && echo "$t $instance $c"
				done || true # the API server is away while the node restarts
			sleep 1
		done
	) >"$work/$layout-leaders.log" 2>/dev/null &
	sampler=$!
	track "$sampler"
	# podfaults: the leader may be killed while the second half is still being created and the
	# 100 deleted (the API server stays); the node's restart waits until both are done.
	py create "$KUBECONFIG" "$collection" f "$half" "$objects" >"$work/$layout-create-during.log" &
	creating=$!
	[[ $mode == podfaults ]] || wait "$creating" || die "$layout: the Frigates could not be created"
	until_percent "$kill_at"
	# The deletions take 20 s (kubectl's 5 requests a second): in podfaults, beside the kill.
	# shellcheck disable=SC2046 # one name per word
	kubectl delete "$plural" -n "$namespace" --wait=false $(printf 'f-%05d ' $(seq 100 199)) >/dev/null &
	deleting=$!
	[[ $mode == podfaults ]] || wait "$deleting" || die "$layout: the 100 Frigates could not be deleted"
	containers() {
		kubectl -n "$ns" get pods -l control-plane=controller-manager --request-timeout=5s \
			-o jsonpath='{range .items[*]}{.status.containerStatuses[0].containerID} {end}'
	}
	# Both managers Ready, none of them in a container of BEFORE (the containers' IDs).
	anew() {
		local c
		[[ $(kubectl -n "$ns" get deployment "scale$layout-controller-manager" --request-timeout=5s \
			-o jsonpath='{.status.readyReplicas}') == 2 ]] || return 1
		for c in $(containers); do [[ " $1 " != *" $c "* ]] || return 1; done
	}
	if [[ $mode == node ]]; then node_restart; else pod_faults; fi
	wait "$waited" || true
	py create "$KUBECONFIG" "$collection" probe 0 1 >/dev/null
	python3 "$scripts/scale.py" wait "$KUBECONFIG" "/apis/$group/v1/$plural" Available $((objects - 99)) "$resync_timeout" \
		>"$work/$layout-wait2.json" 2>"$work/$layout-wait2.log" || true
	n=$(py get "$work/$layout-wait2.json" done)
	result "$layout" probe "${n:+$(since "$t_restart" "$n")}"
	kill "$sampler" 2>/dev/null || true
	done=$(py get "$work/$layout-wait.json" done)
	kubectl get "$plural" -n "$namespace" -o json >"$work/$layout-final.json"
	read -r left remaining stuck < <(py final "$work/$layout-final.json" Available)
	two=$(two_leaders "$work/$layout-leaders.log")
	restarts=$(kubectl -n "$ns" get pods -l control-plane=controller-manager \
		-o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount} {end}')
	result "$layout" done "${done:+$(since "$t0" "$done")}"
	# Negative: every status was written before the restart (a small SCALE_OBJECTS).
	result "$layout" after-restart "${done:+$(since "$t_restart" "$done")}"
	result "$layout" objects "$left"
	result "$layout" remaining "$remaining"
	result "$layout" stuck "$stuck"
	result "$layout" two-leaders "$two"
	result "$layout" restarts "$restarts"
	result "$layout" load "$(load)"
	log_info "$layout: every status $(get "$layout" after-restart) s after the $([[ $mode == node ]] && echo "node's" || echo "API server's") restart began; $left Frigates, without the condition $remaining, Terminating $stuck; rounds with two reconciling managers: $two"
	# The next layout's CRD has the same name: this one's objects and deployment go.
	kubectl delete namespace "$namespace" --timeout=600s >/dev/null
	kubectl delete clusterrolebinding "scale$layout-bench-metrics" >/dev/null
	(cd "$dir" && make undeploy ignore-not-found=true) >>"$work/$layout-deploy.log" 2>&1 || true
}

node_report() {
	local l
	echo
	echo "## The node restarted with the managers in pods: $objects objects, two replicas with leader election ($(nproc) cores)"
	echo
	echo "| layout | with the condition when the node restarted | restart → kubelet Ready | → both managers Ready in new containers | → every status | → a new Frigate's status | Frigates left | without status | stuck Terminating | rounds two managers reconciled | container restarts | load at the end |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for l in $layouts; do
		echo "| $([[ $l == go ]] && echo go/v4 || echo Rust) | $(get "$l" restarted-at) | $(get "$l" node-restart) s | $(get "$l" pods-back) s | $(get "$l" after-restart) s | $(get "$l" probe) s | $(get "$l" objects) | $(get "$l" remaining) | $(get "$l" stuck) | $(get "$l" two-leaders) | $(get "$l" restarts) | $(get "$l" load) |"
	done
}

podfaults_layout() { node_layout "$@"; }

podfaults_report() {
	local l
	echo
	echo "## The leader's pod killed and the API server restarted, the managers in pods on the node: $objects objects, two replicas with leader election ($(nproc) cores)"
	echo
	echo "| layout | with the condition when the leader was killed / the API server restarted | kill → the killed manager Ready in a new container | kill → the sync goes on | API server restart (stop → /readyz) | restart → every status | restart → a new Frigate's status | start → every status | Frigates left | without status | stuck Terminating | rounds two managers reconciled | container restarts | load at the end |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for l in $layouts; do
		echo "| $([[ $l == go ]] && echo go/v4 || echo Rust) | $(get "$l" killed-at) / $(get "$l" restarted-at) | $(get "$l" pod-back) s | $(get "$l" takeover) s | $(get "$l" apiserver-restart) s | $(get "$l" after-restart) s | $(get "$l" probe) s | $(get "$l" done) s | $(get "$l" objects) | $(get "$l" remaining) | $(get "$l" stuck) | $(get "$l" two-leaders) | $(get "$l" restarts) | $(get "$l" load) |"
	done
}

# ---------------------------------------------------------------- undeploy

# undeploy: `make undeploy` with objects present (issue 46's goal: done within 60 s, nothing left
# Terminating). The project deployed on the node as for its restart, with the scaffold's one
# replica; SCALE_OBJECTS (here default 100) Frigates, half in the manager's own namespace (which
# undeploy deletes with them in it) and half in namespace scale (deleted with the CRD), every one
# with its status first. Then `make undeploy`, timed (its kubectl delete waits until each object
# is gone; at most SCALE_UNDEPLOY_TIMEOUT, default 300 s), and what is still there of
# config/default and of the Frigates, Terminating or not. SCALE_RUST_FINALIZER=1 sets the Rust
# controller's FINALIZER (its TODO's Some("GROUP/finalizer"), with the scaffold's empty cleanup):
# what undeploy does when the user has opted into a finalizer.
undeploy_layout() {
	local layout=$1 dir="$work/$1/scale$1" ns="scale$1-system" half t0 rc=0 left
	deploy "$layout" 1
	half=$((objects / 2))
	kubectl create namespace "$namespace" >/dev/null
	py create "$KUBECONFIG" "/apis/$group/v1/namespaces/$ns/$plural" f 0 "$half" >"$work/$layout-create.log"
	py create "$KUBECONFIG" "$collection" f "$half" "$objects" >>"$work/$layout-create.log"
	python3 "$scripts/scale.py" wait "$KUBECONFIG" "/apis/$group/v1/$plural" Available "$objects" "$sync_timeout" \
		>"$work/$layout-wait.json" 2>"$work/$layout-wait.log" || die "$layout: the $objects Frigates did not all get their status"
	log_info "$layout: $objects Frigates with their status, $half of them in $ns: make undeploy (load $(load))"
	t0=$(now)
	(cd "$dir" && timeout "$undeploy_timeout" make undeploy) >"$work/$layout-undeploy.log" 2>&1 || rc=$?
	result "$layout" undeploy "$(since "$t0")"
	result "$layout" undeploy-rc "$rc"
	left=$(leftovers "$layout" | paste -sd, -)
	result "$layout" left "${left:-nothing}"
	result "$layout" load "$(load)"
	log_info "$layout: make undeploy took $(get "$layout" undeploy) s (exit $rc); left: ${left:-nothing}"
	# The next layout's CRD has the same name: whatever is stuck goes (its finalizers dropped).
	if [[ -n $left ]]; then
		kubectl get "$plural.$group" -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name}{"\n"}{end}' 2>/dev/null |
			while read -r o_ns o_name; do
				kubectl -n "$o_ns" patch "$plural.$group" "$o_name" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
			done
		(cd "$dir" && make undeploy ignore-not-found=true) >>"$work/$layout-undeploy.log" 2>&1 || true
	fi
	kubectl delete namespace "$namespace" --timeout=300s >/dev/null
}

# leftovers LAYOUT: each object of config/default still there, and the Frigates (how many, how
# many Terminating), "(Terminating)" after those with a deletion timestamp.
leftovers() {
	local n t
	kubectl kustomize "$work/$1/scale$1/config/default" | kubectl get -f - --ignore-not-found \
		-o jsonpath='{range .items[*]}{.kind}/{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' 2>/dev/null |
		awk 'NF { print $1 ($2 == "" ? "" : " (Terminating)") }'
	kubectl get crd "$plural.$group" >/dev/null 2>&1 || return 0
	n=$(kubectl get "$plural.$group" -A -o name | wc -l)
	t=$(kubectl get "$plural.$group" -A -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}' | grep -c . || true)
	((n == 0)) || echo "$n Frigates ($t Terminating)"
}

undeploy_report() {
	local l met
	echo
	echo "## make undeploy with $objects objects present, the manager in a pod ($(nproc) cores)"
	echo
	echo "| layout | make undeploy | exit | left afterwards | goal: within 60 s, nothing left | load at the end |"
	echo "|---|---|---|---|---|---|"
	for l in $layouts; do
		met=missed
		[[ $(get "$l" undeploy-rc) == 0 && $(get "$l" left) == nothing ]] &&
			awk -v t="$(get "$l" undeploy)" 'BEGIN { exit !(t <= 60) }' && met=met
		echo "| $([[ $l == go ]] && echo go/v4 || echo "Rust$([[ $rust_finalizer == 0 ]] || echo ' (FINALIZER set)')") | $(get "$l" undeploy) s | $(get "$l" undeploy-rc) | $(get "$l" left) | $met | $(get "$l" load) |"
	done
}

echo "scale: $objects objects, layouts: $layouts, load $(load)"
[[ $mode == bench || $mode == faults ]] || node_up
if [[ $parallel == 1 ]]; then
	# The layouts at once, each on its plane (the CI smoke: half the wall time; the figures are
	# then not each other's neighbours' free).
	running=()
	for l in $layouts; do
		"${mode}_layout" "$l" &
		running+=($!)
		track $!
	done
	for p in "${running[@]}"; do wait "$p" || die "a layout failed (above)"; done
else
	for l in $layouts; do "${mode}_layout" "$l"; done
fi
"${mode}_report"
failed=0
if [[ $mode == bench && $strict == 1 ]]; then
	# What must hold at any size, whatever the machine's speed (the CI smoke, e2e/run.sh scale):
	# no write while nothing changes, and every object reconciled again after each restart.
	for l in $layouts; do
		for k in restart-sync probe-after-restart; do
			[[ $(get "$l" "$k") =~ ^[0-9.]+$ ]] || {
				log_error "$l: $k: $(get "$l" "$k")"
				failed=1
			}
		done
		[[ $(req "$l-steady" .writes) == 0 ]] || {
			log_error "$l: $(req "$l-steady" .writes) writes while nothing changed: $(describe "$l-steady")"
			failed=1
		}
	done
fi
if [[ $mode == faults || $mode == node || $mode == podfaults ]]; then
	# node, podfaults: one more, the Frigate made after the restart, which must have its status too.
	left=$((objects - 100))
	[[ $mode == faults ]] || left=$((left + 1))
	for l in $layouts; do
		[[ -n $(get "$l" done) && $(get "$l" objects) == "$left" && $(get "$l" remaining) == 0 &&
			$(get "$l" stuck) == 0 && $(get "$l" two-leaders) == 0 &&
			($mode == faults || -n $(get "$l" probe)) ]] || {
			log_error "$l: an object was lost or stuck, or two managers reconciled at once (above)"
			failed=1
		}
	done
fi
if [[ $mode == undeploy ]]; then
	# Not a timed test: the time is the report's; what fails the run is undeploy's own failure
	# (or its timeout) and anything it left behind.
	for l in $layouts; do
		[[ $(get "$l" undeploy-rc) == 0 && $(get "$l" left) == nothing ]] || {
			log_error "$l: make undeploy exited $(get "$l" undeploy-rc) and left: $(get "$l" left)"
			failed=1
		}
	done
fi
exit "$failed"
