#!/usr/bin/env bash
# The end-to-end suite: everything that needs Go, kustomize or a Kubernetes control plane.
#
#   bash e2e/run.sh              # all of it
#   bash e2e/run.sh smoke        # only the control-plane smoke test
#   bash e2e/run.sh golden       # only the golden-tree checks (with make test)
#   bash e2e/run.sh scenarios    # only the scenarios on a live control plane
#   bash e2e/run.sh rust         # the Rust layout's managers (cluster- and namespace-scoped) on a live control plane (their golden
#                                # trees' make test runs in `golden`) and its webhook and
#                                # metrics objects against go/v4's
#   bash e2e/run.sh parity [SCENARIO...]  # only the differential suite against Kubebuilder ([e2e] kubebuilder)
#                                         # (and generate-parity below, for Kubebuilder's scripts)
#   bash e2e/run.sh generate-parity [SCENARIO...]  # only `alpha generate` of Kubebuilder's scripts
#   bash e2e/run.sh faults       # only kill -9 at random points and ENOSPC on a tmpfs (root)
#   bash e2e/run.sh envtest-offline  # make envtest-from-source + make test of a golden project, no helpers
#   bash e2e/run.sh tutorial     # docs/tutorial.md, executed against a live control plane
#   bash e2e/run.sh rust-tutorial  # docs/rust-tutorial.md, likewise
#   bash e2e/run.sh helm         # the helm plugin's chart: helm lint/template/install (live plane)
#   bash e2e/run.sh lint-logcheck  # make lint with golangci-lint built with .custom-gcl.yml's logcheck
#   bash e2e/run.sh alpha-update # release 0.1.0 reproduced; 0.1.0 projects with user code updated
#   bash e2e/run.sh kubebuilder-releases [RELEASE...]  # projects made by Kubebuilder v4.0.0, v4.6.0 and
#                                # [e2e] kubebuilder: opbuilder's commands in them, alpha update, make build/test
#   bash e2e/run.sh shapes       # the Go of a project whose PROJECT has the shapes of e2e/fixtures/shapes/groups builds
#   bash e2e/run.sh delete       # delete api/webhook in changed go/v4 and Rust projects: the user's code stays, both build
#   bash e2e/run.sh rust-telemetry  # telemetry.opbuilder.io/v1-alpha in the Rust layout: make run of the golden
#                                # tree rust-telemetry traced to a real OpenTelemetry Collector, /debug/loglevel
#   bash e2e/run.sh rust-external  # Rust controllers for other projects' CRDs (cert-manager's Certificate, Gateway
#                                # API's HTTPRoute) with kopium's types: make lint, make test, make external-types
#   bash e2e/run.sh install      # the crate as published: package, publish --dry-run, cargo install, use
#   bash e2e/run.sh instructions # the instruction budget: callgrind's counts of a release build's commands
#                                # against e2e/instructions.toml (e2e/scripts/instructions.sh)
#   bash e2e/run.sh scale        # the smoke of e2e/bench.sh's scale section: 50 objects, a go/v4 and a
#                                # Rust manager, no write at steady state, both restarts recovered
#   bash e2e/run.sh cluster      # a real one-node cluster (e2e/scripts/cluster.sh, root): go/v4 and Rust
#                                # projects' images built by their Dockerfiles, deployed (make deploy, the
#                                # helm chart), proven in pods
#
# `all` and `golden` run their jobs (the control-plane build, each golden tree, each stage) on
# OPBUILDER_E2E_JOBS workers (default 2): a worker takes the next job in order, writes its output
# to a log and prints the log whole when the job ends; the run fails at the end naming every job
# that failed. OPBUILDER_E2E_JOBS=1 runs them one after the other with their output as it comes.
#
# Needs: cargo (crates.io reachable), go (module proxy reachable), make, kubectl, curl. Builds the control-plane binaries
# from source on first use and caches them in ~/.cache/opbuilder-e2e (see docs/testing.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=scripts/lib.sh
source "$here/scripts/lib.sh"

what=${1:-all}
shift || true
if [[ $what == faults ]]; then
	# Needs neither Go nor a control plane.
	"$here/scripts/faults.sh"
	exit 0
fi
if [[ $what == install ]]; then
	# Needs cargo, crates.io and man; neither Go nor a control plane.
	"$here/scripts/install.sh"
	exit 0
fi
if [[ $what == instructions ]]; then
	# Needs cargo and valgrind (installed when missing, as root); neither Go nor a control plane.
	"$here/scripts/instructions.sh"
	exit 0
fi
need_cmd cargo go make kubectl flock
workers=${OPBUILDER_E2E_JOBS:-2}
[[ $workers =~ ^[1-9][0-9]*$ ]] || die "OPBUILDER_E2E_JOBS must be a positive number of workers, e.g. 2; got '$workers'"
start=$SECONDS

log_info "building opbuilder"
cargo build --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
export OPBUILDER_BIN="$OPBUILDER_TARGET_DIR/debug/opbuilder"

# The golden trees, the cold ones first: deployimage downloads the Go modules and builds the
# tools, rust builds the crates.
golden_jobs() {
	local t name jobs=(golden:deployimage golden:rust)
	for t in "$OPBUILDER_ROOT"/e2e/testdata/*/tree; do
		name=$(basename "$(dirname "$t")")
		[[ $name == deployimage || $name == rust ]] || jobs+=("golden:$name")
	done
	printf '%s\n' "${jobs[@]}"
}

jobs=()
case "$what" in
all)
	# The longest job, `cluster`, beside the control-plane build: while the plane builds it
	# installs packages and debootstraps the node's base (network, little CPU), then builds the
	# node's parts from the plane's warm Go cache. Then the jobs that compile no Go (the Rust tree,
	# the crate's install, the faults, the instruction budget); then the longest first, so the last
	# job to end is a short one.
	mapfile -t golden < <(golden_jobs)
	jobs=(control-plane cluster golden:rust install faults instructions golden:deployimage smoke parity scenarios alpha-update
		kubebuilder-releases "${golden[@]:2}" rust-tutorial envtest-offline rust rust-telemetry rust-external helm lint-logcheck tutorial shapes delete scale generate-parity)
	;;
golden) mapfile -t jobs < <(golden_jobs) ;;
smoke | scenarios | rust | envtest-offline | tutorial | rust-tutorial | helm | alpha-update | kubebuilder-releases | lint-logcheck | cluster | shapes | delete | rust-external | rust-telemetry | scale) jobs=("$what") ;;
parity) jobs=(generate-parity parity) ;;
generate-parity) jobs=(generate-parity) ;;
*) die "unknown stage '$what' (see the usage at the top of e2e/run.sh)" ;;
esac
if [[ $what != all && $what != parity && $what != generate-parity ]]; then
	log_info "control-plane binaries (cached by version)"
	"$here/scripts/build-control-plane.sh"
fi

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-e2e.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT

# run_job NAME: one job, as its own processes (each script stops at its first error).
run_job() {
	local s="$here/scripts"
	case "$1" in
	control-plane | golden:rust | install | faults | instructions) ;;
	# A job that builds Go waits for the control plane (whose build lock it takes): the build
	# cache then has the k8s.io packages it would otherwise compile a second time beside it.
	*) "$s/build-control-plane.sh" >/dev/null || return 1 ;;
	esac
	case "$1" in
	control-plane) "$s/build-control-plane.sh" ;;
	smoke) "$s/smoke-control-plane.sh" ;;
	# One golangci-lint cache for the golden trees of this run (see check-golden.sh).
	golden:*) OPBUILDER_LINT_CACHE="$run_dir/golangci-cache" "$s/check-golden.sh" "${1#golden:}" ;;
	scenarios) "$s/scenarios.sh" ;;
	rust) "$s/rust-live.sh" && "$s/rust-namespaced-live.sh" && "$s/rust-parity.sh" && "$s/rust-nogo.sh" ;;
	envtest-offline) "$s/envtest-offline.sh" ;;
	# The Go and Rust tutorials both run a manager on the default ports (:8080, :8081): one at a time.
	tutorial) flock "$run_dir/default-ports.lock" "$s/tutorial.sh" ;;
	rust-tutorial) flock "$run_dir/default-ports.lock" "$s/tutorial.sh" --rust ;;
	helm) "$s/helm-chart.sh" ;;
	lint-logcheck) OPBUILDER_LINT_CACHE="$run_dir/golangci-cache" "$s/lint-logcheck.sh" ;;
	cluster) "$s/cluster-e2e.sh" ;;
	generate-parity) "$s/generate-parity.sh" "${job_args[@]}" ;;
	alpha-update) "$s/alpha-update.sh" ;;
	kubebuilder-releases) "$s/kubebuilder-releases.sh" "${job_args[@]}" ;;
	shapes) "$s/shapes.sh" ;;
	delete) "$s/delete-builds.sh" ;;
	rust-external) "$s/rust-external.sh" ;;
	rust-telemetry) "$s/rust-telemetry.sh" ;;
	# The benchmark's scale section, small and strict: it proves the section works and that no
	# manager writes while nothing changes; the figures are e2e/bench.sh's (BENCH_SECTIONS=scale).
	# kube-apiserver stops accepting connections at once on SIGTERM but lingers for 30 s with the
	# managers' watches open: killed after 5 s here (OPBUILDER_E2E_STOP_TIMEOUT).
	scale) SCALE_OBJECTS=50 SCALE_STEADY_SECONDS=20 SCALE_SETTLE_SECONDS=5 SCALE_PARALLEL=1 SCALE_RUST_PROFILE=debug SCALE_STRICT=1 \
		OPBUILDER_E2E_STOP_TIMEOUT=5 "$s/scale.sh" bench "$OPBUILDER_BIN" ;;
	parity) "$s/parity.sh" "${job_args[@]}" ;;
	faults) "$s/faults.sh" ;;
	install) "$s/install.sh" ;;
	instructions) "$s/instructions.sh" ;;
	*) die "unknown job $1" ;;
	esac
}
job_args=("$@")

# run_job_cpu NAME FILE: run_job NAME in a subshell, then write `times` to FILE: its second line
# is the CPU time (user, system) of the processes the job waited for: its own compilers, tests
# and tools, not what Docker's or the node's daemons run for it. It says which job costs CPU on
# a cold run, where the wall time of each depends on what ran beside it.
run_job_cpu() {
	(
		rc=0
		run_job "$1" || rc=$?
		# Into a file: in a pipe or $(...), `times` would run in a fork that has no children.
		times >"$2"
		exit "$rc"
	)
}
# cpu_of FILE: ", CPU 12m34s" (user plus system) from a run_job_cpu FILE, or nothing.
cpu_of() {
	local c
	c=$(awk 'function s(t, a) { split(t, a, "m"); return a[1] * 60 + a[2] }
		NR == 2 { printf "%d", s($1) + s($2) }' "$1" 2>/dev/null) &&
		[[ $c =~ ^[0-9]+$ ]] && printf ', CPU %s' "$(fmt_duration "$c")"
	return 0
}
# /proc/stat's busy and idle ticks of the whole machine, for the share it was busy during the run.
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
read -r busy0 idle0 < <(machine_ticks)

((workers <= ${#jobs[@]})) || workers=${#jobs[@]}
failed=()
if ((workers == 1)); then
	for job in "${jobs[@]}"; do
		t=$SECONDS
		if run_job_cpu "$job" "$run_dir/cpu"; then
			log_info "job $job: passed in $(fmt_duration $((SECONDS - t)))$(cpu_of "$run_dir/cpu")"
		else
			log_error "job $job: FAILED after $(fmt_duration $((SECONDS - t)))$(cpu_of "$run_dir/cpu")"
			failed+=("$job")
		fi
	done
else
	log_info "${#jobs[@]} jobs on $workers workers: ${jobs[*]}"
	echo 0 >"$run_dir/next"
	: >"$run_dir/failed"
	# next_job: the index of the next job nobody has taken.
	next_job() {
		(
			flock 8
			local i
			i=$(<"$run_dir/next")
			echo $((i + 1)) >"$run_dir/next"
			echo "$i"
		) 8>"$run_dir/next.lock"
	}
	worker() {
		local w=$1 i job t log result
		while i=$(next_job) && ((i < ${#jobs[@]})); do
			job=${jobs[i]}
			log="$run_dir/${job//[:\/]/-}.log"
			log_info "worker $w: job $job started"
			t=$SECONDS
			if run_job_cpu "$job" "$log.cpu" >"$log" 2>&1 </dev/null; then
				result="passed in $(fmt_duration $((SECONDS - t)))$(cpu_of "$log.cpu")"
			else
				result="FAILED after $(fmt_duration $((SECONDS - t)))$(cpu_of "$log.cpu")"
				echo "$job" >>"$run_dir/failed"
			fi
			(
				flock 7
				printf '\n=== job %s (worker %s): %s; its output:\n' "$job" "$w" "$result"
				cat "$log"
				printf '=== end of job %s: %s\n\n' "$job" "$result"
			) 7>"$run_dir/output.lock"
		done
	}
	pids=()
	for ((w = 1; w <= workers; w++)); do
		worker "$w" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || true
	done
	mapfile -t failed <"$run_dir/failed"
fi
# A CI log is often read from its end: the end of each failed job's output once more, last.
if ((workers > 1)); then
	for job in "${failed[@]}"; do
		printf '\n=== the last 150 lines of the failed job %s (whole above):\n' "$job"
		tail -n 150 "$run_dir/${job//[:\/]/-}.log"
		printf '=== end of the failed job %s\n' "$job"
	done
fi
read -r busy1 idle1 < <(machine_ticks)
if ((busy1 + idle1 > busy0 + idle0)); then
	log_info "the machine's CPUs were busy $(((busy1 - busy0) * 100 / (busy1 - busy0 + idle1 - idle0)))% of the run (/proc/stat, every process on it)"
fi
((${#failed[@]} == 0)) || die "e2e failed after $(fmt_duration $((SECONDS - start))): ${failed[*]}"
log_info "e2e finished in $(fmt_duration $((SECONDS - start)))"
