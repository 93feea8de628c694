#!/usr/bin/env bash
# Build (or reuse) the control-plane binaries used by the e2e tests:
#
#   $E2E_CACHE/k8s/<kubernetes>-<os>-<arch>/{kube-apiserver,etcd,kubectl}
#
# Versions come from versions.toml ([e2e] kubernetes, etcd). kube-apiserver and
# kubectl are compiled from the k8s.io/kubernetes module through the Go module
# proxy (wrapper module e2e/controlplane/k8sbins), etcd from go.etcd.io/etcd
# (wrapper module e2e/controlplane/etcdbin). A binary that already exists and
# reports the pinned version is reused, so running this twice is cheap.
#
# Usage: build-control-plane.sh [--force] [--sync-modules]
#   --force         rebuild even when the cached binaries look right
#   --sync-modules  rewrite the wrapper go.mod files to the versions in
#                   versions.toml and run `go mod tidy` (after a version bump;
#                   commit the resulting go.mod/go.sum)
#
# Environment: OPBUILDER_E2E_CACHE (cache root), usual Go variables.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

force=0
sync_modules=0
for arg in "$@"; do
	case "$arg" in
	--force) force=1 ;;
	--sync-modules) sync_modules=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument: $arg (see --help)" ;;
	esac
done

need_cmd go flock awk

k8s_version=$(pin e2e.kubernetes)        # e.g. 1.36.0
etcd_version=$(pin e2e.etcd)             # e.g. v3.6.8
[[ $k8s_version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] ||
	die "[e2e].kubernetes must look like 1.36.0, got '$k8s_version'"
k8s_minor=${BASH_REMATCH[2]}
staging_version="v0.${k8s_minor}.${BASH_REMATCH[3]}" # staging modules: v0.<minor>.<patch>
etcd_version=v${etcd_version#v}

k8s_mod_dir="$OPBUILDER_ROOT/e2e/controlplane/k8sbins"
etcd_mod_dir="$OPBUILDER_ROOT/e2e/controlplane/etcdbin"
out_dir=$(k8s_bin_dir)

# Version a module's go.mod requires, read straight from the file (no network).
gomod_require() {
	local gomod=$1 module=$2
	awk -v m="$module" '
		$1 == "require" && $2 == m { print $3; exit }
		$1 == m && $2 ~ /^v/ && !inrepl { print $2; exit }
		/^replace[[:space:]]*\(/ { inrepl = 1 }
		inrepl && /^\)/ { inrepl = 0 }
	' "$gomod"
}

if ((sync_modules)); then
	log_info "syncing wrapper modules to kubernetes v$k8s_version / etcd $etcd_version"
	(
		cd "$k8s_mod_dir"
		go mod edit -require="k8s.io/kubernetes@v$k8s_version"
		# Every staging module that k8s.io/kubernetes replaces with a local
		# ./staging directory gets the matching published tag instead. Read
		# the list from the new release's own go.mod, so modules added
		# upstream are picked up.
		upstream_gomod=$(go mod download -json "k8s.io/kubernetes@v$k8s_version" |
			awk -F'"' '$2 == "GoMod" { print $4 }')
		[[ -r $upstream_gomod ]] || die "could not fetch go.mod of k8s.io/kubernetes@v$k8s_version"
		while read -r mod; do
			go mod edit -replace="$mod=$mod@$staging_version"
		done < <(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$upstream_gomod")
		go mod tidy
	)
	(cd "$etcd_mod_dir" && go mod edit -require="go.etcd.io/etcd/server/v3@$etcd_version" && go mod tidy)
fi

have_k8s=$(gomod_require "$k8s_mod_dir/go.mod" k8s.io/kubernetes)
have_etcd=$(gomod_require "$etcd_mod_dir/go.mod" go.etcd.io/etcd/server/v3)
[[ $have_k8s == "v$k8s_version" ]] ||
	die "k8sbins/go.mod requires k8s.io/kubernetes $have_k8s but versions.toml says v$k8s_version; run $0 --sync-modules"
[[ $have_etcd == "$etcd_version" ]] ||
	die "etcdbin/go.mod requires etcd $have_etcd but versions.toml says $etcd_version; run $0 --sync-modules"

mkdir -p "$out_dir"
# Serialise concurrent runs (two CI jobs, or a test racing a manual build).
# The lock and scratch files live next to (not in) the output directory, which
# should hold nothing but the three binaries.
lock_file="$(dirname "$out_dir")/.$(basename "$out_dir").lock"
exec 9>"$lock_file"
if ! flock -n 9; then
	log_info "another build holds $lock_file; waiting for it"
	flock 9
fi

# binary_ok NAME: the cached binary exists and reports the pinned version.
binary_ok() {
	local bin="$out_dir/$1" out
	[[ -x $bin ]] || return 1
	case "$1" in
	kube-apiserver)
		out=$("$bin" --version 2>/dev/null) || return 1
		[[ $out == "Kubernetes v$k8s_version" ]]
		;;
	kubectl)
		out=$("$bin" version --client 2>/dev/null) || return 1
		[[ $out == *"Client Version: v$k8s_version"* ]]
		;;
	etcd)
		out=$("$bin" --version 2>/dev/null) || return 1
		[[ $out == *"etcd Version: ${etcd_version#v}"* ]]
		;;
	esac
}

k8s_ldflags=$(k8s_ldflags)
etcd_ldflags="-s -w"

# Build into a scratch directory next to the output, then rename, so an
# interrupted build never leaves a half-written binary that looks cached.
tmp_dir=$(mktemp -d "$(dirname "$out_dir")/.build.XXXXXX")
trap 'rm -rf "$tmp_dir"' EXIT

total_start=$SECONDS
todo_k8s=()
for b in kube-apiserver kubectl; do
	if ((force)) || ! binary_ok "$b"; then
		todo_k8s+=("./cmd/$b")
	else
		log_info "reusing $out_dir/$b"
	fi
done
todo_etcd=0
if ((force)) || ! binary_ok etcd; then
	todo_etcd=1
else
	log_info "reusing $out_dir/etcd"
fi

export CGO_ENABLED=0
if ((${#todo_k8s[@]})); then
	log_info "go mod download (k8sbins, kubernetes v$k8s_version)"
	t=$SECONDS
	(cd "$k8s_mod_dir" && go mod download)
	log_info "timing: k8sbins module download $(fmt_duration $((SECONDS - t)))"
	log_info "building ${todo_k8s[*]} (cold: 10-25 min on 2 cores)"
	t=$SECONDS
	(cd "$k8s_mod_dir" && go build -mod=readonly -buildvcs=false -trimpath -ldflags "$k8s_ldflags" -o "$tmp_dir/" "${todo_k8s[@]}")
	log_info "timing: kube-apiserver/kubectl build $(fmt_duration $((SECONDS - t)))"
	for p in "${todo_k8s[@]}"; do
		mv -f "$tmp_dir/${p##*/}" "$out_dir/${p##*/}"
	done
fi
if ((todo_etcd)); then
	log_info "building etcd $etcd_version"
	t=$SECONDS
	(cd "$etcd_mod_dir" && go mod download &&
		go build -mod=readonly -buildvcs=false -trimpath -ldflags "$etcd_ldflags" -o "$tmp_dir/etcd" .)
	log_info "timing: etcd download+build $(fmt_duration $((SECONDS - t)))"
	mv -f "$tmp_dir/etcd" "$out_dir/etcd"
fi

for b in kube-apiserver etcd kubectl; do
	binary_ok "$b" || die "$out_dir/$b does not report the pinned version after the build"
done
log_info "kube-apiserver: $("$out_dir/kube-apiserver" --version)"
log_info "etcd: $("$out_dir/etcd" --version | head -n1)"
log_info "kubectl: $("$out_dir/kubectl" version --client | head -n1)"
log_info "timing: total $(fmt_duration $((SECONDS - total_start)))"
printf '%s\n' "$out_dir"
