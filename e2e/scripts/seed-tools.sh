#!/usr/bin/env bash
# Link the tools a generated project's Makefile installs into bin/ (controller-gen, kustomize,
# and with --lint golangci-lint) from the e2e cache, built there once per version by go-tool.sh.
# The Makefile's go-install-tool sees bin/<tool>-<version> and skips `go install`, so the tests
# do not build the same tool again in every project.
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
bin="$1/bin"
mkdir -p "$bin"

link() { # NAME VERSION PATH
	ln -sfn "$3" "$bin/$1-$2"
	ln -sfn "$1-$2" "$bin/$1"
}
v=$(pin scaffold.controller_tools)
link controller-gen "$v" "$("$here/go-tool.sh" controller-gen sigs.k8s.io/controller-tools "$v" sigs.k8s.io/controller-tools/cmd/controller-gen)"
v=$(pin scaffold.kustomize)
link kustomize "$v" "$("$here/go-tool.sh" kustomize sigs.k8s.io/kustomize/kustomize/v5 "$v" sigs.k8s.io/kustomize/kustomize/v5)"
if ((lint)); then
	link golangci-lint "$(pin scaffold.golangci_lint)" "$("$here/go-tool.sh" golangci-lint)"
fi
