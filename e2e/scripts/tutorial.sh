#!/usr/bin/env bash
# Execute docs/tutorial.md, so that the tutorial and the code it builds cannot drift apart.
#
# The page is turned into one bash script (`tutorial.sh --print` shows it):
#   - a fenced block right after `<!-- file: PATH -->` is written to PATH (relative to the
#     directory the tutorial has cd'ed into); every go and yaml block must have one;
#   - a `sh` block is run as it is, in order, in one shell (so `cd` carries over);
#   - a `sh` block right after `<!-- run: background -->` is started in the background
#     (the manager of `make run`) and stopped at the end;
#   - `text` blocks are output shown to the reader and are not run;
#   - `<!-- project: complete -->` marks where the project's code is written: the steps after it
#     test and run it (--project stops running commands there, but still writes the files).
# The script runs in an empty directory with opbuilder on PATH, against a throwaway control
# plane (control-plane.sh) that is the cluster of the kubeconfig, with KUBEBUILDER_ASSETS set
# to the e2e control-plane binaries (the tutorial's `make test` honours it). Afterwards this
# runner checks that the manager created at least two Jobs controlled by mycronjob-sample and
# recorded them in its status.
#
# With --rust, the same for docs/rust-tutorial.md (the Rust layout: seed 000's App), and the
# check afterwards is that the manager made a Deployment and a Service controlled by app-sample
# and that `make manifests` wrote the App's webhook configurations.
#
# Usage: tutorial.sh [--rust] [--print | --file PATH | --project DIR]
#   --print        print the script and exit
#   --file PATH    print the code block for PATH and exit (the mycronjob scenario builds these)
#   --project DIR  make the page's project in DIR, with no control plane: its commands up to
#                  `<!-- project: complete -->` and every file block of the page (the sample
#                  too); print the project's directory (the cluster stage deploys it)
# Environment: OPBUILDER_BIN (default $OPBUILDER_TARGET_DIR/debug/opbuilder), TUTORIAL_KEEP=1 keeps the
# directory, TUTORIAL_JOBS_TIMEOUT (seconds to wait for the Jobs, default 120), TUTORIAL_DOC (the
# page to read instead of docs/tutorial.md or docs/rust-tutorial.md).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
doc="$OPBUILDER_ROOT/docs/tutorial.md"
rust=0
if [[ ${1:-} == --rust ]]; then
	rust=1
	doc="$OPBUILDER_ROOT/docs/rust-tutorial.md"
	shift
fi
# Another text of the page (alpha-update.sh: the page of an earlier release).
doc=${TUTORIAL_DOC:-$doc}

# extract DOC [project]: print the bash script that performs the page; with `project`, the
# commands after `<!-- project: complete -->` are left out (its file blocks are kept).
extract() {
	awk -v project="${2:-}" '
		function fail(msg) { printf "%s:%d: %s\n", FILENAME, NR, msg > "/dev/stderr"; bad = 1; exit 1 }
		!fence && /^<!-- project: complete -->$/ { complete = 1; next }
		!fence && /^<!-- file: [^ ]+ -->$/ { file = $3; next }
		!fence && /^<!-- run: background -->$/ { background = 1; next }
		!fence && /^```/ {
			fence = 1
			lang = substr($0, 4)
			if (file != "") {
				printf "mkdir -p \"$(dirname %s)\"\ncat >%s <<'\''TUTORIAL_EOF'\''\n", file, file
				mode = "file"
			} else if (lang == "sh" && project != "" && complete) {
				mode = "skip"
			} else if (lang == "sh" && background) {
				print "tutorial_background <<'\''TUTORIAL_EOF'\''"
				mode = "file"
			} else if (lang == "sh") {
				mode = "run"
			} else if (lang == "text") {
				mode = "skip"
			} else {
				fail("a ```" lang " block needs a <!-- file: PATH --> comment right before it")
			}
			file = ""; background = 0
			next
		}
		fence && /^```$/ {
			fence = 0
			if (mode == "file") print "TUTORIAL_EOF"
			next
		}
		fence && mode != "skip" { print }
		!fence && (file != "" || background) && !/^[[:space:]]*$/ {
			fail("<!-- file --> or <!-- run --> must come right before a fenced block")
		}
		END {
			if (!bad && fence) fail("unclosed fenced block")
			if (!bad && project != "" && !complete) fail("no <!-- project: complete --> line")
		}
	' "$1"
}

case ${1:-} in
--print)
	extract "$doc"
	exit 0
	;;
--file)
	[[ -n ${2:-} ]] || die "usage: $0 --file PATH"
	awk -v want="<!-- file: $2 -->" '
		$0 == want { take = 1; next }
		take && /^```/ { if (inside) exit; inside = 1; next }
		take && inside { print; found = 1 }
		END { exit !found }
	' "$doc" || die "$doc has no code block for $2"
	exit 0
	;;
--project)
	[[ -n ${2:-} ]] || die "usage: $0 [--rust] --project DIR"
	project_dir=$(mkdir -p "$2" && cd "$2" && pwd)
	;;
esac

if ((rust)); then
	need_cmd cargo make curl setsid
	# The Rust projects of the e2e tests share one target directory (dependencies built once).
	use_rust_target
	# The tutorial edits the project and builds it again: incremental, as a user's cargo.
	unset CARGO_INCREMENTAL
	# What the manager logs once it runs (after `cargo run` has built it).
	started='serving HTTP'
else
	need_cmd go make curl setsid
	started='Starting workers'
fi
OPBUILDER_BIN=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $OPBUILDER_BIN ]] || die "opbuilder binary $OPBUILDER_BIN missing: run 'cargo build' (or set OPBUILDER_BIN)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-tutorial.XXXXXX")
plane="$work/plane"
extract "$doc" ${project_dir:+project} >"$work/tutorial-steps.sh"
cleanup() {
	local rc=$?
	if [[ -f $work/manager.pid ]]; then
		# make run -> go run -> the manager: one process group, started by setsid.
		kill -TERM -- "-$(cat "$work/manager.pid")" 2>/dev/null || true
		sleep 2
		kill -KILL -- "-$(cat "$work/manager.pid")" 2>/dev/null || true
	fi
	"$here/control-plane.sh" stop "$plane" >/dev/null 2>&1 || true
	if ((rc == 0)) && [[ ${TUTORIAL_KEEP:-0} != 1 ]]; then
		rm -rf "$work"
	else
		log_info "kept $work (steps: tutorial-steps.sh, manager log: manager.log)"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

mkdir -p "$work/path" "$work/run"
ln -s "$OPBUILDER_BIN" "$work/path/opbuilder"
export PATH="$work/path:$PATH"

# run_steps DIR: the page's steps in DIR, in one subshell; the directory they end in goes to
# $work/end-dir.
run_steps() {
	(
		cd "$1"
		# Tools for `make` (controller-gen, kustomize) come from the e2e cache once the
		# project exists; seeding them only saves building them again.
		tutorial_background() {
			local script ready=$started pgid
			script=$(cat)
			# A second `make run` of the page: the reader stopped the first with Ctrl-C.
			if [[ -f $work/manager.pid ]]; then
				pgid=$(cat "$work/manager.pid")
				kill -INT -- "-$pgid" 2>/dev/null || true
				wait_for 60 "the first manager to stop" bash -c "! kill -0 -- -$pgid 2>/dev/null" ||
					die "the tutorial's first manager did not stop on Ctrl-C"
			fi
			# With webhooks (Go's internal/webhook/, a Rust module in src/webhooks/), make run
			# is ready once it serves them from this machine.
			if [[ -d internal/webhook ]] || ls src/webhooks 2>/dev/null | grep -qv '^mod\.rs$'; then
				ready='[Ss]erving the webhooks from this machine'
			fi
			log_info "background: $script"
			setsid bash -c "$script" </dev/null >"$work/manager.log" 2>&1 &
			echo $! >"$work/manager.pid"
			wait_for 600 "the manager to start" grep -q "$ready" "$work/manager.log" ||
				{ tail -n 40 "$work/manager.log" >&2; die "the manager of the tutorial did not start"; }
		}
		opbuilder() {
			[[ ! -f Makefile ]] || "$here/seed-tools.sh" "$PWD" >/dev/null
			command opbuilder "$@"
			[[ ! -f Makefile ]] || "$here/seed-tools.sh" "$PWD" >/dev/null
		}
		set -x
		# shellcheck disable=SC1091
		source "$work/tutorial-steps.sh"
		{ set +x; } 2>/dev/null
		pwd >"$work/end-dir"
	)
}

if [[ -n ${project_dir:-} ]]; then
	log_info "making the project of ${doc#"$OPBUILDER_ROOT"/} in $project_dir"
	run_steps "$project_dir" >&2
	cat "$work/end-dir"
	exit 0
fi

"$here/build-control-plane.sh" >/dev/null
"$here/control-plane.sh" start "$plane"
eval "$("$here/control-plane.sh" env "$plane")"
ln -s "$OPBUILDER_E2E_KUBECTL" "$work/path/kubectl"
KUBEBUILDER_ASSETS=$(k8s_bin_dir)
export KUBEBUILDER_ASSETS KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=${KUBEBUILDER_CONTROLPLANE_START_TIMEOUT:-180s}
# The manager of `make run` serves its probes on :8081 and its webhooks on :9443; another
# process there would make it fail.
for port in 8081 9443; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port is taken; the tutorial's \`make run\` needs it"
	fi
done

log_info "running ${doc#"$OPBUILDER_ROOT"/} in $work/run"
start=$SECONDS
run_steps "$work/run"
log_info "tutorial commands done in $(fmt_duration $((SECONDS - start)))"

if ((rust)); then
	uid=$(kubectl -n default get app app-sample -o 'jsonpath={.metadata.uid}')
	[[ -n $uid ]] || die "app-sample does not exist"
	for kind in deployment service; do
		owner=$(kubectl -n default get "$kind" app-sample -o 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].uid}')
		[[ $owner == "$uid" ]] || die "the $kind app-sample is not controlled by the App app-sample (owner '$owner')"
	done
	# The webhook chapter's `make test` ran its test on an API server; its manifests are generated.
	for path in /mutate-ingress-example-com-v1beta1-app /validate-ingress-example-com-v1beta1-app; do
		grep -q -- "path: $path" "$work/run/app-operator/config/webhook/manifests.yaml" ||
			die "config/webhook/manifests.yaml of the tutorial has no webhook at $path"
	done
	# The webhooks, served by the second make run: the image defaulted, the Ingress refused.
	image=$(kubectl -n default get app app-latest -o 'jsonpath={.spec.image}')
	ingress=$(kubectl -n default get app app-latest -o 'jsonpath={.spec.enable_ingress}')
	[[ $image == nginx:latest && $ingress != true ]] ||
		die "the webhooks under make run: image '$image' (want nginx:latest, defaulted), enable_ingress '$ingress' (the patch refused)"
	log_info "the webhooks under make run: the image defaulted, the Ingress without a Service refused"
	log_info "tutorial (Rust): ok in $(fmt_duration $((SECONDS - start)))"
	exit 0
fi
uid=$(kubectl -n default get mycronjob mycronjob-sample -o 'jsonpath={.metadata.uid}')
[[ -n $uid ]] || die "mycronjob-sample does not exist"
owned_jobs() {
	kubectl -n default get jobs -o 'jsonpath={range .items[*]}{.metadata.name}{"\t"}{.metadata.ownerReferences[?(@.controller==true)].uid}{"\n"}{end}' |
		awk -F'\t' -v uid="$uid" '$2 == uid { n++ } END { exit !(n >= 2) }'
}
wait_for "${TUTORIAL_JOBS_TIMEOUT:-120}" "2 Jobs controlled by mycronjob-sample" owned_jobs ||
	{ tail -n 40 "$work/manager.log" >&2; die "the tutorial's operator did not create 2 Jobs"; }
last=$(kubectl -n default get mycronjob mycronjob-sample -o 'jsonpath={.status.lastScheduleTime}')
active=$(kubectl -n default get mycronjob mycronjob-sample -o 'jsonpath={.status.active[*].name}')
[[ -n $last && -n $active ]] || die "status not recorded: lastScheduleTime='$last' active='$active'"
log_info "Jobs created by the tutorial's operator: $active (last run $last)"
# The webhooks, served by make run: suspend defaulted, the unparsable schedule refused.
suspend=$(kubectl -n default get mycronjob mycronjob-sample -o 'jsonpath={.spec.suspend}')
schedule=$(kubectl -n default get mycronjob mycronjob-sample -o 'jsonpath={.spec.schedule}')
[[ $suspend == false && $schedule == "@every 5s" ]] ||
	die "the webhooks under make run: suspend '$suspend' (want false, defaulted), schedule '$schedule' (want @every 5s)"
log_info "the webhooks under make run: suspend defaulted, the bad schedule refused"
log_info "tutorial: ok in $(fmt_duration $((SECONDS - start)))"
