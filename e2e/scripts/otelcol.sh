#!/usr/bin/env bash
# A real OpenTelemetry Collector for the telemetry tests: e2e/otelcol/main.go built against the
# collector's Go modules (versions.toml [e2e] otel_collector*, through the Go module proxy,
# cached by version like every tool of go-tool.sh), with the OTLP receiver and the file exporter.
#
# Usage: otelcol.sh path             print the collector's path (building it when missing)
#        otelcol.sh start DIR        run one in the background: OTLP over HTTP and over gRPC on
#                                    free ports of $OTELCOL_HOST (default 127.0.0.1); what it
#                                    receives is written to DIR/traces.jsonl (OTLP JSON, a line a
#                                    batch, flushed every 100 ms). DIR/endpoint then holds the
#                                    value for OTEL_EXPORTER_OTLP_ENDPOINT (http://HOST:PORT,
#                                    OTLP/HTTP), DIR/grpc-endpoint the gRPC one; its log is
#                                    DIR/otelcol.log. A third port takes OTLP/HTTP over mutual
#                                    TLS: DIR/tls-endpoint (https://HOST:PORT), its CA
#                                    DIR/tls/ca.crt, a client certificate signed by that CA
#                                    DIR/tls/client.crt and DIR/tls/client.key (openssl makes them).
#                                    Returns once every port accepts connections.
#        otelcol.sh stop DIR         stop it (SIGTERM, which flushes the file), wait for it to exit
#        otelcol.sh spans DIR        every span received so far, one JSON object a line:
#                                    {"service", "name" ("" when none), "kind", "traceId", "spanId", "parentSpanId",
#                                     "status", "attributes": {key: value}}
# Environment: OPBUILDER_E2E_CACHE (cache root), OTELCOL_HOST.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

collector() {
	"$OPBUILDER_ROOT/e2e/scripts/go-tool.sh" otelcol go.opentelemetry.io/collector/otelcol "$(pin e2e.otel_collector)" . \
		--main "$OPBUILDER_ROOT/e2e/otelcol" \
		--require "go.opentelemetry.io/collector/receiver/otlpreceiver@$(pin e2e.otel_collector)" \
		--require "go.opentelemetry.io/collector/service@$(pin e2e.otel_collector)" \
		--require "go.opentelemetry.io/collector/component@$(pin e2e.otel_collector_core)" \
		--require "go.opentelemetry.io/collector/confmap@$(pin e2e.otel_collector_core)" \
		--require "go.opentelemetry.io/collector/confmap/provider/fileprovider@$(pin e2e.otel_collector_core)" \
		--require "go.opentelemetry.io/collector/confmap/provider/envprovider@$(pin e2e.otel_collector_core)" \
		--require "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter@$(pin e2e.otel_collector_contrib)"
}

start() {
	local dir=$1 bin host=${OTELCOL_HOST:-127.0.0.1} http grpc tls pid
	bin=$(collector)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[[ ! -s $dir/pid ]] || ! kill -0 "$(cat "$dir/pid")" 2>/dev/null || die "otelcol.sh: a collector already runs for $dir (pid $(cat "$dir/pid")); stop it first"
	http=$(free_port)
	grpc=$(free_port)
	while [[ $grpc == "$http" ]]; do grpc=$(free_port); done
	tls=$(free_port)
	while [[ $tls == "$http" || $tls == "$grpc" ]]; do tls=$(free_port); done
	certificates "$dir/tls" "$host"
	: >"$dir/traces.jsonl"
	cat >"$dir/otelcol.yaml" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: $host:$http
      grpc:
        endpoint: $host:$grpc
  otlp/tls:
    protocols:
      http:
        endpoint: $host:$tls
        tls:
          cert_file: $dir/tls/server.crt
          key_file: $dir/tls/server.key
          client_ca_file: $dir/tls/ca.crt
exporters:
  file:
    path: $dir/traces.jsonl
    flush_interval: 100ms
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp, otlp/tls]
      exporters: [file]
EOF
	setsid "$bin" --config "file:$dir/otelcol.yaml" >"$dir/otelcol.log" 2>&1 </dev/null &
	pid=$!
	printf '%s\n' "$pid" >"$dir/pid"
	if ! WAIT_FOR_PID=$pid wait_for 60 "the collector's OTLP ports" bash -c "(exec 3<>/dev/tcp/$host/$http) 2>/dev/null && (exec 3<>/dev/tcp/$host/$grpc) 2>/dev/null && (exec 3<>/dev/tcp/$host/$tls) 2>/dev/null"; then
		cat "$dir/otelcol.log" >&2
		stop "$dir"
		die "otelcol.sh: the collector did not listen on $host:$http, $host:$grpc and $host:$tls (log above)"
	fi
	kill -0 "$pid" 2>/dev/null || die "otelcol.sh: the collector exited: $(cat "$dir/otelcol.log")"
	printf 'http://%s:%s\n' "$host" "$http" >"$dir/endpoint"
	printf 'http://%s:%s\n' "$host" "$grpc" >"$dir/grpc-endpoint"
	printf 'https://%s:%s\n' "$host" "$tls" >"$dir/tls-endpoint"
	log_info "OpenTelemetry Collector $(pin e2e.otel_collector) on $(cat "$dir/endpoint") (OTLP/HTTP), $(cat "$dir/grpc-endpoint") (gRPC) and $(cat "$dir/tls-endpoint") (OTLP/HTTP, mutual TLS), writing $dir/traces.jsonl"
}

# certificates DIR HOST: a CA, the collector's certificate for HOST (an address or a name) and a client
# certificate, each signed by the CA, in DIR (ca.crt, server.crt/.key, client.crt/.key): lib.sh's pki_ca
# and pki_sign.
certificates() {
	local dir=$1 san=DNS:$2
	need_cmd openssl
	[[ ! $2 =~ ^[0-9.]+$ ]] || san=IP:$2
	mkdir -p "$dir"
	(
		cd "$dir"
		pki_ca otelcol-test-ca
		pki_sign server /CN=otelcol-test-server "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=$san\n"
		pki_sign client /CN=otelcol-test-client "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\nsubjectAltName=$san\n"
	)
	[[ -s $dir/server.crt && -s $dir/client.crt ]] || die "otelcol.sh: openssl did not make the TLS certificates in $dir"
}
stop() {
	local dir=$1 pid
	[[ -s $dir/pid ]] || return 0
	pid=$(cat "$dir/pid")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/pid"
}

# spans DIR: the complete lines only (counted first): the collector may be writing the last one.
spans() {
	local file=$1/traces.jsonl
	[[ -f $file ]] || die "otelcol.sh: no $file: start a collector with 'otelcol.sh start $1' first"
	jq -c '
		def value: if has("stringValue") then .stringValue
			elif has("intValue") then (.intValue | tonumber)
			elif has("boolValue") then .boolValue
			elif has("doubleValue") then .doubleValue
			else tostring end;
		.resourceSpans[]? as $rs
		| ([$rs.resource.attributes[]? | select(.key == "service.name") | .value.stringValue] | first) as $service
		| $rs.scopeSpans[]?.spans[]?
		| {service: $service, name: (.name // ""), kind, traceId, spanId, parentSpanId: (.parentSpanId // ""),
		   status: (.status // {}), attributes: ([.attributes[]? | {key: .key, value: (.value | value)}] | from_entries)}
	' < <(head -n "$(wc -l <"$file")" "$file")
}

case "${1:-}" in
path) collector ;;
start) start "${2:?usage: otelcol.sh start DIR}" ;;
stop) stop "${2:?usage: otelcol.sh stop DIR}" ;;
spans) spans "${2:?usage: otelcol.sh spans DIR}" ;;
*) die "usage: otelcol.sh path | start DIR | stop DIR | spans DIR (got '${1:-}')" ;;
esac
