#!/usr/bin/env bash
# A throwaway Kubernetes control plane (etcd + kube-apiserver) for e2e tests,
# listening on 127.0.0.1 only, with no network access needed.
#
# Usage:
#   control-plane.sh start  DIR   start etcd + kube-apiserver, state kept in DIR
#   control-plane.sh stop   DIR   stop them (by recorded PID); safe to repeat
#   control-plane.sh env    DIR   print `export` lines (KUBECONFIG, ...) for eval
#   control-plane.sh status DIR   exit 0 when both processes are running
#   control-plane.sh restart-apiserver DIR   stop kube-apiserver and start it again on the same
#                                 port (etcd and its data untouched); waits for /readyz
#
# DIR receives: kubeconfig (admin user, client certificate in group
# system:masters, RBAC authorization), pki/, etcd-data/, etcd.log,
# kube-apiserver.log, *.pid, ports. Binaries come from build-control-plane.sh
# ($E2E_CACHE/k8s/<kubernetes>-<os>-<arch>, override: OPBUILDER_E2E_BIN_DIR).
#
# OPBUILDER_APISERVER_TRACING=HOST:PORT (start, restart-apiserver): kube-apiserver traces its
# requests to the OTLP gRPC receiver at HOST:PORT, all of them sampled.
#
# `start` waits (bounded, OPBUILDER_E2E_START_TIMEOUT seconds, default 120)
# until /readyz is ok and namespace "default" exists. On failure it prints the
# tail of both logs, stops whatever it started and exits 1.
#
# There is no controller manager, scheduler or kubelet: CRDs, custom
# resources, RBAC, server-side apply and admission work; pods never run,
# namespaces stay Terminating when deleted, ownerReferences do not cascade.
#
# Always stop the plane, even when a test fails -- install the trap BEFORE
# starting, because a half-started plane must be stopped too:
#
#   cp_dir=$(mktemp -d)
#   trap 'e2e/scripts/control-plane.sh stop "$cp_dir"; rm -rf "$cp_dir"' EXIT
#   trap 'exit 130' INT
#   trap 'exit 143' TERM
#   e2e/scripts/control-plane.sh start "$cp_dir"
#   eval "$(e2e/scripts/control-plane.sh env "$cp_dir")"
#   "$OPBUILDER_E2E_KUBECTL" get ns
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=daemons.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

[[ $# -eq 2 ]] || usage
action=$1
[[ -n $2 ]] || usage
daemon_state_dir "$action" "$2"

start_timeout=${OPBUILDER_E2E_START_TIMEOUT:-120}
stop_timeout=${OPBUILDER_E2E_STOP_TIMEOUT:-30}
bin_dir=${OPBUILDER_E2E_BIN_DIR:-$(k8s_bin_dir)}
pki="$dir/pki"

# ---------------------------------------------------------------- processes

pid_of() { daemon_pid "$dir" "$1"; }
stop_one() { daemon_stop "$dir" "$1" "$stop_timeout"; }

do_stop() {
	# apiserver first, so it does not log a storm of etcd connection errors.
	stop_one kube-apiserver
	stop_one etcd
}

# launch NAME ARGS...: $bin_dir/NAME in the background (daemons.sh), output in DIR/NAME.log.
launch() {
	local name=$1
	shift
	daemon_launch "$dir" "$name" "$bin_dir/$name" "$@"
}

# ---------------------------------------------------------------- ports

port_in_use() {
	# A successful connect means something already listens there.
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_port [EXCLUDED...]: a currently unused port below the Linux ephemeral
# range (so outgoing connections cannot grab it in between).
free_port() {
	local port tries=0 ex taken
	while ((tries++ < 200)); do
		port=$((20000 + RANDOM % 12000))
		taken=0
		for ex in "$@"; do [[ $ex == "$port" ]] && taken=1; done
		((taken)) && continue
		port_in_use "$port" && continue
		printf '%s\n' "$port"
		return 0
	done
	die "could not find a free port on 127.0.0.1"
}

# ---------------------------------------------------------------- pki

gen_pki() {
	need_cmd openssl
	mkdir -p "$pki"
	chmod 700 "$pki"
	if [[ -f "$pki/ca.crt" && -f "$pki/admin.crt" && -f "$pki/apiserver.crt" && -f "$pki/sa.pub" ]]; then
		return 0
	fi
	log_info "generating certificates in $pki"
	(
		cd "$pki"
		umask 077
		pki_ca opbuilder-e2e-ca
		pki_sign apiserver "/CN=kube-apiserver" \
			"basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
		# Group system:masters is bound to cluster-admin by RBAC bootstrap.
		pki_sign admin "/O=system:masters/CN=opbuilder-admin" \
			"basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n"
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	) || die "certificate generation failed (openssl)"
}

write_kubeconfig() {
	local port=$1 tmp
	tmp=$(mktemp "$dir/.kubeconfig.XXXXXX")
	cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: opbuilder-e2e
  cluster:
    server: https://127.0.0.1:${port}
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: opbuilder-admin
  user:
    client-certificate-data: $(base64 -w0 <"$pki/admin.crt")
    client-key-data: $(base64 -w0 <"$pki/admin.key")
contexts:
- name: opbuilder-e2e
  context:
    cluster: opbuilder-e2e
    user: opbuilder-admin
    namespace: default
current-context: opbuilder-e2e
EOF
	chmod 600 "$tmp"
	mv -f "$tmp" "$dir/kubeconfig"
}

# ---------------------------------------------------------------- probes

etcd_healthy() {
	curl -fsS --max-time 3 "http://127.0.0.1:$1/health" | grep -q '"health":"true"'
}

api_get() {
	curl -fsS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
		"https://127.0.0.1:$1$2"
}
apiserver_ready() { api_get "$1" /readyz | grep -qx ok; }
default_ns_exists() { api_get "$1" /api/v1/namespaces/default >/dev/null; }

dump_logs() {
	local f
	for f in "$dir/etcd.log" "$dir/kube-apiserver.log"; do
		[[ -f $f ]] || continue
		printf '\n----- last 40 lines of %s -----\n' "$f" >&2
		tail -n 40 "$f" >&2
	done
	printf -- '----- end of logs -----\n' >&2
}

# bind_failed NAME: did NAME's last start die because its port was taken?
bind_failed() {
	tail -n 20 "$dir/$1.log" 2>/dev/null | grep -qi 'address already in use'
}

# ---------------------------------------------------------------- start

start_ok=0
on_start_exit() {
	if ((start_ok == 0)); then
		log_error "control plane failed to start in $dir"
		dump_logs
		do_stop
	fi
}

start_etcd() {
	local attempt
	for attempt in 1 2 3; do
		etcd_port=$(free_port)
		etcd_peer_port=$(free_port "$etcd_port")
		log_info "starting etcd on 127.0.0.1:$etcd_port (peer $etcd_peer_port)"
		launch etcd \
			--name=opbuilder-e2e \
			--data-dir="$dir/etcd-data" \
			--listen-client-urls="http://127.0.0.1:$etcd_port" \
			--advertise-client-urls="http://127.0.0.1:$etcd_port" \
			--listen-peer-urls="http://127.0.0.1:$etcd_peer_port" \
			--initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
			--initial-cluster="opbuilder-e2e=http://127.0.0.1:$etcd_peer_port" \
			--unsafe-no-fsync=true \
			--log-level=warn
		if WAIT_FOR_PID=$(daemon_recorded "$dir" etcd) wait_for "$start_timeout" "etcd /health on port $etcd_port" \
			etcd_healthy "$etcd_port"; then
			return 0
		fi
		if ! pid_of etcd >/dev/null && bind_failed etcd && ((attempt < 3)); then
			log_warn "etcd port was taken, retrying with other ports"
			continue
		fi
		return 1
	done
}

start_apiserver() {
	local attempt
	for attempt in 1 2 3; do
		api_port=$(free_port "$etcd_port" "$etcd_peer_port")
		log_info "starting kube-apiserver on https://127.0.0.1:$api_port"
		write_kubeconfig "$api_port"
		if launch_apiserver; then
			return 0
		fi
		if ! pid_of kube-apiserver >/dev/null && bind_failed kube-apiserver && ((attempt < 3)); then
			log_warn "kube-apiserver port was taken, retrying with another port"
			continue
		fi
		return 1
	done
}

# launch_apiserver: kube-apiserver on $api_port against etcd on $etcd_port; waits for /readyz.
# With OPBUILDER_APISERVER_TRACING=HOST:PORT it traces every request to the OTLP gRPC receiver
# there (a TracingConfiguration sampling all), and so sends a traceparent to the webhooks.
launch_apiserver() {
	local tracing=()
	if [[ -n ${OPBUILDER_APISERVER_TRACING:-} ]]; then
		printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: 1000000\n' \
			"$OPBUILDER_APISERVER_TRACING" >"$dir/tracing.yaml"
		tracing=(--tracing-config-file="$dir/tracing.yaml")
	fi
	launch kube-apiserver "${tracing[@]}" \
		--etcd-servers="http://127.0.0.1:$etcd_port" \
		--bind-address=127.0.0.1 \
		--advertise-address=127.0.0.1 \
		--secure-port="$api_port" \
		--cert-dir="$pki/serving" \
		--tls-cert-file="$pki/apiserver.crt" \
		--tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" \
		--authorization-mode=RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$pki/sa.pub" \
		--service-account-signing-key-file="$pki/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 \
		--endpoint-reconciler-type=none \
		--disable-admission-plugins=ServiceAccount \
		--allow-privileged=true \
		--profiling=false
	WAIT_FOR_PID=$(daemon_recorded "$dir" kube-apiserver) wait_for "$start_timeout" \
		"kube-apiserver /readyz on port $api_port" apiserver_ready "$api_port"
}

do_start() {
	local b
	for b in etcd kube-apiserver; do
		[[ -x "$bin_dir/$b" ]] || die "$bin_dir/$b missing: run e2e/scripts/build-control-plane.sh first"
	done
	need_cmd curl setsid base64 ps
	if pid_of etcd >/dev/null || pid_of kube-apiserver >/dev/null; then
		die "a control plane is already running in $dir; run '$0 stop $dir' first"
	fi
	trap on_start_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local t0=$SECONDS
	gen_pki
	start_etcd
	start_apiserver
	WAIT_FOR_PID=$(daemon_recorded "$dir" kube-apiserver) wait_for "$start_timeout" \
		"namespace default to exist" default_ns_exists "$api_port"
	printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\n' \
		"$etcd_port" "$etcd_peer_port" "$api_port" >"$dir/ports"
	start_ok=1
	log_info "control plane ready in $(fmt_duration $((SECONDS - t0))): https://127.0.0.1:$api_port, KUBECONFIG=$dir/kubeconfig"
}

# restart-apiserver: kube-apiserver stopped (SIGTERM) and started again on its port, with the same
# flags and etcd; waits for /readyz as start does. etcd keeps running.
do_restart_apiserver() {
	[[ -f "$dir/ports" ]] || die "no ports file in $dir (not started?)"
	pid_of etcd >/dev/null || die "etcd is not running in $dir"
	# shellcheck disable=SC1091 # written by do_start
	source "$dir/ports"
	etcd_port=$ETCD_PORT api_port=$APISERVER_PORT
	stop_one kube-apiserver
	log_info "starting kube-apiserver again on https://127.0.0.1:$api_port"
	launch_apiserver || {
		dump_logs
		die "kube-apiserver did not come back on port $api_port"
	}
}

do_env() {
	[[ -f "$dir/kubeconfig" ]] || die "no kubeconfig in $dir (not started?)"
	printf 'export KUBECONFIG=%q\n' "$dir/kubeconfig"
	printf 'export OPBUILDER_E2E_KUBECTL=%q\n' "$bin_dir/kubectl"
	# envtest (controller-runtime) finds etcd/kube-apiserver/kubectl here.
	printf 'export KUBEBUILDER_ASSETS=%q\n' "$bin_dir"
}

do_status() {
	local ok=0 name pid
	for name in etcd kube-apiserver; do
		if pid=$(pid_of "$name"); then
			echo "$name: running (pid $pid)"
		else
			echo "$name: not running"
			ok=1
		fi
	done
	return "$ok"
}

case "$action" in
start) do_start ;;
stop) do_stop ;;
restart-apiserver) do_restart_apiserver ;;
env) do_env ;;
status) do_status ;;
*) usage ;;
esac
