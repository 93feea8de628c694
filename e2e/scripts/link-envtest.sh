#!/usr/bin/env bash
# Make a generated operator project's `make test` find the locally built
# control-plane binaries instead of downloading envtest assets.
#
# Usage: link-envtest.sh PROJECT_DIR
#
# Creates PROJECT_DIR/bin/k8s/<kubernetes>-<os>-<arch>/ as a REAL directory
# holding symlinks to kube-apiserver, etcd and kubectl from the build cache
# (built first by build-control-plane.sh when missing). That is the layout
# setup-envtest's store expects; `setup-envtest use <minor> --bin-dir bin -p
# path` (what the scaffolded Makefile runs) then resolves it from disk without
# contacting the network. The directory itself must not be a symlink: the
# store lists bin/k8s with lstat semantics and skips anything that is not a
# plain directory.
#
# When PROJECT_DIR/bin/setup-envtest exists, the result is checked with it in
# installed-only mode (-i), which never downloads.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -eq 1 && -n $1 ]] || die "usage: $0 PROJECT_DIR"
[[ -d $1 ]] || die "no such project directory: $1"
project=$(cd "$1" && pwd)

k8s_version=$(pin e2e.kubernetes)
src=$(k8s_bin_dir)
"$(dirname "${BASH_SOURCE[0]}")/build-control-plane.sh" >/dev/null

dest="$project/bin/k8s/${k8s_version}-$(k8s_platform)"
# A symlinked or stale non-directory entry would be skipped by the store.
if [[ -L $dest || (-e $dest && ! -d $dest) ]]; then
	rm -f "$dest"
fi
mkdir -p "$dest"
for b in kube-apiserver etcd kubectl; do
	[[ -x "$src/$b" ]] || die "$src/$b is missing or not executable"
	ln -sfn "$src/$b" "$dest/$b"
done
log_info "linked $dest -> $src"

if [[ -x "$project/bin/setup-envtest" ]]; then
	minor=${k8s_version%.*}
	got=$("$project/bin/setup-envtest" use "$minor" -i --bin-dir "$project/bin" -p path) ||
		die "setup-envtest could not resolve $minor from $project/bin"
	[[ $got == "$dest" ]] || die "setup-envtest resolved $minor to '$got', expected '$dest'"
	log_info "setup-envtest use $minor resolves to $got"
fi
