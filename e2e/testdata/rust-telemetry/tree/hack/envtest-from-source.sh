#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver and etcd) from source through
# the Go module proxy, for machines that reach a Go module proxy but not the
# release downloads setup-envtest uses. Run it with `make envtest-from-source`.
#
# The binaries go where setup-envtest keeps its own,
#   $LOCALBIN/k8s/<version>-<os>-<arch>/
# so `make test` finds them there with no other network. They are built once
# per Kubernetes version into a cache that every project on this machine shares:
#   ${XDG_CACHE_HOME:-~/.cache}/opbuilder/envtest/<version>/
# Delete that directory to build again. A first build of kube-apiserver takes
# 5 to 25 minutes, depending on the machine; later projects reuse the result.
#
# Environment (the Makefile sets the first three):
#   ENVTEST_K8S_VERSION  Kubernetes release: 1.<minor> or 1.<minor>.<patch>
#   K8S_API_VERSION      version of k8s.io/api in go.mod; picks the patch
#                        release when ENVTEST_K8S_VERSION names only a minor
#   LOCALBIN             the project's bin directory
#   ETCD_VERSION         etcd release to build; default: the etcd client
#                        version that k8s.io/kubernetes itself requires
set -euo pipefail

say() { printf 'envtest-from-source: %s\n' "$*" >&2; }
fail() {
	say "$*"
	exit 1
}

[[ -n ${ENVTEST_K8S_VERSION:-} ]] ||
	fail "ENVTEST_K8S_VERSION is empty. The Makefile reads it from k8s.io/api in go.mod: run \`go mod tidy\` first, or set it: make envtest-from-source ENVTEST_K8S_VERSION=1.36"
[[ -n ${LOCALBIN:-} ]] || fail "set LOCALBIN to the project's bin directory"
command -v go >/dev/null || fail "go is not on PATH"
mkdir -p "$LOCALBIN"
LOCALBIN=$(cd "$LOCALBIN" && pwd)

# The full Kubernetes version, e.g. 1.36 + k8s.io/api v0.36.2 -> 1.36.2.
if [[ $ENVTEST_K8S_VERSION =~ ^v?1\.([0-9]+)\.([0-9]+)$ ]]; then
	minor=${BASH_REMATCH[1]}
	patch=${BASH_REMATCH[2]}
elif [[ $ENVTEST_K8S_VERSION =~ ^v?1\.([0-9]+)$ ]]; then
	minor=${BASH_REMATCH[1]}
	patch=0
	if [[ ${K8S_API_VERSION:-} =~ ^v0\.${minor}\.([0-9]+)$ ]]; then
		patch=${BASH_REMATCH[1]}
	fi
else
	fail "ENVTEST_K8S_VERSION must look like 1.36 or 1.36.0, got '$ENVTEST_K8S_VERSION'"
fi
version=1.$minor.$patch
staging=v0.$minor.$patch # the published tag of every k8s.io staging module

goos=$(go env GOOS)
goarch=$(go env GOARCH)
store="$LOCALBIN/k8s/$version-$goos-$goarch"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/opbuilder/envtest/$version"
mkdir -p "$cache"

# The wrapper modules below live outside the project and must not pick up a
# go.work or a -mod flag from the caller.
export GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0

# One build per version at a time, even when several projects ask at once.
if command -v flock >/dev/null; then
	exec 9>"$cache/.lock"
	flock 9
fi

apiserver_ok() {
	[[ -x $cache/bin/kube-apiserver && -x $cache/bin/etcd ]] &&
		[[ $("$cache/bin/kube-apiserver" --version 2>/dev/null) == "Kubernetes v$version" ]]
}

# new_module DIR PATH: an empty Go module in DIR, without touching anything else.
new_module() {
	rm -rf "$1"
	mkdir -p "$1"
	(cd "$1" && go mod init "$2" >/dev/null 2>&1)
}

build_kube_apiserver() {
	local mod="$cache/src/kube-apiserver" upstream
	say "preparing a module for k8s.io/kubernetes v$version"
	new_module "$mod" envtest.local/kube-apiserver
	cat >"$mod/main.go" <<'EOF'
// Command kube-apiserver runs the Kubernetes API server for envtest.
package main

import (
	"os"
	_ "time/tzdata" // time zones of CronJobs validate without /usr/share/zoneinfo

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
EOF
	cd "$mod"
	go mod edit -require="k8s.io/kubernetes@v$version"
	# k8s.io/kubernetes points its staging modules (k8s.io/api, k8s.io/apiserver,
	# ...) at directories of its own repository, which a module that depends on
	# it cannot see. Point each at its published tag instead; the list comes from
	# the release's own go.mod, so it is right for every version.
	upstream=$(go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
	[[ -r $upstream ]] || fail "could not download k8s.io/kubernetes v$version through the Go module proxy ($(go env GOPROXY))"
	while read -r m; do
		go mod edit -replace="$m=$m@$staging"
	done < <(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$upstream")
	# The etcd that matches this release: the client version Kubernetes uses.
	etcd_version=${ETCD_VERSION:-$(awk '$1 == "go.etcd.io/etcd/client/v3" { print $2; exit }' "$upstream")}
	go mod tidy

	say "building kube-apiserver v$version (5 to 25 minutes the first time)"
	local pkg ldflags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitVersion=v$version"
		ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=0000000000000000000000000000000000000000"
	done
	go build -trimpath -ldflags "$ldflags" -o "$cache/tmp/kube-apiserver" .
}

build_etcd() {
	local mod="$cache/src/etcd"
	[[ -n $etcd_version ]] || fail "could not tell which etcd k8s.io/kubernetes v$version uses; set ETCD_VERSION"
	say "building etcd $etcd_version"
	new_module "$mod" envtest.local/etcd
	cat >"$mod/main.go" <<'EOF'
// Command etcd runs the etcd server for envtest.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
EOF
	cd "$mod"
	go mod edit -require="go.etcd.io/etcd/server/v3@$etcd_version"
	go mod tidy
	go build -trimpath -ldflags "-s -w" -o "$cache/tmp/etcd" .
}

if apiserver_ok; then
	say "reusing kube-apiserver and etcd v$version from $cache/bin"
else
	start=$SECONDS
	rm -rf "$cache/tmp"
	mkdir -p "$cache/tmp" "$cache/bin"
	etcd_version=""
	build_kube_apiserver
	build_etcd
	# Binaries are moved in only once both are built: an interrupted build
	# never leaves something that looks finished.
	mv -f "$cache/tmp/etcd" "$cache/bin/etcd"
	mv -f "$cache/tmp/kube-apiserver" "$cache/bin/kube-apiserver"
	rm -rf "$cache/tmp"
	apiserver_ok || fail "the new kube-apiserver does not report v$version"
	say "built in $((SECONDS - start))s into $cache/bin"
fi

# setup-envtest only accepts a real directory in its store; the files may be
# links. Hard links keep working when the cache is cleaned; copy across file systems.
rm -rf "$store"
mkdir -p "$store"
for b in kube-apiserver etcd; do
	ln -f "$cache/bin/$b" "$store/$b" 2>/dev/null || cp -f "$cache/bin/$b" "$store/$b"
done
say "kube-apiserver and etcd v$version are in $store"
say "\`make test\` uses them; KUBEBUILDER_ASSETS=$store works for other test runners"
