#!/usr/bin/env bash
# Download the test control plane (kube-apiserver, etcd and kubectl) of Kubernetes
# ENVTEST_K8S_VERSION for `make test`, without Go: from the envtest releases controller-tools
# publishes, as controller-runtime's setup-envtest does. It reads the index
# (ENVTEST_INDEX_URL, YAML: releases -> v<version> -> envtest-v<version>-<os>-<arch>.tar.gz ->
# hash (SHA-512, hex) and selfLink), takes the newest patch release of ENVTEST_K8S_VERSION (1.37)
# or that exact release (1.37.0), downloads the archive, refuses it unless its SHA-512 is the
# index's, and puts its files into LOCALBIN/k8s/<version>-<os>-<arch>, where `make test`
# looks. Nothing is done when that directory already has kube-apiserver and etcd.
#
# Needs curl, tar, gzip and sha512sum (or shasum).
# Usage: ENVTEST_K8S_VERSION=1.37 ENVTEST_INDEX_URL=https://... LOCALBIN=bin bash hack/setup-envtest.sh
set -euo pipefail

die() {
	echo "setup-envtest: $*" >&2
	exit 1
}
version=${ENVTEST_K8S_VERSION:?set ENVTEST_K8S_VERSION, e.g. 1.37}
index_url=${ENVTEST_INDEX_URL:?set ENVTEST_INDEX_URL, e.g. https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml}
localbin=${LOCALBIN:?set LOCALBIN, e.g. bin}
[[ $version =~ ^v?[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] ||
	die "ENVTEST_K8S_VERSION=$version: not a Kubernetes release; give MAJOR.MINOR (newest patch) or MAJOR.MINOR.PATCH, e.g. 1.37"
version=${version#v}
for c in curl tar gzip; do
	command -v "$c" >/dev/null || die "$c is not installed: it is needed to download the control plane"
done
if command -v sha512sum >/dev/null; then
	sha512() { sha512sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null; then
	sha512() { shasum -a 512 "$1" | cut -d' ' -f1; }
else
	die "neither sha512sum nor shasum is installed: the download's checksum cannot be verified"
fi

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) arch=$(uname -m) ;;
esac

index=$(curl -fsSL "$index_url") || die "cannot download the index of envtest releases $index_url"
# The release (newest matching patch), then its archive's hash and link: "release archive hash link".
read -r release archive hash link < <(printf '%s\n' "$index" | LC_ALL=C awk -v want="$version" -v platform="$os-$arch" '
	function patch(v) { sub(/^v[0-9]+\.[0-9]+\./, "", v); return v + 0 }
	/^  [^ ]/ { cur = ""; in_ar = 0 }
	/^  v[0-9]+\.[0-9]+\.[0-9]+:[ \t]*$/ {
		v = $1; sub(/:$/, "", v); cur = v
		ok = (v == "v" want) || (index(v, "v" want ".") == 1 && split(want, p, ".") == 2)
		if (ok && (best == "" || patch(v) > patch(best))) best = v
		next
	}
	/^    [^ ]/ { a = $1; sub(/:$/, "", a); in_ar = (cur != "" && a == "envtest-" cur "-" platform ".tar.gz"); if (in_ar) ar[cur] = a; next }
	/^      hash:/ && in_ar { h[cur] = $2 }
	/^      selfLink:/ && in_ar { l[cur] = $2 }
	END { if (best != "") print best, ar[best], h[best], l[best] }
') || true
[[ -n ${release:-} ]] || die "the index $index_url has no release of Kubernetes $version"
[[ -n ${archive:-} && -n ${hash:-} && -n ${link:-} ]] ||
	die "the index $index_url has no archive with a hash and a link for $release on $os-$arch"

dir="$localbin/k8s/${release#v}-$os-$arch"
if [[ -x $dir/kube-apiserver && -x $dir/etcd ]]; then
	echo "$dir has kube-apiserver and etcd of $release already"
	exit 0
fi
mkdir -p "$localbin/k8s"
work=$(mktemp -d "$localbin/k8s/.download.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "downloading $link"
curl -fsSL -o "$work/$archive" "$link" || die "cannot download $link"
sum=$(sha512 "$work/$archive")
[[ $sum == "$hash" ]] ||
	die "$archive: its SHA-512 is $sum, the index says $hash: refused (a corrupted or tampered download); nothing was installed"
mkdir "$work/x" "$work/out"
tar -xzf "$work/$archive" -C "$work/x" || die "$archive: cannot unpack it"
# The archive holds controller-tools/envtest/<binary>: every regular file, by its name alone.
find "$work/x" -type f -exec mv {} "$work/out/" \;
[[ -f $work/out/kube-apiserver && -f $work/out/etcd ]] || die "$archive has no kube-apiserver and etcd"
chmod 0755 "$work"/out/*
rm -rf "$dir"
mv "$work/out" "$dir"
echo "kube-apiserver and etcd of $release are in $dir"
