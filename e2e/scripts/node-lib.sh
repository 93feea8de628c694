#!/usr/bin/env bash
# What build-node.sh and cluster.sh share: where the e2e node's parts are cached and how each is
# built. Source it after lib.sh, do not run it.
#
#   NODE_CACHE               $E2E_CACHE/node
#   node_k8s_dir             the node's Kubernetes binaries (kubelet, kube-proxy, kube-scheduler,
#                            kube-controller-manager), built from e2e/controlplane/k8sbins
#   node_tool NAME           print the path of a part built from the Go module proxy by go-tool.sh
#                            (building it when missing): containerd, containerd-shim-runc-v2, ctr,
#                            docker-buildx, registry, coredns, cert-manager-controller,
#                            cert-manager-cainjector, cert-manager-webhook
#   node_pause_tag           the pause image's tag, read from k8s.io/kubernetes's build/pause
#   node_pause_bin           the static pause binary (built by build-node.sh)
#   node_cert_manager_chart  cert-manager's Helm chart, assembled from its module (build-node.sh)
#   node_rootfs              the debootstrap tree the base images start from (build-node.sh)

if [[ -n "${_OPBUILDER_NODE_LIB_LOADED:-}" ]]; then
	return 0
fi
_OPBUILDER_NODE_LIB_LOADED=1

NODE_CACHE="$E2E_CACHE/node"
_node_scripts="$OPBUILDER_ROOT/e2e/scripts"

node_k8s_dir() {
	printf '%s/k8s-%s-%s\n' "$NODE_CACHE" "$(pin e2e.kubernetes)" "$(k8s_platform)"
}

node_tool() {
	local name=${1:?usage: node_tool NAME} v module
	case "$name" in
	containerd | containerd-shim-runc-v2 | ctr)
		v=$(pin node.containerd) module=github.com/containerd/containerd/v2
		"$_node_scripts/go-tool.sh" "$name" "$module" "$v" "$module/cmd/$name" \
			--ldflags "-s -w -X $module/version.Version=$v -X $module/version.Revision=module-proxy"
		;;
	docker-buildx)
		v=$(pin node.buildx) module=github.com/docker/buildx
		"$_node_scripts/go-tool.sh" "$name" "$module" "$v" "$module/cmd/buildx" \
			--ldflags "-s -w -X $module/version.Version=$v -X $module/version.Revision=module-proxy"
		;;
	registry)
		v=$(pin node.distribution) module=github.com/distribution/distribution/v3
		"$_node_scripts/go-tool.sh" "$name" "$module" "$v" . --main "$OPBUILDER_ROOT/e2e/node/registry" \
			--ldflags "-s -w -X $module/version.version=$v"
		;;
	coredns)
		v=$(pin node.coredns)
		"$_node_scripts/go-tool.sh" "$name" github.com/coredns/coredns "$v" . \
			--main "$OPBUILDER_ROOT/e2e/node/coredns" --ldflags "-s -w"
		;;
	cert-manager-controller | cert-manager-cainjector | cert-manager-webhook)
		v=$(pin node.cert_manager) module=github.com/cert-manager/cert-manager
		"$_node_scripts/go-tool.sh" "$name" "$module" "$v" "$module/cmd/${name#cert-manager-}" \
			--ldflags "-s -w -X $module/pkg/util.AppVersion=$v -X $module/pkg/util.AppGitCommit=module-proxy"
		;;
	*) die "node_tool: unknown part '$name'" ;;
	esac
}

# _node_module_dir MODULE@VERSION: the module's directory in the module cache (downloaded when
# missing).
_node_module_dir() {
	local dir
	dir=$(go mod download -json "$1" | awk -F'"' '$2 == "Dir" { print $4 }') || return 1
	[[ -d $dir ]] || die "go mod download $1 gave no directory"
	printf '%s\n' "$dir"
}

node_pause_tag() {
	local tag
	tag=$(awk '$1 == "TAG" && $2 == "?=" { print $3; exit }' \
		"$(_node_module_dir "k8s.io/kubernetes@v$(pin e2e.kubernetes)")/build/pause/Makefile")
	[[ $tag =~ ^[0-9][0-9.]*$ ]] || die "cannot read the pause TAG from k8s.io/kubernetes's build/pause/Makefile"
	printf '%s\n' "$tag"
}

node_pause_bin() {
	printf '%s/pause-%s/pause\n' "$NODE_CACHE" "$(node_pause_tag)"
}

node_cert_manager_chart() {
	printf '%s/cert-manager-%s/chart\n' "$NODE_CACHE" "$(pin node.cert_manager)"
}

# The packages of the debootstrap tree: what the golang, rust and curl stand-ins need
# (a shell, curl, git, a C toolchain for cgo and for Rust's linker, make).
NODE_ROOTFS_PACKAGES=ca-certificates,curl,git,make,gcc,libc6-dev

node_rootfs() {
	local key
	key=$(printf '%s %s' "$(pin node.debian_suite)" "$NODE_ROOTFS_PACKAGES" | sha256sum | cut -c1-12)
	printf '%s/rootfs-%s-%s\n' "$NODE_CACHE" "$(pin node.debian_suite)" "$key"
}
