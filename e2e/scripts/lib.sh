#!/usr/bin/env bash
# Shared helpers for the e2e shell scripts. Source it, do not run it:
#
#   # shellcheck source=lib.sh
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Provides:
#   OPBUILDER_ROOT        repository root (derived from this file's location)
#   E2E_CACHE             ${OPBUILDER_E2E_CACHE:-$HOME/.cache/opbuilder-e2e}
#   pin KEY               print a value from versions.toml ("section.key" or "key")
#   k8s_platform          print "<goos>-<goarch>" of this host, e.g. linux-amd64
#   k8s_bin_dir           print $E2E_CACHE/k8s/<kubernetes>-<goos>-<goarch>
#   k8s_ldflags           print the -ldflags of the binaries built from k8s.io/kubernetes
#   pki_ca, pki_sign      a certificate authority and certificates it signs (openssl)
#   log_info/log_warn/log_error MSG...   timestamped messages on stderr
#   die MSG...            log_error, then exit 1
#   wait_for SECS DESC CMD...  poll CMD until it succeeds, at most SECS seconds
#   free_port             a port nothing listens on, below the ephemeral range
#   make_run_start, make_run_stop  `make run` of a project in a session of its own, serving its
#                         webhooks from this machine, and its stop (a signal to the session)
#   need_cmd NAME...      fail early when a required tool is missing
#   rust_target_dir, use_rust_target   the cargo target of the generated Rust projects
#   manager_identity, token_kubeconfig  a manager's ServiceAccount and RBAC, and a kubeconfig as it
#   keep_yours/keep_theirs FILE  resolve every conflict `opbuilder alpha update` marked in FILE for
#                         the user, or for the new templates
#
# Nothing here talks to the network.

# Re-sourcing is harmless, but keep the definitions in one place.
if [[ -n "${_OPBUILDER_E2E_LIB_LOADED:-}" ]]; then
	return 0
fi
_OPBUILDER_E2E_LIB_LOADED=1

OPBUILDER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E_CACHE="${OPBUILDER_E2E_CACHE:-$HOME/.cache/opbuilder-e2e}"
OPBUILDER_VERSIONS_FILE="${OPBUILDER_VERSIONS_FILE:-$OPBUILDER_ROOT/versions.toml}"
# Where `cargo build` puts opbuilder: CARGO_TARGET_DIR when set (cargo reads a relative one from
# the current directory), else target/ in the repository.
OPBUILDER_TARGET_DIR="${CARGO_TARGET_DIR:-$OPBUILDER_ROOT/target}"
[[ $OPBUILDER_TARGET_DIR == /* ]] || OPBUILDER_TARGET_DIR="$PWD/$OPBUILDER_TARGET_DIR"
export OPBUILDER_ROOT E2E_CACHE OPBUILDER_VERSIONS_FILE OPBUILDER_TARGET_DIR

# Every Go build of the e2e tests (generated projects, Kubebuilder's, the tools, the control
# plane) uses the flags the control-plane binaries and the tools are built with: no cgo (as the
# generated Dockerfile builds the manager) and -trimpath. Go's build cache then compiles the
# k8s.io packages, most of a project's dependencies, once for all of them.
export CGO_ENABLED=0
[[ " ${GOFLAGS:-} " == *" -trimpath "* ]] || export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
# `go test` runs a subset of go vet's checks before the tests; every generated Makefile's `test`
# and `test-e2e` run the whole of `go vet ./...` just before (`vet` is among their prerequisites),
# so the subset adds nothing there. Its analysis is not the same as go vet's, so it would compute
# its own facts for every dependency (the k8s.io packages, controller-runtime) once more. Other
# go commands ignore the flag (a flag in GOFLAGS that a command lacks is skipped); `go vet`
# itself is unaffected.
[[ " ${GOFLAGS:-} " == *" -vet="* ]] || export GOFLAGS="$GOFLAGS -vet=off"
# The Go compiler and linker collect garbage less often: about a fifth less CPU for a cold build
# (the dependencies of a golden project's manager, 2 cores: 457 s of user time at Go's default
# GOGC=100, 353 s at 400, 375 s at 1000), for a larger heap (the biggest compile 470 MB, 715 MB).
# GOMEMLIMIT makes a Go process that nears it collect anyway (golangci-lint holds every
# dependency's syntax and types: a fourfold heap of that could crowd the other worker). Both also
# reach the Go programs the tests start (kube-apiserver, etcd, managers, the node's daemons),
# which is harmless with this machine's memory. A caller's own values win.
export GOGC="${GOGC:-400}" GOMEMLIMIT="${GOMEMLIMIT:-6GiB}"

_log() {
	local level=$1
	shift
	printf '%s [%s] %s: %s\n' "$(date -u +%H:%M:%S)" "$level" "$(basename "${0:-e2e}")" "$*" >&2
}
log_info() { _log INFO "$@"; }
log_warn() { _log WARN "$@"; }
log_error() { _log ERROR "$@"; }
die() {
	log_error "$@"
	exit 1
}

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "required command not found: $c"
	done
}

# need_pyyaml: python3 with PyYAML, for the scripts that read Kubernetes YAML.
need_pyyaml() {
	need_cmd python3
	python3 -c 'import yaml' 2>/dev/null || die "python3 lacks PyYAML: install it (Debian: apt-get install python3-yaml)"
}

# pin KEY: print the value of `KEY = "value"` from versions.toml.
# KEY is either "section.key" (exact section) or a bare "key" (first match in
# any section). Fails when the key is missing.
pin() {
	local want=${1:?usage: pin KEY}
	local section="" key=$want
	if [[ $want == *.* ]]; then
		section=${want%%.*}
		key=${want#*.}
	fi
	[[ -r $OPBUILDER_VERSIONS_FILE ]] || die "cannot read $OPBUILDER_VERSIONS_FILE"
	local value
	value=$(awk -v want_section="$section" -v want_key="$key" '
		/^[[:space:]]*#/ { next }
		/^[[:space:]]*\[[^]]+\][[:space:]]*$/ {
			s = $0
			gsub(/^[[:space:]]*\[|\][[:space:]]*$/, "", s)
			cur = s
			next
		}
		{
			line = $0
			if (match(line, /^[[:space:]]*[A-Za-z0-9_.-]+[[:space:]]*=[[:space:]]*"[^"]*"/) == 0) next
			k = line
			sub(/^[[:space:]]*/, "", k)
			sub(/[[:space:]]*=.*$/, "", k)
			if (k != want_key) next
			if (want_section != "" && cur != want_section) next
			v = line
			sub(/^[^=]*=[[:space:]]*"/, "", v)
			sub(/".*$/, "", v)
			print v
			found = 1
			exit
		}
		END { if (!found) exit 1 }
	' "$OPBUILDER_VERSIONS_FILE") || die "key '$want' not found in $OPBUILDER_VERSIONS_FILE"
	printf '%s\n' "$value"
}

k8s_platform() {
	local os arch
	os=$(uname -s | tr '[:upper:]' '[:lower:]')
	case "$(uname -m)" in
	x86_64 | amd64) arch=amd64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) arch=$(uname -m) ;;
	esac
	printf '%s-%s\n' "$os" "$arch"
}

k8s_bin_dir() {
	printf '%s/k8s/%s-%s\n' "$E2E_CACHE" "$(pin e2e.kubernetes)" "$(k8s_platform)"
}

# k8s_ldflags: the -ldflags of every binary built from k8s.io/kubernetes (the control plane's and
# the node's): stripped, with the version stamps Kubernetes' hack/lib/version.sh sets. The commit
# is unknown when building from a module zip; an all-zero hash stands for it.
k8s_ldflags() {
	local version major minor pkg flags="-s -w" date
	version=$(pin e2e.kubernetes)
	[[ $version =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || die "[e2e].kubernetes must look like 1.36.0, got '$version'"
	major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
	date=$(date -u ${SOURCE_DATE_EPOCH:+--date=@"$SOURCE_DATE_EPOCH"} +%Y-%m-%dT%H:%M:%SZ)
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
		flags+=" -X $pkg.gitVersion=v$version -X $pkg.gitTreeState=clean"
		flags+=" -X $pkg.gitCommit=0000000000000000000000000000000000000000"
		flags+=" -X $pkg.buildDate=$date"
	done
	printf '%s\n' "$flags"
}

# pki_ca CN: a certificate authority (ca.key, ca.crt, ten years) in the current directory.
pki_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 -keyout ca.key -out ca.crt \
		-subj "/CN=$1" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# pki_sign NAME SUBJECT EXTENSIONS: NAME.key and NAME.crt signed by the pki_ca of the current
# directory; EXTENSIONS is an openssl extension file's text (printf %b: \n between lines).
pki_sign() {
	openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
	printf '%b' "$3" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
		-days 3650 -sha256 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}

# rust_target_dir: the cargo build directory (build.build-dir: dependencies, fingerprints, test
# binaries) every generated Rust project of the e2e tests shares, keyed by the crates they pin
# (their dependencies are built once per version).
rust_target_dir() {
	printf '%s/rust-target/kube-%s-k8s-openapi-%s\n' "$E2E_CACHE" "$(pin rust.kube)" "$(pin rust.k8s_openapi)"
}

# use_rust_target: export how every generated Rust project of the e2e tests builds: its
# intermediate artifacts in the shared rust_target_dir (CARGO_BUILD_BUILD_DIR), its final ones
# (target/debug/<bin>, what `cargo run` executes) in the project's own target/, without debug
# info (CARGO_PROFILE_DEV_DEBUG=0: the dependencies compile and the test binaries link faster; a
# user's `make test` keeps cargo's defaults). A shared target directory would hold one
# target/debug/manifests for every project: two jobs at once ran each other's (`cargo run`
# executes it after releasing cargo's lock, when another cargo may already have replaced it).
# Nor incremental (CARGO_INCREMENTAL=0): each project lives in a directory of its own, so its
# incremental cache is written once and never read; without it a project's own crate compiled
# with a fifth less CPU (47.7 s of user time against 57-62 s, the golden `rust` tree, its
# dependencies built). A script that edits a project and builds it again (the tutorial, the
# benchmark's inner loop) unsets it, as a user's cargo does.
# Nor SOURCE_DATE_EPOCH: the build scripts of ring and psm (through the cc crate) watch it, so a
# project built with it set re-ran them and rebuilt ring, rustls, kube-client and 16 other crates
# under the same file names in the shared directory, and the next project without it rebuilt them
# back. A project running its doctests (cargo has released its lock by then) beside such a rebuild
# found librustls-*.rlib gone ("extern location for rustls does not exist": alpha-update, whose
# opbuilder runs need the variable, beside golden:rust-namespaced). Every project here builds
# with one environment, so each crate is built once.
# check_own_certs NAME RENDERED: in a project with certs.opbuilder.io/v1-alpha (PROJECT in the
# current directory), the manager keeps its own webhook certificate (docs/certs.md): RENDERED (a
# `kubectl kustomize config/default` output) holds nothing of cert-manager and gives the manager
# --webhook-cert-secret. Nothing to check in other projects.
check_own_certs() {
	grep -q '^  certs.opbuilder.io/v1-alpha:' PROJECT || return 0
	log_info "[$1] no cert-manager object or annotation in config/default (certs.opbuilder.io/v1-alpha)"
	! grep -n 'cert-manager' "$2" || die "[$1] config/default renders cert-manager (above)"
	grep -q -- '--webhook-cert-secret=webhook-server-cert' "$2" ||
		die "[$1] the manager is not given --webhook-cert-secret"
}

use_rust_target() {
	export CARGO_BUILD_BUILD_DIR CARGO_PROFILE_DEV_DEBUG=0 CARGO_INCREMENTAL=0
	CARGO_BUILD_BUILD_DIR=$(rust_target_dir)
	unset CARGO_TARGET_DIR SOURCE_DATE_EPOCH
}

# manager_identity RENDERED: apply the Namespace, ServiceAccount and RBAC objects of RENDERED
# (a `kubectl kustomize config/default` output): the manager's identity as config/ deploys it,
# without its Deployment. Needs python3 with PyYAML.
manager_identity() {
	python3 -c '
import sys, yaml
kinds = {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
print(yaml.safe_dump_all(d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] in kinds))
' <"$1" | kubectl apply --server-side -f - >/dev/null
}

# token_kubeconfig SA NAMESPACE: print a kubeconfig for the cluster of the current one that
# acts as ServiceAccount SA of NAMESPACE, through a token valid for 2 hours.
token_kubeconfig() {
	cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: plane
  cluster:
    server: $(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
    certificate-authority-data: $(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
users:
- name: manager
  user:
    token: $(kubectl create token "$1" -n "$2" --duration=2h)
contexts:
- name: manager
  context:
    cluster: plane
    user: manager
    namespace: $2
current-context: manager
KC
}

# wait_for SECS DESC CMD [ARGS...]
# Runs CMD (output discarded) once a second until it exits 0. Returns 1 and logs
# an error naming DESC once SECS seconds have passed. When WAIT_FOR_PID is set
# and that process dies, gives up at once (no point waiting for a dead server).
wait_for() {
	local secs=$1 desc=$2
	shift 2
	local deadline=$((SECONDS + secs))
	while true; do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if [[ -n "${WAIT_FOR_PID:-}" ]] && ! kill -0 "$WAIT_FOR_PID" 2>/dev/null; then
			log_error "gave up waiting for $desc: process $WAIT_FOR_PID exited"
			return 1
		fi
		if ((SECONDS >= deadline)); then
			log_error "timed out after ${secs}s waiting for $desc"
			return 1
		fi
		sleep 1
	done
}

# free_port: a port nothing listens on, below the ephemeral range.
free_port() {
	local port tries=0
	while ((tries++ < 200)); do
		port=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			printf '%s\n' "$port"
			return 0
		fi
	done
	die "no free port on 127.0.0.1"
}

# make_run_start LOG: `make run` of the project in the current directory in the background, in a
# session of its own (so that make, go run or cargo run, and the manager are signalled together,
# as a terminal's Ctrl-C does), its probes and webhooks on free ports (ARGS; the webhook port in
# MAKE_RUN_WEBHOOK_PORT); its output in LOG. Returns once the manager says that it serves its
# webhooks from this machine (waiting at most MAKE_RUN_TIMEOUT seconds, default 1200: the first
# build), or 1, with LOG's tail, when it does not. Sets MAKE_RUN_PGID. MAKE_RUN_ARGS: more flags
# for the manager (e.g. --metrics-bind-address=127.0.0.1:PORT).
make_run_start() {
	local probe
	probe=$(free_port)
	MAKE_RUN_WEBHOOK_PORT=$(free_port)
	log_info "make run (webhooks on port $MAKE_RUN_WEBHOOK_PORT, log $1)"
	# Not a job of this shell (which would report its death by a signal): setsid forks, the
	# session's leader prints its PID (the session's and process group's ID), then runs make.
	MAKE_RUN_PGID=$(setsid -f sh -c 'echo $$; exec make run ARGS="$1" </dev/null >"$2" 2>&1' sh \
		"--health-probe-bind-address=127.0.0.1:$probe --webhook-port=$MAKE_RUN_WEBHOOK_PORT${MAKE_RUN_ARGS:+ $MAKE_RUN_ARGS}" "$1")
	WAIT_FOR_PID=$MAKE_RUN_PGID wait_for "${MAKE_RUN_TIMEOUT:-1200}" "make run to serve its webhooks" \
		grep -qi "serving the webhooks from this machine" "$1" || {
		tail -n 30 "$1" >&2
		return 1
	}
}

# make_run_stop SIGNAL: SIGNAL to the session of make_run_start; waits up to 40 s for all of its
# processes to end, else kills them and returns 1. Does nothing when none runs.
make_run_stop() {
	[[ -n ${MAKE_RUN_PGID:-} ]] || return 0
	local pgid=$MAKE_RUN_PGID deadline=$((SECONDS + 40))
	MAKE_RUN_PGID=""
	kill "-$1" -- "-$pgid" 2>/dev/null || true
	while kill -0 -- "-$pgid" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.2
	done
	if kill -0 -- "-$pgid" 2>/dev/null; then
		kill -KILL -- "-$pgid" 2>/dev/null || true
		log_error "make run did not stop within 40 s of SIG$1"
		return 1
	fi
}

# fmt_duration SECS: print a duration such as "1m23s".
fmt_duration() {
	local s=$1
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# keep_yours FILE, keep_theirs FILE: resolve every conflict of FILE that `opbuilder alpha update`
# marked (<<<<<<< yours / ======= / >>>>>>> opbuilder ...) in favour of the user's side, or of
# the new templates' side.
keep_yours() { _keep_side "$1" 2; }
keep_theirs() { _keep_side "$1" 1; }
_keep_side() {
	awk -v drop="$2" '/^<<<<<<< yours$/ {s=1; next} /^=======$/ && s==1 {s=2; next} /^>>>>>>> opbuilder / && s==2 {s=0; next} s!=drop {print}' \
		"$1" >"$1.resolved"
	mv "$1.resolved" "$1"
}
