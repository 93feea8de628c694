#!/usr/bin/env bash
# Build (or reuse) a Go command from the Go module proxy, cached by module version:
#
#   $E2E_CACHE/tools/<name>-<version>/<name>
#
# `go install MODULE@VERSION` needs the proxy's version list, which some proxies refuse, so the
# command is built inside a throwaway module that requires the exact version. The binaries are
# test oracles and helpers (kubebuilder, golangci-lint): nothing of them enters the project.
#
# Usage: go-tool.sh NAME          print the path of a tool known by name (building it when missing):
#                                 kubebuilder, golangci-lint, helm
#        go-tool.sh NAME MODULE VERSION PACKAGE [--ldflags FLAGS] [--gcflags FLAGS] [--main DIR]
#                   [--require MODULE@VERSION]
#                                 the same for any main package, linked with --ldflags and
#                                 compiled with --gcflags (repeatable: one -gcflags each, the last
#                                 pattern that matches a package wins; the cache key is the version
#                                 all the same), with at least that version of another module
#                                 (repeatable; an old release whose dependency no longer compiles
#                                 with this Go, as src/lifecycle/kubebuilder.rs builds it);
#                                 PACKAGE "." with --main DIR: a main package of our own (the .go
#                                 files of DIR) built against MODULE@VERSION, cached under
#                                 <name>-<version>-<hash of DIR's files and the --require list>
# Environment: OPBUILDER_E2E_CACHE (cache root), usual Go variables.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_cmd go flock
name=${1:?usage: go-tool.sh NAME [MODULE VERSION PACKAGE]}
if [[ $# -eq 1 ]]; then
	case "$name" in
	kubebuilder) set -- "$name" sigs.k8s.io/kubebuilder/v4 "$(pin e2e.kubebuilder)" sigs.k8s.io/kubebuilder/v4 ;;
	golangci-lint) set -- "$name" github.com/golangci/golangci-lint/v2 "$(pin scaffold.golangci_lint)" github.com/golangci/golangci-lint/v2/cmd/golangci-lint ;;
	helm) set -- "$name" helm.sh/helm/v3 "$(pin e2e.helm)" helm.sh/helm/v3/cmd/helm ;;
	*) die "unknown tool '$name': give MODULE VERSION PACKAGE too" ;;
	esac
fi
(($# >= 4)) || die "usage: go-tool.sh NAME [MODULE VERSION PACKAGE [--ldflags FLAGS] [--gcflags FLAGS] [--main DIR]]"
module=$2 version=$3 package=$4
shift 4
ldflags="" gcflags=() main_dir="" key=$version requires=""
while (($#)); do
	case "$1" in
	--ldflags) ldflags=${2:?--ldflags needs a value} ;;
	--gcflags) gcflags+=(-gcflags "${2:?--gcflags needs a value}") ;;
	--main) main_dir=${2:?--main needs a directory} ;;
	--require)
		[[ ${2:-} == *@* ]] || die "go-tool.sh: --require needs MODULE@VERSION, e.g. golang.org/x/tools@v0.33.0; got '${2:-}'"
		requires+="require ${2%@*} ${2#*@}"$'\n'
		;;
	*) die "go-tool.sh: unknown option '$1' (known: --ldflags FLAGS, --gcflags FLAGS, --main DIR, --require MODULE@VERSION)" ;;
	esac
	shift 2
done
if [[ -n $main_dir ]]; then
	[[ $package == . ]] || die "go-tool.sh: --main builds PACKAGE '.', got '$package'"
	compgen -G "$main_dir/*.go" >/dev/null || die "go-tool.sh: no .go files in $main_dir"
	key="$version-$({ cat "$main_dir"/*.go; printf %s "$requires"; } | sha256sum | cut -c1-12)"
elif [[ $package == . ]]; then
	die "go-tool.sh: PACKAGE '.' needs --main DIR"
fi

dir="$E2E_CACHE/tools/$name-$key"
bin="$dir/$name"
if [[ -x $bin ]]; then
	printf '%s\n' "$bin"
	exit 0
fi
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [[ ! -x $bin ]]; then
	log_info "building $name $version from $module (Go module proxy)"
	start=$SECONDS
	work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-gotool.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	(
		cd "$work"
		printf 'module opbuilder.invalid/tool\n\ngo 1.26.0\n\nrequire %s %s\n%s' "$module" "$version" "$requires" >go.mod
		if [[ -n $main_dir ]]; then
			cp "$main_dir"/*.go .
		else
			printf '//go:build tools\n\npackage tool\n\nimport _ "%s"\n' "$package" >tool.go
		fi
		# tidy also resolves the imports of the dependencies' tests, and the proxy refuses some
		# of those (the collector's file exporter tests import a contrib module it does not
		# serve): -e goes on past them; the build below fails on anything the tool itself needs.
		GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go mod tidy -e 2>/dev/null
		CGO_ENABLED=0 go build -trimpath "${gcflags[@]}" -ldflags "$ldflags" -o "$bin.tmp" "$package"
	)
	mv -f "$bin.tmp" "$bin"
	log_info "built $bin in $(fmt_duration $((SECONDS - start)))"
fi
printf '%s\n' "$bin"
