#!/usr/bin/env bash
# Smoke test of the offline control plane: build (or reuse) the binaries,
# start etcd + kube-apiserver, talk to it with kubectl, round-trip a CRD and a
# custom resource, stop. Exits non-zero on the first failed check; the plane is
# always stopped (EXIT trap). On failure the state directory (logs) is kept and
# its path printed.
#
# Usage: smoke-control-plane.sh
# Environment: OPBUILDER_E2E_CACHE, OPBUILDER_E2E_START_TIMEOUT (seconds).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
passed=0

t_total=$SECONDS
"$here/build-control-plane.sh" >/dev/null
bin_dir=$(k8s_bin_dir)
kubectl="$bin_dir/kubectl"
k8s_version=$(pin e2e.kubernetes)

cp_dir=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-smoke.XXXXXX")
cleanup() {
	local rc=$?
	"$here/control-plane.sh" stop "$cp_dir" || rc=1
	if ((rc == 0)); then
		rm -rf "$cp_dir"
	else
		log_error "smoke test FAILED; control-plane state and logs kept in $cp_dir"
		echo "smoke: $passed passed, 1 failed"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ok() {
	passed=$((passed + 1))
	log_info "ok: $*"
}

"$here/control-plane.sh" start "$cp_dir"
eval "$("$here/control-plane.sh" env "$cp_dir")"
ok "control plane started"

# Every kubectl call gets a request timeout so a wedged server cannot hang us.
k() { "$kubectl" --request-timeout=30s "$@"; }

wait_for 60 "namespace default (kubectl get ns default)" k get ns default
k get ns
ok "kubectl get ns lists namespace default"

# The kubeconfig must also work with whatever `kubectl` the host has (on the
# project machines: Google's dispatcher, which runs its built-in 1.32 client
# against a 1.36 server).
if host_kubectl=$(command -v kubectl) && [[ $host_kubectl != "$kubectl" ]]; then
	"$host_kubectl" --request-timeout=30s get ns default >/dev/null ||
		die "host kubectl ($host_kubectl) cannot use $KUBECONFIG"
	ok "host kubectl ($host_kubectl) can use the kubeconfig"
fi

server_version=$(k version -o json | awk -F'"' '/"serverVersion"/ { s = 1 } s && $2 == "gitVersion" { print $4; exit }')
[[ $server_version == "v$k8s_version" ]] || die "server reports '$server_version', expected v$k8s_version"
ok "server version is $server_version"

[[ $(k auth can-i create customresourcedefinitions.apiextensions.k8s.io --all-namespaces) == yes ]] ||
	die "admin user may not create CRDs (RBAC)"
ok "admin user is authorized through RBAC"

k apply -f - <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.smoke.opbuilder.dev
spec:
  group: smoke.opbuilder.dev
  scope: Namespaced
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  versions:
    - name: v1alpha1
      served: true
      storage: true
      subresources:
        status: {}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size:
                  type: integer
                  minimum: 1
                color:
                  type: string
EOF
k wait --for=condition=Established --timeout=60s crd/widgets.smoke.opbuilder.dev
ok "CRD widgets.smoke.opbuilder.dev established"

widget='apiVersion: smoke.opbuilder.dev/v1alpha1
kind: Widget
metadata:
  name: sample
  namespace: default
spec:
  size: 3
  color: blue'
apply_widget() { printf '%s\n' "$widget" | k apply -f -; }
# Discovery of a brand-new group can lag the Established condition briefly.
wait_for 60 "the Widget custom resource to be accepted" apply_widget
ok "custom resource created"

got=$(k get widget sample -n default -o jsonpath='{.spec.size}/{.spec.color}')
[[ $got == "3/blue" ]] || die "read back spec '$got', expected '3/blue'"
ok "custom resource read back (spec $got)"

if printf '%s\n' "${widget/size: 3/size: 0}" | sed 's/name: sample/name: invalid/' | k apply -f - 2>/dev/null; then
	die "a Widget with size 0 was accepted; CRD schema validation is not working"
fi
ok "schema validation rejects an invalid custom resource"

k delete widget sample -n default --wait=true --timeout=60s
if k get widget sample -n default >/dev/null 2>&1; then
	die "Widget sample still exists after delete"
fi
ok "custom resource deleted"

"$here/control-plane.sh" stop "$cp_dir"
if "$here/control-plane.sh" status "$cp_dir" >/dev/null; then
	die "control plane still running after stop"
fi
"$here/control-plane.sh" stop "$cp_dir" # second stop must be a no-op
ok "control plane stopped (twice)"

log_info "smoke test passed in $(fmt_duration $((SECONDS - t_total)))"
echo "smoke: $passed passed, 0 failed"
