#!/usr/bin/env bash
# Install (apt-get) and build (or reuse) every part of the e2e node (cluster.sh) that can be made
# before the node starts, each cached by version under $E2E_CACHE/node and $E2E_CACHE/tools:
#
#   Debian packages  docker.io (Docker 20.10, with Debian's containerd for it), runc,
#                    containernetworking-plugins, conntrack, iptables, nftables, debootstrap, gcc
#   kubelet, kube-proxy, kube-scheduler, kube-controller-manager
#                    from e2e/controlplane/k8sbins (its `tool` lines) with the control plane's flags,
#                    after build-control-plane.sh, so Go's build cache has most of their packages
#   containerd, containerd-shim-runc-v2, ctr, docker-buildx, registry (distribution), coredns,
#   cert-manager-{controller,cainjector,webhook}, helm
#                    from the Go module proxy (go-tool.sh; versions.toml [node])
#   pause            k8s.io/kubernetes's build/pause/linux/pause.c, `gcc -static`
#   cert-manager's chart  assembled from its module as its release does (templates/crds.yaml)
#   a Debian root file system (debootstrap --variant=minbase) for the base images, fetched while
#                    the Go parts compile
#
# The images themselves are made by cluster.sh start, which needs the Docker daemon.
#
# Usage: build-node.sh [--no-install]   (--no-install: fail instead of running apt-get)
# Run it under `nice` on a shared machine: its cold builds keep both cores busy for minutes.
# Environment: OPBUILDER_E2E_CACHE, OPBUILDER_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=node-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/node-lib.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

install=1
case "${1:-}" in
"") ;;
--no-install) install=0 ;;
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
*) die "unknown argument '$1' (see --help)" ;;
esac
[[ $(id -u) == 0 ]] || die "the node needs root (it installs packages, runs a kubelet and a Docker daemon)"
total=$SECONDS

# ---------------------------------------------------------------- Debian packages

# What each package provides that we check for.
declare -A provides=(
	[docker.io]=/usr/sbin/dockerd
	[runc]=/usr/sbin/runc
	[containernetworking-plugins]=/usr/lib/cni/bridge
	[conntrack]=/usr/sbin/conntrack
	[iptables]=/usr/sbin/iptables
	[nftables]=/usr/sbin/nft
	[debootstrap]=/usr/sbin/debootstrap
	[gcc]=/usr/bin/gcc
	[libc6-dev]=/usr/include/stdio.h
	[openssl]=/usr/bin/openssl
	[iproute2]=/usr/sbin/ip
)
missing=()
for p in "${!provides[@]}"; do
	[[ -e ${provides[$p]} ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	((install)) || die "missing Debian packages: ${missing[*]} (apt-get install ${missing[*]})"
	t=$SECONDS
	log_info "apt-get install ${missing[*]}"
	# Another apt-get may hold the lock for a while: wait for it rather than fail.
	apt_opts=(-q -o DPkg::Lock::Timeout=600)
	apt-get "${apt_opts[@]}" update >/dev/null || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
	log_info "timing: apt-get $(fmt_duration $((SECONDS - t)))"
fi

# ---------------------------------------------------------------- debootstrap (in the background)

rootfs=$(node_rootfs)
rootfs_pid=""
rootfs_log=""
if [[ ! -f $rootfs/.complete ]]; then
	mkdir -p "$NODE_CACHE"
	rootfs_log=$(mktemp "$NODE_CACHE/.debootstrap.XXXXXX.log")
	(
		exec 9>"$rootfs.lock"
		flock 9
		[[ -f $rootfs/.complete ]] && exit 0
		t=$SECONDS
		tmp=$(mktemp -d "$rootfs.tmp.XXXXXX")
		# debootstrap mounts /proc and /sys in the tree while it configures packages.
		trap 'for m in $(awk -v d="$tmp/" "index(\$5, d) == 1 { print \$5 }" /proc/self/mountinfo | sort -r); do umount -l "$m"; done; rm -rf "$tmp"' EXIT
		debootstrap --variant=minbase --include="$NODE_ROOTFS_PACKAGES" \
			"$(pin node.debian_suite)" "$tmp" "${OPBUILDER_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
		rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*_Packages
		rm -rf "$rootfs"
		mv "$tmp" "$rootfs"
		touch "$rootfs/.complete"
		echo "timing: debootstrap $(fmt_duration $((SECONDS - t)))"
	) >"$rootfs_log" 2>&1 &
	rootfs_pid=$!
	log_info "debootstrap $(pin node.debian_suite) into $rootfs (in the background, log $rootfs_log)"
fi

# ---------------------------------------------------------------- Kubernetes

"$here/build-control-plane.sh" >/dev/null
k8s_version=$(pin e2e.kubernetes)
k8s_dir=$(node_k8s_dir)
mkdir -p "$k8s_dir"
(
	exec 9>"$k8s_dir.lock"
	flock 9
	todo=()
	for b in kubelet kube-proxy kube-scheduler kube-controller-manager; do
		if [[ $("$k8s_dir/$b" --version 2>/dev/null) == "Kubernetes v$k8s_version" ]]; then
			log_info "reusing $k8s_dir/$b"
		else
			todo+=("k8s.io/kubernetes/cmd/$b")
		fi
	done
	((${#todo[@]})) || exit 0
	t=$SECONDS
	tmp=$(mktemp -d "$k8s_dir.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	log_info "building ${todo[*]##*/} (cold, after the control plane: about 5 min on 2 cores)"
	(cd "$OPBUILDER_ROOT/e2e/controlplane/k8sbins" &&
		go build -mod=readonly -buildvcs=false -trimpath -ldflags "$(k8s_ldflags)" -o "$tmp/" "${todo[@]}")
	mv -f "$tmp"/* "$k8s_dir/"
	log_info "timing: ${todo[*]##*/} $(fmt_duration $((SECONDS - t)))"
)

# ---------------------------------------------------------------- Go parts from the module proxy

for part in containerd containerd-shim-runc-v2 ctr docker-buildx registry coredns \
	cert-manager-controller cert-manager-cainjector cert-manager-webhook; do
	t=$SECONDS
	bin=$(node_tool "$part")
	((SECONDS - t < 2)) || log_info "timing: $part $(fmt_duration $((SECONDS - t)))"
	[[ -x $bin ]] || die "$part: no binary at $bin"
done

t=$SECONDS
"$here/go-tool.sh" helm >/dev/null
((SECONDS - t < 2)) || log_info "timing: helm $(fmt_duration $((SECONDS - t)))"

# ---------------------------------------------------------------- pause

pause=$(node_pause_bin)
if [[ ! -x $pause ]]; then
	t=$SECONDS
	src=$(_node_module_dir "k8s.io/kubernetes@v$k8s_version")/build/pause/linux/pause.c
	mkdir -p "$(dirname "$pause")"
	# The flags of build/pause/Makefile; the git revision it appends is unknown in a module zip.
	gcc -Os -Wall -Werror -static -DVERSION="v$(node_pause_tag)-opbuilder" -o "$pause.tmp" "$src"
	mv -f "$pause.tmp" "$pause"
	log_info "built $pause ($(fmt_duration $((SECONDS - t))))"
fi

# ---------------------------------------------------------------- cert-manager's chart

chart=$(node_cert_manager_chart)
if [[ ! -f $chart/Chart.yaml ]]; then
	cm_version=$(pin node.cert_manager)
	deploy=$(_node_module_dir "github.com/cert-manager/cert-manager@$cm_version")/deploy
	mkdir -p "$(dirname "$chart")"
	tmp=$(mktemp -d "$chart.tmp.XXXXXX")
	mkdir -p "$tmp/templates"
	cp "$deploy/charts/cert-manager/templates/"* "$deploy/charts/cert-manager/values.yaml" "$tmp/templates/"
	mv "$tmp/templates/values.yaml" "$tmp/"
	# As cert-manager's release makes it (make/manifests.mk): the version stamped into Chart.yaml,
	# and the CRDs of deploy/crds as one template behind installCRDs.
	sed -e "s/^version: .*/version: $cm_version/" -e "s/^appVersion: .*/appVersion: $cm_version/" \
		-e 's/{{IS_PRERELEASE}}/false/' "$deploy/charts/cert-manager/Chart.template.yaml" >"$tmp/Chart.yaml"
	{
		echo '{{- if .Values.installCRDs }}'
		first=1
		for f in "$deploy"/crds/crd-*.yaml; do
			((first)) || echo '---'
			first=0
			cat "$f"
		done
		echo '{{- end }}'
	} >"$tmp/templates/crds.yaml"
	chmod -R u+w "$tmp"
	rm -rf "$chart"
	mv "$tmp" "$chart"
	log_info "assembled cert-manager $cm_version's chart in $chart"
fi

# ---------------------------------------------------------------- wait for debootstrap

if [[ -n $rootfs_pid ]]; then
	if ! wait "$rootfs_pid"; then
		tail -n 40 "$rootfs_log" >&2
		die "debootstrap failed (log: $rootfs_log)"
	fi
	grep '^timing:' "$rootfs_log" | while read -r line; do log_info "$line"; done
	rm -f "$rootfs_log"
fi
[[ -f $rootfs/.complete ]] || die "no root file system at $rootfs"
log_info "timing: build-node total $(fmt_duration $((SECONDS - total)))"
