#!/usr/bin/env bash
# Link the tools a generated project's Makefile installs into bin/ (controller-gen, kustomize,
# and with --lint golangci-lint) from the e2e cache, built there once per version by go-tool.sh.
# The Makefile's go-install-tool sees bin/<tool>-<version> and skips `go install`, so the tests
# do not build the same tool again in every project.
#
# bin/<tool>-<version> is the cached binary itself (a hard link, or a copy across file systems)
# and bin/<tool> an absolute link to it, so that both Makefiles find the tool installed:
# opbuilder's only rewrites bin/<tool> as the relative link it keeps, while Kubebuilder's (the
# parity suite's oracle trees) runs `go install` again, which links the tool once more (about
# 1.4 s of CPU), whenever bin/<tool> is not the link "$(LOCALBIN)/<tool>-<version>", and then
# points bin/<tool> at the realpath of bin/<tool>-<version>: a symlink there would take it to the
# cache, and its next make would install the tool again.
#
# Usage: seed-tools.sh [--lint] PROJECT_DIR
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lint=0
if [[ ${1:-} == --lint ]]; then
	lint=1
	shift
fi
[[ $# -eq 1 && -d $1 ]] || die "usage: $0 [--lint] PROJECT_DIR"
# The Makefiles' LOCALBIN is $(shell pwd)/bin.
bin="$(cd "$1" && pwd)/bin"
mkdir -p "$bin"

link() { # NAME VERSION PATH
	# Replaced by a rename, never written in place (a hard link shares the cache's file); left
	# alone when it is that file already (mv refuses to rename a file over another link to it).
	if [[ -L $bin/$1-$2 || ! $bin/$1-$2 -ef $3 ]]; then
		ln -f "$3" "$bin/.$1-$2.tmp" 2>/dev/null || cp -f "$3" "$bin/.$1-$2.tmp"
		mv -f "$bin/.$1-$2.tmp" "$bin/$1-$2"
	fi
	ln -sfn "$bin/$1-$2" "$bin/$1"
}
v=$(pin scaffold.controller_tools)
link controller-gen "$v" "$("$here/go-tool.sh" controller-gen sigs.k8s.io/controller-tools "$v" sigs.k8s.io/controller-tools/cmd/controller-gen)"
v=$(pin scaffold.kustomize)
link kustomize "$v" "$("$here/go-tool.sh" kustomize sigs.k8s.io/kustomize/kustomize/v5 "$v" sigs.k8s.io/kustomize/kustomize/v5)"
if ((lint)); then
	link golangci-lint "$(pin scaffold.golangci_lint)" "$("$here/go-tool.sh" golangci-lint)"
fi
