#!/usr/bin/env bash
# Measure a CI run the way docs/testing.md reports it: `.ci/run` of a clean clone of this
# checkout's commit (with ../shared beside it, as CI has it), nothing else running, and by default
# every cache emptied first (a cold run). While it runs, /proc/stat is sampled every 5 seconds
# (how busy the CPUs were) and, where the kernel has it, BSD process accounting records every
# process that ends (its command and CPU time), so cpu-profile.py can say afterwards which
# commands and which e2e jobs spent the CPU, including what Docker's and the node's daemons ran.
#
# Usage: cold-run.sh --yes OUT_DIR [REF]     empty the caches, then measure .ci/run of REF
#                                            (default HEAD) into OUT_DIR (a new directory)
#        cold-run.sh --warm OUT_DIR [REF]    the same with the caches kept (a warm run)
#
# The caches emptied: Go's module cache (`go clean -modcache`) and build cache, the e2e cache
# ($OPBUILDER_E2E_CACHE: the control plane, the node's parts, Docker's data root, the tools, the
# earlier releases, the shared Rust build directory), ~/.cache/opbuilder, golangci-lint's,
# goimports' and setup-envtest's. cargo's registry stays (crates.io is not what a cold run is
# about). Refused while anything runs from the e2e cache (a node of cluster.sh, its Docker daemon,
# a control plane).
#
# OUT_DIR gets: opbuilder/ (the clone), ci.log (.ci/run's output), stat.log, pacct (when process
# accounting works: needs root and acct's accton, which apt-get installs when missing), profile.txt
# (cpu-profile.py's report) and result ("rc=N wall=Ss").
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# usage_error [MESSAGE]: the message and the usage on stderr, exit 2.
usage_error() {
	[[ -z ${1:-} ]] || echo "cold-run.sh: $1" >&2
	echo "usage: cold-run.sh --yes|--warm OUT_DIR [REF] (e.g. cold-run.sh --yes /tmp/cold main)" >&2
	exit 2
}

mode=${1:-}
case "$mode" in
--yes) cold=1 ;;
--warm) cold=0 ;;
*) usage_error "the first argument must be --yes (empty every cache, then measure) or --warm (keep them); got '${mode}'" ;;
esac
out=${2:-}
ref=${3:-HEAD}
[[ -n $out && $# -le 3 ]] || usage_error
[[ ! -e $out ]] || usage_error "OUT_DIR '$out' exists; give a new directory, e.g. $out-2"
commit=$(git -C "$OPBUILDER_ROOT" rev-parse --verify --quiet "$ref^{commit}") ||
	usage_error "REF '$ref' is not a commit of $OPBUILDER_ROOT (e.g. main, HEAD or a hash)"
need_cmd git go
if pgrep -f -- "$E2E_CACHE/" >/dev/null 2>&1; then
	die "a process runs from $E2E_CACHE (a node of cluster.sh, its Docker daemon or a control plane: $(pgrep -a -f -- "$E2E_CACHE/" | head -n 1)); stop it first"
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
if ((cold)); then
	log_info "emptying the caches (Go's module and build caches, $E2E_CACHE, ~/.cache/opbuilder, golangci-lint's)"
	gocache=$(go env GOCACHE)
	go clean -modcache
	rm -rf "$gocache" "$E2E_CACHE" "$HOME/.cache/opbuilder" "$HOME/.cache/goimports" \
		"$HOME/.cache/golangci-lint" "$HOME/.cache/kubebuilder-envtest"
fi
git clone -q --no-checkout "$OPBUILDER_ROOT" "$out/opbuilder"
git -C "$out/opbuilder" checkout -q --detach "$commit"
# ../shared beside the clone, as CI has it: beside this checkout, or beside the main work tree
# when this is a `git worktree` elsewhere.
for shared in "$OPBUILDER_ROOT/../shared" "$(dirname "$(git -C "$OPBUILDER_ROOT" rev-parse --path-format=absolute --git-common-dir)")/../shared"; do
	if [[ -d $shared ]]; then
		ln -s "$(cd "$shared" && pwd)" "$out/shared"
		break
	fi
done
[[ -e $out/shared ]] || log_warn "no ../shared beside $OPBUILDER_ROOT: the clone runs without it (CI has it)"
log_info "measuring .ci/run of $(git -C "$out/opbuilder" log --oneline -1) in $out ($( ((cold)) && echo cold || echo warm))"

# Process accounting: every process that ends, with its command and CPU time.
acct=0
if [[ $(id -u) == 0 ]]; then
	if ! command -v accton >/dev/null && command -v apt-get >/dev/null; then
		apt-get install -y -qq acct >/dev/null 2>&1 || log_warn "apt-get install acct failed; no process accounting"
	fi
	if command -v accton >/dev/null && : >"$out/pacct" && accton "$out/pacct" >/dev/null 2>&1; then
		acct=1
	else
		rm -f "$out/pacct"
		log_warn "process accounting is not available here; the report has the jobs' own CPU times only"
	fi
fi
sampler=""
stop_measuring() {
	[[ -z $sampler ]] || kill "$sampler" 2>/dev/null || true
	if ((acct)); then accton off >/dev/null 2>&1 || true; fi
}
trap stop_measuring EXIT
(while sleep 5; do echo "$(date -u +%T) $(grep '^cpu ' /proc/stat)"; done >"$out/stat.log") &
sampler=$!

start=$SECONDS
rc=0
(cd "$out/opbuilder" && .ci/run) >"$out/ci.log" 2>&1 || rc=$?
wall=$((SECONDS - start))
stop_measuring
trap - EXIT
echo "rc=$rc wall=${wall}s" >"$out/result"
log_info ".ci/run: exit $rc after $(fmt_duration "$wall") (log: $out/ci.log)"
if ((acct)); then
	python3 "$scripts/cpu-profile.py" "$out/pacct" "$out/ci.log" >"$out/profile.txt" ||
		log_warn "cpu-profile.py failed; the records are in $out/pacct"
	log_info "CPU by command and by job: $out/profile.txt"
fi
exit "$rc"
