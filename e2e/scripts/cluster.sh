#!/usr/bin/env bash
# A real one-node Kubernetes cluster for the e2e tests, offline, from the pinned Kubernetes:
# etcd, kube-apiserver (ServiceAccount admission, Node+RBAC authorization), kube-controller-manager,
# kube-scheduler, kubelet and kube-proxy (iptables) on containerd + runc with CNI bridge
# networking; CoreDNS for cluster.local and cert-manager running as pods; beside them a Docker
# daemon with BuildKit (buildx) and base images under their usual names for `make docker-build`,
# and a local registry that mirrors docker.io, gcr.io, quay.io and registry.k8s.io for the node.
#
# Usage:
#   cluster.sh start  DIR         install and build what is missing (build-node.sh), start it all,
#                                 state and logs in DIR; bounded waits; on failure the tails of the
#                                 logs, and everything started is stopped again
#   cluster.sh env    DIR         `export` lines for eval: KUBECONFIG, PATH (kubectl, ctr),
#                                 CONTAINERD_ADDRESS and CONTAINERD_NAMESPACE (for ctr),
#                                 DOCKER_HOST, DOCKER_CONFIG (buildx), DOCKER_BUILDKIT, ...
#   cluster.sh load   DIR IMAGE   a local Docker image into the node's runtime (as
#                                 `kind load docker-image` does)
#   cluster.sh push   DIR IMAGE   a local Docker image into the node's registry under its own
#                                 name (the mirror of docker.io, gcr.io, quay.io,
#                                 registry.k8s.io), for the node to pull: only the layers the
#                                 registry and the node lack move (a large image on the node's
#                                 Debian base: its own layers, not the base's)
#   cluster.sh restart DIR        the node as after a power cut and a boot: every process of it
#                                 (control plane, etcd, containerd, kubelet, kube-proxy, the
#                                 containers) killed at once, their mounts cleared, all started
#                                 again on DIR's state until the kubelet reports Ready; the pods'
#                                 containers then start anew
#   cluster.sh restart-apiserver DIR   kube-apiserver alone stopped (SIGTERM) and started again
#                                 with the same flags on the same etcd; waits for /readyz
#   cluster.sh status DIR         exit 0 when every process runs and the node is Ready
#   cluster.sh stop   DIR         stop it all and remove what it added to the host: processes,
#                                 mounts, iptables rules, interfaces, CNI files, the lo address,
#                                 changed sysctls; DIR/host-before.txt and DIR/host-after.txt hold
#                                 the host's state before start and after stop (they must match)
#
# One node per machine: `start` holds a machine-wide lock (OPBUILDER_NODE_LOCK, default
# /tmp/opbuilder-node.lock) until `stop`; a second `start` waits for it up to
# OPBUILDER_NODE_LOCK_TIMEOUT seconds (default 1800; 0: fail at once), naming the running node.
#
# Addresses: the API server, kubelet and etcd on 10.200.0.1 (added to lo: both the host and the
# pods reach it), pods in 10.244.0.0/16 on the bridge opbuilder0, Services in 10.96.0.0/16 (DNS
# 10.96.0.10), the registry on 127.0.0.1:5000 (OPBUILDER_NODE_REGISTRY_PORT). Needs root.
# Other knobs: OPBUILDER_NODE_START_TIMEOUT (seconds per wait, default 300), OPBUILDER_E2E_CACHE,
# OPBUILDER_NODE_RUST_OPT_LEVEL (when set, the rust: base image sets CARGO_PROFILE_RELEASE_OPT_LEVEL
# to it, so a Rust Dockerfile's `cargo build --release` compiles at that level: the cluster stage
# sets 0; by default a release build is optimized as with the official image).
# docs/testing.md: how to use it by hand; docs/decisions.md: why these parts.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=node-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/node-lib.sh"
# shellcheck source-path=SCRIPTDIR source=daemons.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

action=${1:-}
case "$action" in
start | restart | restart-apiserver | env | stop | status) [[ $# -eq 2 ]] || usage ;;
load | push) [[ $# -eq 3 ]] || usage ;;
*) usage ;;
esac
daemon_state_dir "$action" "$2"

NODE_IP=10.200.0.1
NODE_NAME=opbuilder-e2e
POD_CIDR=10.244.0.0/16
SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SVC_IP=10.96.0.1
DNS_IP=10.96.0.10
API_PORT=6443
CNI_BRIDGE=opbuilder0
CNI_NETWORK=opbuilder
REGISTRY=127.0.0.1:${OPBUILDER_NODE_REGISTRY_PORT:-5000}
MIRRORED=(docker.io gcr.io quay.io registry.k8s.io)
LOCK=${OPBUILDER_NODE_LOCK:-/tmp/opbuilder-node.lock}
LOCK_TIMEOUT=${OPBUILDER_NODE_LOCK_TIMEOUT:-1800}
TIMEOUT=${OPBUILDER_NODE_START_TIMEOUT:-300}
# What the node's parts change on the host, put back by stop.
SYSCTLS=(net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding
	net.ipv6.conf.all.forwarding net.ipv4.conf.all.route_localnet
	net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
	vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

# Where the node's parts write outside DIR whatever they are told (the kubelet's device-plugin
# socket, the shims' sockets, Docker's plugin directory, libcni's cache, containerd's opt
# directory, the kubelet's /var/log/containers): removed by stop unless they existed before start.
HOST_DIRS=(/var/lib/kubelet /run/containerd /run/docker /var/lib/cni /opt/containerd /var/log/containers)

pki="$dir/pki"
k8s_bin=$(k8s_bin_dir)
node_bin=$(node_k8s_dir)
docker_root="$NODE_CACHE/docker"
registry_root="$NODE_CACHE/registry"
docker_sock="$dir/docker.sock"
containerd_sock="$dir/containerd/containerd.sock"

# ================================================================ small helpers

k() { "$k8s_bin/kubectl" --kubeconfig "$dir/kubeconfig" --request-timeout=30s "$@"; }
# dk ARGS: docker against the node's daemon, with the node's config; DK_TIMEOUT=SECONDS bounds it.
dk() { DOCKER_HOST="unix://$docker_sock" DOCKER_CONFIG="$dir/docker-config" ${DK_TIMEOUT:+timeout "$DK_TIMEOUT"} docker "$@"; }
ctr_() { "$dir/bin/ctr" --address "$containerd_sock" --namespace k8s.io "$@"; }
# Probes that must not hang on a daemon that accepts but never answers.
docker_answers() { DK_TIMEOUT=20 dk version; }
containerd_answers() { ctr_ --timeout 10s version; }

# await DESC CMD...: wait_for with the node's timeout, failing start when it runs out.
await() {
	local desc=$1
	shift
	wait_for "$TIMEOUT" "$desc" "$@" || die "$desc: not within ${TIMEOUT}s"
}

# ================================================================ the machine-wide lock

lock_owner() { [[ -s $LOCK ]] && head -n1 "$LOCK"; }

# A node holds the lock through its holder process (a `sleep` that keeps the lock's file
# descriptor open) from start to stop.
acquire_lock() {
	exec 9>>"$LOCK"
	if ! flock -n 9; then
		local owner
		owner=$(lock_owner) || owner="(unknown)"
		[[ $owner != "$dir" ]] || die "a node is already running in $dir (stop it first: $0 stop $dir)"
		((LOCK_TIMEOUT > 0)) || die "a node is running on this machine in $owner; one node per machine (stop it with: $0 stop $owner)"
		log_info "a node is running on this machine in $owner; waiting up to ${LOCK_TIMEOUT}s for it to stop"
		if ! flock -w "$LOCK_TIMEOUT" 9; then
			# Another node may have taken the lock while this one waited: name the one holding it now.
			owner=$(lock_owner) || owner="(unknown)"
			die "the node in $owner still runs after ${LOCK_TIMEOUT}s; one node per machine (stop it with: $0 stop $owner)"
		fi
	fi
	printf '%s\n' "$dir" >"$LOCK"
}

start_holder() {
	setsid sleep infinity </dev/null >/dev/null 2>&1 &
	printf '%s sleep\n' "$!" >"$dir/lock-holder.pid"
}

# ================================================================ the host's state

# The processes of a node: its binaries, Docker's, and everything in a container's cgroup.
node_processes() {
	local p exe cg cmd sid
	session() { sed 's/.*) //' "$1/stat" 2>/dev/null | awk '{ print $4 }'; }
	sid=$(session /proc/$$)
	for p in /proc/[0-9]*; do
		# This script and the commands it runs are not the node.
		[[ $(session "$p") != "$sid" ]] || continue
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
		cg=$(awk -F: '$2 == "pids" { print $3 }' "$p/cgroup" 2>/dev/null) || cg=/
		case "${exe##*/}" in
		kubelet | kube-proxy | kube-scheduler | kube-controller-manager | containerd* | dockerd | docker-proxy | runc | registry | coredns)
			printf '%s %s\n' "${exe##*/}" "${cmd:0:120}"
			continue
			;;
		esac
		if [[ $cg != / || $cmd == *"$dir/"* || $cmd == *"$NODE_IP"* ]]; then
			printf '%s %s [cgroup %s]\n' "${exe##*/}" "${cmd:0:120}" "$cg"
		fi
	done | sort
}

# node_cgroups: the cgroups containerd's pods (k8s.io) and Docker's builds (docker) are put in.
node_cgroups() {
	find /sys/fs/cgroup -maxdepth 2 -type d \( -name k8s.io -o -name docker \) 2>/dev/null | sort || true
}

# host_state: what a node adds to the host and stop must take away again.
host_state() {
	echo "## processes"
	node_processes
	echo "## mounts"
	awk -v d="$dir/" -v c="$NODE_CACHE/" '{
		for (i = 7; $i != "-"; i++) {}
		fs = $(i + 1)
		if (fs == "overlay" || fs == "nsfs" || index($5 "/", d) == 1 || index($5 "/", c) == 1 ||
			$5 ~ /^\/(var\/)?run\/(containerd|docker|netns)/ || $5 ~ /^\/var\/lib\/(kubelet|docker|containerd)/)
			print $5, fs
	}' /proc/self/mountinfo | sort
	echo "## links"
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | grep -E "^(docker|$CNI_BRIDGE|veth|cni)" | sort || true
	echo "## lo"
	ip -o addr show dev lo | awk '{ print $3, $4 }' | sort
	local cmd
	for cmd in iptables-save ip6tables-save; do
		echo "## $cmd"
		"$cmd" 2>/dev/null | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]$//' || true
	done
	if command -v nft >/dev/null; then
		echo "## nft"
		nft list ruleset 2>/dev/null || true
	fi
	echo "## cni files"
	find /etc/cni /var/lib/cni -type f 2>/dev/null | sort || true
	echo "## directories"
	local d
	for d in "${HOST_DIRS[@]}"; do
		[[ -e $d ]] && echo "$d"
	done
	echo "## cgroups"
	node_cgroups
	echo "## container logs"
	find /var/log/containers /var/log/pods -mindepth 1 2>/dev/null | sort || true
	echo "## sysctl"
	local s
	for s in "${SYSCTLS[@]}"; do
		printf '%s = %s\n' "$s" "$(sysctl -n "$s" 2>/dev/null || echo '(none)')"
	done
}

# ================================================================ certificates and kubeconfigs

# sign NAME SUBJECT EXTENSIONS: NAME.key and NAME.crt signed by the node's CA, for a server or
# a client (EXTENSIONS: the extended key usage and names).
sign() {
	pki_sign "$1" "$2" "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n$3"
}

gen_pki() {
	[[ -f $pki/done ]] && return 0
	log_info "generating certificates in $pki"
	mkdir -p "$pki"
	chmod 700 "$pki"
	(
		cd "$pki"
		umask 077
		pki_ca opbuilder-node-ca
		server="extendedKeyUsage=serverAuth\n" client="extendedKeyUsage=clientAuth\n"
		sign apiserver "/CN=kube-apiserver" "${server}subjectAltName=IP:$NODE_IP,IP:$KUBERNETES_SVC_IP,IP:127.0.0.1,DNS:localhost,DNS:$NODE_NAME,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
		sign kubelet-serving "/CN=$NODE_NAME" "${server}subjectAltName=IP:$NODE_IP,DNS:$NODE_NAME\n"
		sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
		sign admin "/O=system:masters/CN=opbuilder-admin" "$client"
		sign kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" "$client"
		sign kube-proxy "/CN=system:kube-proxy" "$client"
		sign kube-controller-manager "/CN=system:kube-controller-manager" "$client"
		sign kube-scheduler "/CN=system:kube-scheduler" "$client"
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		touch done
	) || die "certificate generation failed (openssl)"
}

# kubeconfig NAME: DIR/NAME.kubeconfig (DIR/kubeconfig for admin) with the client certificate NAME.
kubeconfig() {
	local file="$dir/$1.kubeconfig"
	[[ $1 == admin ]] && file="$dir/kubeconfig"
	cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NODE_NAME
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: $1
  user:
    client-certificate-data: $(base64 -w0 <"$pki/$1.crt")
    client-key-data: $(base64 -w0 <"$pki/$1.key")
contexts:
- name: $NODE_NAME
  context:
    cluster: $NODE_NAME
    user: $1
    namespace: default
current-context: $NODE_NAME
EOF
	chmod 600 "$file"
}

# ================================================================ configuration files

write_configs() {
	local pause_image=$1 h upstream
	mkdir -p "$dir/containerd" "$dir/cni/net.d" "$dir/kubelet" "$dir/docker" "$dir/docker-config/cli-plugins"
	cat >"$dir/containerd/config.toml" <<EOF
version = 4
root = "$dir/containerd/root"
state = "$dir/containerd/state"
# Not the host's drop-ins (/etc/containerd/conf.d by default).
imports = []

[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = "$containerd_sock"
  [plugins.'io.containerd.server.v1.ttrpc']
    address = "$containerd_sock.ttrpc"
  [plugins.'io.containerd.internal.v1.opt']
    path = "$dir/containerd/opt"
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$pause_image"
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "$dir/containerd/certs.d"
  [plugins.'io.containerd.cri.v1.runtime']
    # This machine's processes lack CAP_SYS_RESOURCE: a negative oom_score_adj is refused, and
    # runc then fails every sandbox ("can't get final child's PID from pipe: EOF").
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "$dir/cni/net.d"
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "/usr/sbin/runc"
          Root = "$dir/containerd/runc"
          SystemdCgroup = false
EOF
	# The local registry mirrors each registry under a path of its own (127.0.0.1:5000/v2/<host>/...).
	for h in "${MIRRORED[@]}"; do
		upstream=https://$h
		[[ $h == docker.io ]] && upstream=https://registry-1.docker.io
		mkdir -p "$dir/containerd/certs.d/$h"
		cat >"$dir/containerd/certs.d/$h/hosts.toml" <<EOF
server = "$upstream"

[host."http://$REGISTRY/v2/$h"]
  capabilities = ["pull", "resolve"]
  override_path = true
EOF
	done

	cat >"$dir/cni/net.d/10-$CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$POD_CIDR" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$dir/cni/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF

	# Pods with dnsPolicy Default (CoreDNS) get no upstream: nothing leaves the cluster.
	: >"$dir/kubelet/resolv.conf"
	cat >"$dir/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: $NODE_IP
healthzPort: 10248
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $pki/ca.crt
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$containerd_sock
# This machine has cgroup v1 controllers (the kubelet refuses them by default since 1.35).
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: $dir/kubelet/resolv.conf
podLogsDir: $dir/kubelet/pod-logs
# A shared disk: evict only when it is really full, never collect images.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF

	cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $dir/kube-proxy.kubeconfig
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
healthzBindAddress: $NODE_IP:10256
metricsBindAddress: $NODE_IP:10249
# NodePorts only on the node's address, never on the host's loopback or eth0.
nodePortAddresses: [$NODE_IP/32]
# Leave the host's conntrack settings alone.
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF

	local mtu
	mtu=$(ip -o link show "$(ip -o route show default | awk '{ print $5; exit }')" 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "mtu") print $(i + 1) }')
	cat >"$dir/docker/daemon.json" <<EOF
{
  "data-root": "$docker_root",
  "exec-root": "$dir/docker/run",
  "pidfile": "$dir/docker/dockerd.pid",
  "hosts": ["unix://$docker_sock"],
  "storage-driver": "overlay2",
  "mtu": ${mtu:-1500},
  "log-level": "warn",
  "builder": { "gc": { "enabled": true, "defaultKeepStorage": "10GB" } }
}
EOF

	cat >"$dir/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $registry_root
  delete:
    enabled: true
http:
  addr: $REGISTRY
EOF
}

# ================================================================ images

# node-lib.sh's image helpers talk to this node's daemon.
node_docker() { dk "$@"; }
# build_image NAME KEY CONTEXT: docker build CONTEXT (its Dockerfile) unless NAME was made from KEY.
build_image() { node_build_image "$1" "$2" "$3" "$dir/image-build.log"; }

# import_image NAME KEY TREE CHANGES...: docker import of the directory TREE.
import_image() {
	local name=$1 key=$2 tree=$3 t=$SECONDS c
	shift 3
	[[ $(node_image_key "$name") == "$key" ]] && return 0
	log_info "making image $name (docker import)"
	local -a changes=(--change "LABEL org.opbuilder.e2e.key=$key")
	for c in "$@"; do changes+=(--change "$c"); done
	tar -C "$tree" --numeric-owner -c . | dk import "${changes[@]}" - "$name" >/dev/null ||
		die "docker import of $name failed"
	log_info "timing: image $name $(fmt_duration $((SECONDS - t)))"
}

# mirror_ref NAME: where the local registry serves NAME (its registry host becomes a path).
mirror_ref() {
	local name=$1 first=${1%%/*}
	if [[ $name != */* ]]; then
		name=docker.io/library/$name
	elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
		name=docker.io/$name
	fi
	printf '%s/%s\n' "$REGISTRY" "$name"
}

# push_image NAME: NAME into the local registry, unless it already holds this image.
push_image() {
	local name=$1 ref repo tag id have
	ref=$(mirror_ref "$name")
	repo=${ref#"$REGISTRY"/}
	tag=${repo##*:}
	repo=${repo%:*}
	id=$(dk image inspect -f '{{ .Id }}' "$name")
	have=$(curl -fsS --max-time 30 -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
		"http://$REGISTRY/v2/$repo/manifests/$tag" 2>/dev/null | tr -d ' \n' |
		sed -n 's/.*"config":{[^}]*"digest":"\([^"]*\)".*/\1/p') || true
	[[ $have == "$id" ]] && return 0
	dk tag "$name" "$ref"
	dk push "$ref" >"$dir/image-push.log" 2>&1 || {
		tail -n 20 "$dir/image-push.log" >&2
		die "docker push $ref failed"
	}
	dk rmi "$ref" >/dev/null
	log_info "pushed $name to the local registry"
}

make_images() {
	local work rootfs base base_key ca_sum go_root go_version rust_root rust_version pause_tag key
	rm -rf "$NODE_CACHE"/.images.*
	work=$(mktemp -d "$NODE_CACHE/.images.XXXXXX")
	ca_sum=$(sha256sum </etc/ssl/certs/ca-certificates.crt | cut -c1-12)
	rootfs=$(node_rootfs)
	base_key=$(basename "$rootfs")
	base=$(node_base_image)
	import_image "$base" "$base_key" "$rootfs" \
		"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" 'CMD ["bash"]'

	# The machine reaches the package registries through a certificate authority only the host's
	# bundle carries: the images that fetch anything carry the host's bundle.
	mkdir -p "$work/golang"
	cp /etc/ssl/certs/ca-certificates.crt "$work/golang/"
	go_root=$(go env GOROOT)
	go_version=$(go env GOVERSION)
	[[ $go_version == "go$(pin scaffold.go_image)" || $go_version == "go$(pin scaffold.go_image)."* ]] ||
		die "the host's Go is $go_version; the golang:$(pin scaffold.go_image) image needs Go $(pin scaffold.go_image).x"
	cat >"$work/golang/Dockerfile" <<EOF
FROM $base
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go /usr/local/go
ENV GOLANG_VERSION=${go_version#go} GOTOOLCHAIN=local GOPATH=/go
ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN mkdir -p /go/src /go/bin && chmod -R 1777 /go
WORKDIR /go
EOF
	key="$go_version-$ca_sum-$base_key-$(sha256sum <"$work/golang/Dockerfile" | cut -c1-12)"
	if [[ $(node_image_key "golang:$(pin scaffold.go_image)") != "$key" ]]; then
		cp -al "$go_root" "$work/golang/go" 2>/dev/null || cp -a "$go_root" "$work/golang/go"
		build_image "golang:$(pin scaffold.go_image)" "$key" "$work/golang"
	fi

	mkdir -p "$work/rust"
	cp /etc/ssl/certs/ca-certificates.crt "$work/rust/"
	rust_version=$(rustc --version | awk '{ print $2 }')
	[[ $rust_version == "$(pin rust.rust_image)" || $rust_version == "$(pin rust.rust_image)."* ]] ||
		die "the host's Rust is $rust_version; the rust:$(pin rust.rust_image) image needs Rust $(pin rust.rust_image).x"
	rust_root=$(rustc --print sysroot)
	local toolchain="$rust_version-x86_64-unknown-linux-gnu"
	cat >"$work/rust/Dockerfile" <<EOF
FROM $base
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY toolchain /usr/local/rustup/toolchains/$toolchain
COPY rustup /usr/local/cargo/bin/rustup
COPY settings.toml /usr/local/rustup/settings.toml
RUN cd /usr/local/cargo/bin && for p in cargo cargo-clippy cargo-fmt clippy-driver rustc rustdoc rustfmt; do ln -s rustup \$p; done
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo RUST_VERSION=$rust_version
ENV PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
	if [[ -n ${OPBUILDER_NODE_RUST_OPT_LEVEL:-} ]]; then
		[[ $OPBUILDER_NODE_RUST_OPT_LEVEL =~ ^([0-3]|s|z)$ ]] ||
			die "OPBUILDER_NODE_RUST_OPT_LEVEL='$OPBUILDER_NODE_RUST_OPT_LEVEL' is not an opt-level of Cargo (0 to 3, s or z; e.g. 0)"
		echo "ENV CARGO_PROFILE_RELEASE_OPT_LEVEL=$OPBUILDER_NODE_RUST_OPT_LEVEL" >>"$work/rust/Dockerfile"
	fi
	printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "minimal"\nauto_self_update = "disable"\n' \
		"$toolchain" >"$work/rust/settings.toml"
	key="$rust_version-$(ls "$rust_root/lib/rustlib" | tr '\n' ' ' | sha256sum | cut -c1-8)-$ca_sum-$base_key-$(cat "$work/rust/Dockerfile" "$work/rust/settings.toml" | sha256sum | cut -c1-12)"
	if [[ $(node_image_key "rust:$(pin rust.rust_image)") != "$key" ]]; then
		mkdir -p "$work/rust/toolchain"
		(cd "$rust_root" && for e in *; do
			[[ $e == share ]] || cp -al "$e" "$work/rust/toolchain/" 2>/dev/null || cp -a "$e" "$work/rust/toolchain/"
		done)
		cp "$(command -v rustup)" "$work/rust/rustup"
		build_image "rust:$(pin rust.rust_image)" "$key" "$work/rust"
	fi

	# gcr.io/distroless/static:nonroot: no shell, CA certificates, the nonroot user (65532).
	local d="$work/distroless"
	mkdir -p "$d/etc/ssl/certs" "$d/home/nonroot" "$d/tmp" "$d/root"
	cp /etc/ssl/certs/ca-certificates.crt "$d/etc/ssl/certs/"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$d/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$d/etc/group"
	printf 'hosts: files dns\n' >"$d/etc/nsswitch.conf"
	chown 65532:65532 "$d/home/nonroot"
	chmod 700 "$d/home/nonroot" "$d/root"
	chmod 1777 "$d/tmp"
	key="distroless-$ca_sum-1"
	import_image gcr.io/distroless/static:nonroot "$key" "$d" \
		"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		"ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" "USER 65532" "WORKDIR /home/nonroot"

	# curlimages/curl:latest: curl and a shell, as the image's curl_user (uid 100).
	mkdir -p "$work/curl"
	cat >"$work/curl/Dockerfile" <<EOF
FROM $base
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN groupadd -g 101 curl_group && useradd -u 100 -g 101 -d /home/curl_user -m -s /bin/sh curl_user
USER 100
ENTRYPOINT ["curl"]
CMD ["--help"]
EOF
	cp /etc/ssl/certs/ca-certificates.crt "$work/curl/"
	build_image curlimages/curl:latest "$ca_sum-$base_key-$(sha256sum <"$work/curl/Dockerfile" | cut -c1-12)" "$work/curl"

	# The pause image of k8s.io/kubernetes's build/pause, and the node's addons.
	pause_tag=$(node_pause_tag)
	mkdir -p "$work/pause"
	cp "$(node_pause_bin)" "$work/pause/pause"
	import_image "registry.k8s.io/pause:$pause_tag" "pause-$(sha256sum <"$(node_pause_bin)" | cut -c1-12)" \
		"$work/pause" "USER 65535:65535" 'ENTRYPOINT ["/pause"]'

	static_image() { # NAME BINARY PATH USER
		mkdir -p "$work/$1"
		cp "$2" "$work/$1/bin"
		printf 'FROM gcr.io/distroless/static:nonroot\nCOPY bin %s\nUSER %s\nENTRYPOINT ["%s"]\n' "$3" "$4" "$3" >"$work/$1/Dockerfile"
		build_image "$5" "$(cat "$2" "$work/$1/Dockerfile" | sha256sum | cut -c1-16)-$(node_image_key gcr.io/distroless/static:nonroot)" "$work/$1"
	}
	static_image coredns "$(node_tool coredns)" /coredns 65532 "registry.k8s.io/coredns/coredns:$(pin node.coredns)"
	local c cm=$(pin node.cert_manager)
	for c in controller cainjector webhook; do
		static_image "cm-$c" "$(node_tool "cert-manager-$c")" "/app/cmd/$c/$c" 1000 "quay.io/jetstack/cert-manager-$c:$cm"
	done

	for c in gcr.io/distroless/static:nonroot curlimages/curl:latest "registry.k8s.io/pause:$pause_tag" \
		"registry.k8s.io/coredns/coredns:$(pin node.coredns)" "quay.io/jetstack/cert-manager-controller:$cm" \
		"quay.io/jetstack/cert-manager-cainjector:$cm" "quay.io/jetstack/cert-manager-webhook:$cm"; do
		push_image "$c"
	done
	rm -rf "$work"
}

# ================================================================ start

dump_logs() {
	local f
	for f in "$dir"/*.log; do
		[[ -f $f ]] || continue
		printf '\n----- last 25 lines of %s -----\n' "$f" >&2
		tail -n 25 "$f" >&2
	done
	if [[ -f $dir/kubeconfig ]] && k get --raw /readyz >/dev/null 2>&1; then
		printf '\n----- pods and recent events -----\n' >&2
		k get pods -A -o wide >&2 2>&1 || true
		k get events -A --sort-by=.lastTimestamp 2>&1 | tail -n 25 >&2 || true
	fi
	printf -- '----- end of logs (all in %s) -----\n' "$dir" >&2
}

start_ok=0
on_start_exit() {
	((start_ok)) && return 0
	log_error "the node failed to start (state and logs in $dir)"
	dump_logs
	do_stop || true
}

node_ready() {
	[[ $(k get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

apply_coredns() {
	k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {kind: ServiceAccount, name: coredns, namespace: kube-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  # Cluster names only: no forward plugin, so no query leaves the cluster.
  Corefile: |
    .:53 {
        errors
        health {
            lameduck 5s
        }
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            ttl 30
        }
        cache 30
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector:
    matchLabels: {k8s-app: kube-dns}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile: {type: RuntimeDefault}
        # Port 53 without root or capabilities.
        sysctls:
        - {name: net.ipv4.ip_unprivileged_port_start, value: "0"}
      containers:
      - name: coredns
        image: registry.k8s.io/coredns/coredns:$(pin node.coredns)
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        livenessProbe:
          httpGet: {path: /health, port: 8080}
          initialDelaySeconds: 5
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
        resources:
          requests: {cpu: 50m, memory: 50Mi}
        volumeMounts:
        - {name: config, mountPath: /etc/coredns, readOnly: true}
      volumes:
      - name: config
        configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

deployment_available() {
	[[ $(k -n "$1" get deployment "$2" -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}') == True ]]
}

# cert-manager's webhook answers when the API server can run a dry-run create of an Issuer
# through it.
cert_manager_webhook_answers() {
	k apply --dry-run=server -f - <<EOF
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: opbuilder-probe, namespace: cert-manager}
spec: {selfSigned: {}}
EOF
}

install_cert_manager() {
	local helm t=$SECONDS
	helm=$("$here/go-tool.sh" helm)
	log_info "installing cert-manager $(pin node.cert_manager) from its chart"
	KUBECONFIG="$dir/kubeconfig" "$helm" upgrade --install cert-manager "$(node_cert_manager_chart)" \
		--namespace cert-manager --create-namespace --set installCRDs=true \
		--set startupapicheck.enabled=false --set global.leaderElection.namespace=cert-manager \
		--wait --timeout "${TIMEOUT}s" >>"$dir/helm.log" 2>&1 || die "helm install of cert-manager failed (log: $dir/helm.log)"
	await "cert-manager's webhook to answer" cert_manager_webhook_answers
	log_info "cert-manager running in $(fmt_duration $((SECONDS - t)))"
}

# launch_apiserver: kube-apiserver on etcd's data and DIR's certificates, until /readyz answers.
launch_apiserver() {
	daemon_launch "$dir" kube-apiserver "$k8s_bin/kube-apiserver" \
		--etcd-servers=http://127.0.0.1:2379 \
		--bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port="$API_PORT" \
		--tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$pki/ca.crt" \
		--kubelet-preferred-address-types=InternalIP \
		--allow-privileged=true --profiling=false --cert-dir="$pki/serving"
	WAIT_FOR_PID=$(daemon_recorded "$dir" kube-apiserver) await "kube-apiserver /readyz" k get --raw /readyz
}

# launch_node: containerd, etcd, the control plane, the kubelet and kube-proxy started on what DIR
# holds (start wrote it; restart finds it again), until the node is Ready.
launch_node() {
	log_info "starting containerd, etcd and the control plane on $NODE_IP"
	PATH="$dir/bin:/usr/sbin:/usr/bin:/sbin:/bin" daemon_launch "$dir" containerd "$dir/bin/containerd" \
		--config "$dir/containerd/config.toml"
	daemon_launch "$dir" etcd "$k8s_bin/etcd" --name="$NODE_NAME" --data-dir="$dir/etcd" \
		--listen-client-urls=http://127.0.0.1:2379 --advertise-client-urls=http://127.0.0.1:2379 \
		--listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
		--initial-cluster="$NODE_NAME=http://127.0.0.1:2380" --unsafe-no-fsync=true --log-level=warn
	WAIT_FOR_PID=$(daemon_recorded "$dir" etcd) await "etcd" curl -fsS --max-time 5 http://127.0.0.1:2379/health
	launch_apiserver
	daemon_launch "$dir" kube-controller-manager "$node_bin/kube-controller-manager" \
		--kubeconfig="$dir/kube-controller-manager.kubeconfig" \
		--authentication-kubeconfig="$dir/kube-controller-manager.kubeconfig" \
		--authorization-kubeconfig="$dir/kube-controller-manager.kubeconfig" \
		--bind-address="$NODE_IP" --leader-elect=false --use-service-account-credentials=true \
		--controllers='*,-nodeipam' --service-account-private-key-file="$pki/sa.key" \
		--root-ca-file="$pki/ca.crt" --cluster-signing-cert-file="$pki/ca.crt" \
		--cluster-signing-key-file="$pki/ca.key" --service-cluster-ip-range="$SERVICE_CIDR"
	daemon_launch "$dir" kube-scheduler "$node_bin/kube-scheduler" \
		--kubeconfig="$dir/kube-scheduler.kubeconfig" \
		--authentication-kubeconfig="$dir/kube-scheduler.kubeconfig" \
		--authorization-kubeconfig="$dir/kube-scheduler.kubeconfig" \
		--bind-address="$NODE_IP" --leader-elect=false
	WAIT_FOR_PID=$(daemon_recorded "$dir" containerd) await "containerd" containerd_answers

	log_info "starting kubelet and kube-proxy (node $NODE_NAME)"
	daemon_launch "$dir" kubelet "$node_bin/kubelet" --config="$dir/kubelet/config.yaml" \
		--kubeconfig="$dir/kubelet.kubeconfig" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
		--root-dir="$dir/kubelet/root" --cert-dir="$dir/kubelet/pki"
	daemon_launch "$dir" kube-proxy "$node_bin/kube-proxy" --config="$dir/kube-proxy.yaml"
	WAIT_FOR_PID=$(daemon_recorded "$dir" kubelet) await "node $NODE_NAME to be Ready" node_ready
}

do_start() {
	[[ $(id -u) == 0 ]] || die "the node needs root"
	t_total=$SECONDS
	local t=$SECONDS
	nice -n 10 "$here/build-node.sh" || die "build-node.sh failed"
	log_info "timing: parts installed or built (build-node.sh) $(fmt_duration $((SECONDS - t)))"
	need_cmd docker openssl curl setsid flock iptables ip sysctl base64 tar rustc go

	acquire_lock
	local other
	other=$(pgrep -x dockerd || true)
	[[ -z $other ]] || die "a Docker daemon already runs (pid $other); the node runs its own: stop that one first"
	[[ ! -f $dir/started ]] || die "$dir holds a node that was not stopped ($0 stop $dir first)"
	trap on_start_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	start_holder
	t=$SECONDS
	# Leftovers of a node that was never stopped belong to nobody now: clean them first.
	cleanup_host quiet
	host_state >"$dir/host-before.txt"
	rm -f "$dir/host-after.txt"
	local s
	for s in "${SYSCTLS[@]}"; do
		printf '%s %s\n' "$s" "$(sysctl -n "$s" 2>/dev/null || echo -)"
	done >"$dir/sysctl.before"

	gen_pki
	local name
	for name in admin kubelet kube-proxy kube-controller-manager kube-scheduler; do kubeconfig "$name"; done
	local pause_image
	pause_image="registry.k8s.io/pause:$(node_pause_tag)"
	write_configs "$pause_image"
	mkdir -p "$dir/bin"
	ln -sf "$k8s_bin/kubectl" "$dir/bin/kubectl"
	for name in containerd containerd-shim-runc-v2 ctr; do ln -sf "$(node_tool "$name")" "$dir/bin/$name"; done
	ln -sf "$(node_tool docker-buildx)" "$dir/docker-config/cli-plugins/docker-buildx"

	ip addr add "$NODE_IP/32" dev lo
	sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1

	log_info "starting the registry on $REGISTRY and Docker"
	mkdir -p "$registry_root" "$docker_root"
	daemon_launch "$dir" registry "$(node_tool registry)" serve "$dir/registry.yml"
	# Debian's Docker runs Debian's containerd (found on PATH), never the node's.
	PATH=/usr/sbin:/usr/bin:/sbin:/bin daemon_launch "$dir" dockerd /usr/sbin/dockerd --config-file "$dir/docker/daemon.json"
	WAIT_FOR_PID=$(daemon_recorded "$dir" registry) await "the registry" curl -fsS --max-time 5 "http://$REGISTRY/v2/"
	WAIT_FOR_PID=$(daemon_recorded "$dir" dockerd) await "the Docker daemon" docker_answers
	dk buildx version >/dev/null || die "docker buildx does not work (plugin $dir/docker-config/cli-plugins/docker-buildx)"
	log_info "timing: registry and Docker $(fmt_duration $((SECONDS - t)))"
	t=$SECONDS
	make_images
	log_info "timing: images $(fmt_duration $((SECONDS - t)))"

	t=$SECONDS
	launch_node
	await "the default ServiceAccount" k -n default get serviceaccount default
	log_info "timing: node Ready $(fmt_duration $((SECONDS - t)))"

	t=$SECONDS
	apply_coredns
	await "CoreDNS to be available" deployment_available kube-system coredns
	log_info "timing: CoreDNS $(fmt_duration $((SECONDS - t)))"
	t=$SECONDS
	install_cert_manager
	log_info "timing: cert-manager $(fmt_duration $((SECONDS - t)))"

	touch "$dir/started"
	start_ok=1
	log_info "node $NODE_NAME ready in $(fmt_duration $((SECONDS - t_total))): eval \"\$($0 env $dir)\""
}

# ================================================================ stop

# Deleting the pods through the API lets the kubelet stop their sandboxes, which runs the CNI
# plugins' DEL (veth, iptables chains, IP address).
drain() {
	daemon_pid "$dir" kube-apiserver >/dev/null && daemon_pid "$dir" kubelet >/dev/null || return 0
	daemon_stop "$dir" kube-controller-manager
	daemon_stop "$dir" kube-scheduler
	k delete pods --all --all-namespaces --grace-period=2 --wait=false >/dev/null 2>&1 || return 0
	no_pods() { [[ -z $(k get pods -A -o name 2>/dev/null) ]]; }
	no_tasks() { [[ -z $(ctr_ tasks ls -q 2>/dev/null) ]]; }
	wait_for 90 "the pods to be gone" no_pods || log_warn "pods still exist: $(k get pods -A -o name | xargs)"
	wait_for 60 "the containers to stop" no_tasks || log_warn "containers still run: $(ctr_ tasks ls -q | xargs)"
}

# Remove what a node adds to the host, whether or not its processes stopped cleanly. With
# `quiet`, only say what was found.
cleanup_host() {
	local quiet=${1:-} m cmd table chain rule found=()
	# Containers whose shims outlived containerd, and the shims.
	local p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case "${exe##*/}" in
		containerd-shim-runc-v2)
			if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -- "$dir/" >/dev/null; then
				found+=("shim ${p#/proc/}")
				kill -KILL "${p#/proc/}" 2>/dev/null || true
			fi
			;;
		esac
	done
	for m in $(awk -v d="$dir/" 'index($5 "/", d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		found+=("mount $m")
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	find /var/log/containers -maxdepth 1 -type l -lname "$dir/*" -delete 2>/dev/null || true
	if ip -o addr show dev lo | grep " $NODE_IP/32 " >/dev/null; then
		found+=("lo address $NODE_IP")
		ip addr del "$NODE_IP/32" dev lo
	fi
	for m in "$CNI_BRIDGE" docker0; do
		if ip link show "$m" >/dev/null 2>&1; then
			found+=("interface $m")
			ip link del "$m" 2>/dev/null || true
		fi
	done
	# kube-proxy's own clean-up, then every rule that jumps to a chain of the node's parts (KUBE-,
	# CNI-, DOCKER) or names their interfaces, then those chains.
	if [[ -x $node_bin/kube-proxy ]] && iptables-save 2>/dev/null | grep 'KUBE-' >/dev/null; then
		"$node_bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
	fi
	local pattern="-j (KUBE-|CNI-|DOCKER)|-[io] (docker0|$CNI_BRIDGE)( |$)|-s ${POD_CIDR//./\\.}"
	for cmd in iptables ip6tables; do
		command -v "$cmd" >/dev/null || continue
		for table in filter nat mangle raw; do
			"$cmd" -t "$table" -S >/dev/null 2>&1 || continue
			while read -r rule; do
				found+=("$cmd -t $table $rule")
				eval "$cmd -t $table ${rule/#-A/-D}" 2>/dev/null || true
			done < <("$cmd" -t "$table" -S | grep -E -- '^-A ' | grep -E -- "$pattern" || true)
			for chain in $("$cmd" -t "$table" -S | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-|DOCKER)/ { print $2 }'); do
				found+=("$cmd -t $table chain $chain")
				"$cmd" -t "$table" -F "$chain" 2>/dev/null || true
			done
			for chain in $("$cmd" -t "$table" -S | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-|DOCKER)/ { print $2 }'); do
				"$cmd" -t "$table" -X "$chain" 2>/dev/null || true
			done
		done
	done
	rm -f /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null || true
	rm -rf "$dir/cni"
	if [[ -f $dir/host-before.txt ]]; then
		for m in "${HOST_DIRS[@]}"; do
			[[ -e $m ]] || continue
			sed -n '/^## directories/,/^## /p' "$dir/host-before.txt" | grep -x "$m" >/dev/null && continue
			found+=("$m")
			rm -rf "$m"
		done
		for m in $(node_cgroups); do
			sed -n '/^## cgroups/,/^## /p' "$dir/host-before.txt" | grep -x "$m" >/dev/null && continue
			found+=("cgroup $m")
			find "$m" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		done
	fi
	if [[ -f $dir/sysctl.before ]]; then
		local key value
		while read -r key value; do
			[[ $value == - || $(sysctl -n "$key" 2>/dev/null) == "$value" ]] && continue
			sysctl -qw "$key=$value" 2>/dev/null || true
		done <"$dir/sysctl.before"
	fi
	if [[ -f $dir/host-before.txt ]]; then
		# Docker turns the FORWARD policy to DROP when it turns forwarding on.
		if ! sed -n '/^## iptables-save/,/^## /p' "$dir/host-before.txt" | grep '^:FORWARD DROP' >/dev/null; then
			iptables -S FORWARD 2>/dev/null | grep -- '^-P FORWARD DROP' >/dev/null && iptables -P FORWARD ACCEPT
		fi
		# The tables (iptables-nft's too) that did not exist before the node: all of the node.
		if command -v nft >/dev/null; then
			local t
			while read -r t; do
				sed -n '/^## nft/,/^## /p' "$dir/host-before.txt" | grep -x "$t {" >/dev/null && continue
				found+=("nft $t")
				# shellcheck disable=SC2086 # "table FAMILY NAME", three words
				nft delete $t 2>/dev/null || true
			done < <(nft list tables 2>/dev/null)
		fi
	fi
	if [[ $quiet == quiet && ${#found[@]} -gt 0 ]]; then
		log_warn "removed what an earlier node left behind: ${found[*]:0:10}"
	fi
}

do_stop() {
	local owner
	owner=$(lock_owner) || owner=""
	if [[ -n $owner && $owner != "$dir" ]] && ! flock -n "$LOCK" true; then
		# Another directory's node holds the machine: only what this directory started is ours.
		log_warn "the node running on this machine is in $owner, not $dir: stopping only what $dir recorded"
		local name
		for name in kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd dockerd registry; do
			daemon_stop "$dir" "$name"
		done
		return 0
	fi
	local t=$SECONDS
	drain
	local name
	for name in kube-proxy kubelet kube-scheduler kube-controller-manager; do
		daemon_stop "$dir" "$name"
	done
	# Containers the kubelet did not stop: kill them through containerd while it still runs.
	if daemon_pid "$dir" containerd >/dev/null; then
		local task
		for task in $(ctr_ tasks ls -q 2>/dev/null); do
			ctr_ tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
		done
	fi
	daemon_stop "$dir" containerd
	daemon_stop "$dir" kube-apiserver
	daemon_stop "$dir" etcd
	daemon_stop "$dir" dockerd 60
	daemon_stop "$dir" registry
	cleanup_host
	rm -f "$dir/started"
	if [[ -f $dir/host-before.txt ]]; then
		host_state >"$dir/host-after.txt"
		if ! diff -u "$dir/host-before.txt" "$dir/host-after.txt" >"$dir/host.diff"; then
			log_warn "the host differs from before start ($dir/host.diff):"
			head -n 40 "$dir/host.diff" >&2
		fi
	fi
	daemon_stop "$dir" lock-holder 5
	[[ $(lock_owner 2>/dev/null) != "$dir" ]] || : >"$LOCK"
	log_info "node stopped in $(fmt_duration $((SECONDS - t)))"
}

# ================================================================ restart

# restart: the node as after a power cut and a boot, its disk kept: every process of it killed at
# once (SIGKILL: the control plane, etcd, containerd, the kubelet, kube-proxy, every container and
# its shim), what a boot clears cleared (the containers' mounts, the pods' network namespaces),
# then all of it started again on DIR's state, until the kubelet reports the node Ready again.
# The kubelet then starts every pod's containers anew. Docker and the registry are the machine's,
# not the node's: they keep running. The bridge, kube-proxy's rules and the lo address stay (a
# boot would clear them and the node's parts would make them again).
do_restart() {
	[[ $(id -u) == 0 ]] || die "the node needs root"
	[[ -f $dir/started ]] || die "no node runs in $dir (start one: $0 start $dir)"
	local t=$SECONDS name pid p m since
	log_info "node $NODE_NAME: every process killed at once (a power cut), then started again"
	for name in kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do
		pid=$(daemon_pid "$dir" "$name") || continue
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	done
	# The containers (the processes in containerd's k8s.io cgroups) and this node's shims, until
	# none is left.
	containers() {
		for p in /proc/[0-9]*; do
			if [[ $(awk -F: '$2 == "pids" { print $3 }' "$p/cgroup" 2>/dev/null) == /k8s.io/* ]]; then
				echo "${p#/proc/}"
			elif [[ $(readlink "$p/exe" 2>/dev/null) == */containerd-shim-runc-v2 ]] &&
				tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -- "$dir/" >/dev/null; then
				echo "${p#/proc/}"
			fi
		done
	}
	for ((i = 0; i < 50; i++)); do
		pid=$(containers | sort -u | xargs)
		[[ -n $pid ]] || break
		# shellcheck disable=SC2086 # one PID a word
		kill -KILL $pid 2>/dev/null || true
		sleep 0.2
	done
	[[ -z $(containers) ]] || die "containers still run after SIGKILL: $(containers | xargs)"
	gone() { ! daemon_pid "$dir" "$1" >/dev/null; }
	for name in kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do
		wait_for 30 "$name to be gone" gone "$name" || die "$name survived SIGKILL"
	done
	for m in $(awk -v d="$dir/" 'index($5 "/", d) == 1 || $5 ~ /^\/(var\/)?run\/netns\/cni-/ { print $5 }' /proc/self/mountinfo | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	rm -f /run/netns/cni-* 2>/dev/null || true
	log_info "node $NODE_NAME down after $(fmt_duration $((SECONDS - t))); starting it again"
	since=$(date -u +%FT%TZ)
	sleep 1
	launch_node
	# The Node object still says Ready from before: wait for the kubelet's own word since.
	ready_since() {
		local status beat
		read -r status beat < <(k get node "$NODE_NAME" \
			-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}')
		[[ $status == True && $beat > $since ]]
	}
	await "node $NODE_NAME to report Ready again" ready_since
	log_info "node $NODE_NAME restarted in $(fmt_duration $((SECONDS - t)))"
}

# restart-apiserver: kube-apiserver alone stopped (SIGTERM, SIGKILL after 30 s) and started again
# with the same flags on the same etcd; everything else keeps running (the kubelet, the
# controllers and the pods reconnect by themselves). Waits for /readyz as start does.
do_restart_apiserver() {
	[[ $(id -u) == 0 ]] || die "the node needs root"
	[[ -f $dir/started ]] || die "no node runs in $dir (start one: $0 start $dir)"
	daemon_pid "$dir" etcd >/dev/null || die "etcd does not run in $dir"
	local t=$SECONDS
	daemon_stop "$dir" kube-apiserver
	launch_apiserver
	log_info "kube-apiserver of node $NODE_NAME restarted in $(fmt_duration $((SECONDS - t)))"
}

# ================================================================ env, load, status

do_env() {
	[[ -f $dir/kubeconfig ]] || die "no node in $dir (start one: $0 start $dir)"
	printf 'export KUBECONFIG=%q\n' "$dir/kubeconfig"
	printf 'export OPBUILDER_E2E_KUBECTL=%q\n' "$k8s_bin/kubectl"
	printf 'export PATH=%q:"$PATH"\n' "$dir/bin"
	printf 'export DOCKER_HOST=%q\n' "unix://$docker_sock"
	printf 'export DOCKER_CONFIG=%q\n' "$dir/docker-config"
	printf 'export DOCKER_BUILDKIT=1\n'
	printf 'export OPBUILDER_NODE_DIR=%q\n' "$dir"
	# ctr (on PATH above) reads these: the node's containerd and the kubelet's namespace.
	printf 'export CONTAINERD_ADDRESS=%q\n' "$containerd_sock"
	printf 'export CONTAINERD_NAMESPACE=k8s.io\n'
}

do_load() {
	local image=$1
	daemon_pid "$dir" containerd >/dev/null || die "no node runs in $dir"
	dk image inspect "$image" >/dev/null 2>&1 || die "no Docker image '$image' (build it first, e.g. make docker-build IMG=$image)"
	dk save "$image" | ctr_ images import --all-platforms - >/dev/null || die "importing $image into the node failed"
	log_info "loaded $image into node $NODE_NAME"
}

do_push() {
	daemon_pid "$dir" registry >/dev/null || die "no node runs in $dir"
	dk image inspect "$1" >/dev/null 2>&1 || die "no Docker image '$1' (build it first)"
	push_image "$1"
}

do_status() {
	local rc=0 name pid
	for name in registry dockerd containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
		if pid=$(daemon_pid "$dir" "$name"); then
			echo "$name: running (pid $pid)"
		else
			echo "$name: not running"
			rc=1
		fi
	done
	if ((rc == 0)) && node_ready 2>/dev/null; then
		echo "node $NODE_NAME: Ready"
	else
		echo "node $NODE_NAME: not Ready"
		rc=1
	fi
	return "$rc"
}

case "$action" in
start) do_start ;;
restart) do_restart ;;
restart-apiserver) do_restart_apiserver ;;
stop) do_stop ;;
env) do_env ;;
load) do_load "$3" ;;
push) do_push "$3" ;;
status) do_status ;;
esac
