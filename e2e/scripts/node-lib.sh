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
#   node_base_image          the Docker image of that tree (cluster.sh start imports it)
#   node_debian_image NAME   an operand image of a Debian package on that base (memcached,
#                            busybox), built in the node's Docker when missing; see there
#   node_docker ARGS...      docker against the node's daemon: DOCKER_HOST from `cluster.sh env`
#                            (cluster.sh itself points it at the daemon it starts)
#   node_image_key NAME      the key an image was made from (its label), empty when there is none
#   node_build_image NAME KEY CONTEXT LOG
#                            docker build CONTEXT unless NAME was made from KEY

if [[ -n "${_OPBUILDER_NODE_LIB_LOADED:-}" ]]; then
	return 0
fi
_OPBUILDER_NODE_LIB_LOADED=1

NODE_CACHE="$E2E_CACHE/node"
_node_scripts="$OPBUILDER_ROOT/e2e/scripts"

node_k8s_dir() {
	printf '%s/k8s-%s-%s\n' "$NODE_CACHE" "$(pin e2e.kubernetes)" "$(k8s_platform)"
}

# The node's parts from the module proxy are compiled without optimizations and inlining: they
# serve a test node (a few pods, small images), where their speed does not show, and the compile
# of a cold run takes about a fifth less CPU (the registry: 138 s of CPU optimized, 113 s not).
# The Kubernetes binaries are not: they share their packages' compiles with the control plane's
# kube-apiserver, which every envtest runs. Nor is the standard library (`std=`, the last
# pattern that matches wins): compiled as every other build here compiles it, it comes from Go's
# build cache, where `all=` alone compiled its 240-odd packages once more for the node's parts.
# _node_go_tool NAME MODULE VERSION PACKAGE [OPTIONS]: go-tool.sh with the node's compile flags.
_node_go_tool() { "$_node_scripts/go-tool.sh" "$@" --gcflags "all=-N -l" --gcflags "std="; }

node_tool() {
	local name=${1:?usage: node_tool NAME} v module
	case "$name" in
	containerd | containerd-shim-runc-v2 | ctr)
		v=$(pin node.containerd) module=github.com/containerd/containerd/v2
		_node_go_tool "$name" "$module" "$v" "$module/cmd/$name" \
			--ldflags "-s -w -X $module/version.Version=$v -X $module/version.Revision=module-proxy"
		;;
	docker-buildx)
		v=$(pin node.buildx) module=github.com/docker/buildx
		_node_go_tool "$name" "$module" "$v" "$module/cmd/buildx" \
			--ldflags "-s -w -X $module/version.Version=$v -X $module/version.Revision=module-proxy"
		;;
	registry)
		v=$(pin node.distribution) module=github.com/distribution/distribution/v3
		_node_go_tool "$name" "$module" "$v" . --main "$OPBUILDER_ROOT/e2e/node/registry" \
			--ldflags "-s -w -X $module/version.version=$v"
		;;
	coredns)
		v=$(pin node.coredns)
		_node_go_tool "$name" github.com/coredns/coredns "$v" . \
			--main "$OPBUILDER_ROOT/e2e/node/coredns" --ldflags "-s -w"
		;;
	cert-manager-controller | cert-manager-cainjector | cert-manager-webhook)
		v=$(pin node.cert_manager) module=github.com/cert-manager/cert-manager
		_node_go_tool "$name" "$module" "$v" "$module/cmd/${name#cert-manager-}" \
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

node_base_image() {
	printf 'opbuilder.local/debian:%s\n' "$(basename "$(node_rootfs)")"
}

node_docker() { docker "$@"; }

node_image_key() {
	node_docker image inspect -f '{{ index .Config.Labels "org.opbuilder.e2e.key" }}' "$1" 2>/dev/null || true
}

# node_build_image NAME KEY CONTEXT LOG: docker build CONTEXT (its Dockerfile; BuildKit when
# DOCKER_BUILDKIT=1 is set) as NAME, labelled with KEY, unless NAME was already made from KEY; the
# build's output goes to the file LOG, whose tail is printed when the build fails.
node_build_image() {
	local name=$1 key=$2 ctx=$3 log=$4 t=$SECONDS
	[[ $(node_image_key "$name") == "$key" ]] && return 0
	log_info "making image $name"
	node_docker build --label "org.opbuilder.e2e.key=$key" -t "$name" "$ctx" >"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "docker build of $name failed (log: $log)"
	}
	log_info "timing: image $name $(fmt_duration $((SECONDS - t)))"
}

# node_debian_image NAME: the image of a real program from the Debian suite's package, made on the
# node's Debian base (node_base_image) in the Docker daemon of DOCKER_HOST, which must be the
# node's (after `eval "$(cluster.sh env DIR)"`); prints its name, NAME:VERSION, tagged as the
# official image of that program is (VERSION: the version the program reports). NAME is
#   memcached  Debian's memcached on the base: /usr/bin/memcached, user memcache, port 11211,
#              CMD memcached (the official image's default variant is Debian too)
#   busybox    Debian's busybox-static alone in an empty image, its applets linked in /bin, root and
#              nobody in /etc/passwd, CMD sh (as the official busybox image)
# The package comes from the suite's archive through apt-get in the build (BuildKit; the node's
# Docker reaches the archive as the host does). Cached by the base's key (the suite and the tree's
# packages, node_rootfs) and the Dockerfile: the image opbuilder.local/NAME:KEY carries both; a
# repeat call reuses it (about 2 s: it asks the program its version), a new suite builds anew.
#
# Use, on a started node (the stage's cluster_deploy_image and cluster_tutorial do):
#   img=$(node_debian_image memcached)      # e.g. memcached:1.6.18
#   e2e/scripts/cluster.sh push DIR "$img"   # into the node's registry (or `load`, as kind load)
#   opbuilder create api ... --plugins=deploy-image/v1-alpha --image="$img" ...
node_debian_image() {
	local name=${1:?usage: node_debian_image memcached|busybox} base ctx key ref version log t=$SECONDS
	base=$(node_base_image)
	node_docker image inspect "$base" >/dev/null 2>&1 ||
		die "node_debian_image: Docker (DOCKER_HOST=${DOCKER_HOST:-}) has no image $base: start the node (cluster.sh start) and eval \"\$(cluster.sh env DIR)\""
	ctx=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-image.XXXXXX")
	# apt-install PACKAGE...: one step that installs from the suite's archive and leaves no package
	# lists behind; no service started by a package's scripts; the archive's Release may be older
	# than its Valid-Until (as on the host).
	cat >"$ctx/apt-install" <<'EOF'
set -e
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
apt-get -q -o Acquire::Check-Valid-Until=false update
DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends "$@"
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /usr/sbin/policy-rc.d
EOF
	printf 'FROM %s AS debian\n' "$base" >"$ctx/Dockerfile"
	case "$name" in
	memcached)
		cat >>"$ctx/Dockerfile" <<'EOF'
RUN --mount=type=bind,source=apt-install,target=/apt-install sh /apt-install memcached && memcached -V
USER memcache
EXPOSE 11211
CMD ["memcached"]
EOF
		;;
	busybox)
		cat >>"$ctx/Dockerfile" <<'EOF'
RUN --mount=type=bind,source=apt-install,target=/apt-install sh /apt-install busybox-static && \
    mkdir -p /out/bin /out/etc /out/root /out/tmp && cp /bin/busybox /out/bin/busybox && \
    for a in $(/out/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "/out/bin/$a"; done && \
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >/out/etc/passwd && \
    printf 'root:x:0:\nnobody:x:65534:\n' >/out/etc/group && chmod 1777 /out/tmp && chmod 700 /out/root
FROM scratch
COPY --from=debian /out /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["sh"]
EOF
		;;
	*)
		rm -rf "$ctx"
		die "node_debian_image: unknown image '$name' (memcached or busybox)"
		;;
	esac
	key="$(basename "$(node_rootfs)")-$(cat "$ctx/Dockerfile" "$ctx/apt-install" | sha256sum | cut -c1-12)"
	ref=opbuilder.local/$name:$key
	# The log outlives the context, which is removed before a failed build dies.
	log="${TMPDIR:-/tmp}/opbuilder-image-$name.log"
	(DOCKER_BUILDKIT=1 node_build_image "$ref" "$key" "$ctx" "$log") || {
		rm -rf "$ctx"
		die "node_debian_image: the $name image (Debian's package on $base) could not be made"
	}
	rm -rf "$ctx" "$log"
	case "$name" in
	memcached) version=$(node_docker run --rm --network none "$ref" memcached -V | awk '$1 == "memcached" { print $2 }') ;;
	busybox) version=$(node_docker run --rm --network none "$ref" busybox | sed -n '1s/^BusyBox v\([0-9][0-9.]*\) .*/\1/p') ;;
	esac
	[[ $version =~ ^[0-9]+(\.[0-9]+)+$ ]] || die "node_debian_image: the $name image does not run (it reports no version)"
	node_docker tag "$ref" "$name:$version"
	((SECONDS - t < 2)) || log_info "timing: image $name:$version $(fmt_duration $((SECONDS - t)))"
	printf '%s:%s\n' "$name" "$version"
}
