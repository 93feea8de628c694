#!/usr/bin/env bash
# The helm plugin (helm.kubebuilder.io/v2-alpha) end to end, with helm v3 built from the Go module
# proxy (versions.toml [e2e] helm) and the offline control plane:
#
#   1. a project with one API; `opbuilder edit --plugins=helm/v2-alpha` (runs make build-installer);
#   2. `helm lint`; `helm template` renders the objects of `kubectl kustomize config/default`
#      (compared as objects by e2e/parity's compare -objects -helm: Helm's labels aside, and the
#      Namespace, which `helm install --create-namespace` makes);
#   3. `helm install` onto the live kube-apiserver; the CRD is established and served;
#   4. values.yaml edited by hand, `create webhook`, the edit again: the edits are kept (also the
#      `webhook: {enabled: false}` the first run wrote, with a warning), the webhook templates
#      appear; lint and template compare again (cert-manager and webhooks on, as in
#      config/default); `helm upgrade` with certManager.enabled=false and
#      webhook.enabled=false, because the control plane has no cert-manager (its CRDs would be
#      missing for the Certificate and Issuer) and no kubelet to run the webhook server.
#
# Usage: helm-chart.sh        Environment: OPBUILDER_BIN, OPBUILDER_E2E_CACHE.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
need_cmd go make kubectl
opbuilder=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $opbuilder ]] || die "opbuilder binary not found at $opbuilder (cargo build first)"
t_total=$SECONDS
passed=0
ok() {
	passed=$((passed + 1))
	log_info "ok: $*"
}

t=$SECONDS
helm=$("$here/go-tool.sh" helm)
log_info "helm $(pin e2e.helm) at $helm ($(fmt_duration $((SECONDS - t))))"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-helm.XXXXXX")
cp_dir="$work/cp"
compare="$work/compare"
cleanup() {
	local rc=$?
	"$here/control-plane.sh" stop "$cp_dir" || rc=1
	if ((rc == 0)); then
		rm -rf "$work"
	else
		log_error "helm e2e FAILED; files kept in $work"
		echo "helm: $passed passed, 1 failed"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

(cd "$OPBUILDER_ROOT/e2e/parity" && go build -o "$compare" .)

proj="$work/chartdemo"
ns=chartdemo-system
mkdir -p "$proj"
cd "$proj"
"$opbuilder" init --domain example.com --repo example.com/chartdemo >/dev/null
"$opbuilder" create api --group fleet --version v1 --kind Ship --resource --controller >/dev/null
"$opbuilder" edit --plugins=helm.kubebuilder.io/v2-alpha >"$work/edit1.log" 2>&1 || {
	cat "$work/edit1.log" >&2
	die "edit --plugins=helm.kubebuilder.io/v2-alpha failed"
}
for f in dist/chart/Chart.yaml dist/chart/values.yaml dist/chart/templates/_helpers.tpl \
	dist/chart/templates/manager/manager.yaml dist/chart/templates/crd/ships.fleet.example.com.yaml \
	.github/workflows/test-chart.yml; do
	[[ -f $f ]] || die "the helm plugin did not write $f"
done
grep -q '^helm-deploy:' Makefile || die "the Makefile lacks the helm-deploy target"
grep -q 'helm.kubebuilder.io/v2-alpha' PROJECT || die "PROJECT lacks the helm plugin's entry"
ok "edit --plugins=helm/v2-alpha wrote dist/chart, the workflow, the Makefile targets and PROJECT's entry"

# helm template as the kustomize output: the kustomize image tag (latest), no pull policy, and the
# admin/editor/viewer roles, which config/default installs and the chart leaves to rbac.helpers.
same_objects() { # what (extra --set flags...)
	local what=$1
	shift
	# config/default leaves the metrics certificate's DNS names as placeholders until its
	# replacements are uncommented; the chart fills in the metrics service (as Kubebuilder's does).
	kubectl kustomize config/default |
		sed "s/SERVICE_NAME\.SERVICE_NAMESPACE\./chartdemo-controller-manager-metrics-service.$ns./" >"$work/kustomize.yaml"
	"$helm" template chartdemo dist/chart --namespace "$ns" \
		--set manager.image.tag=latest --set manager.image.pullPolicy=null --set rbac.helpers.enabled=true \
		"$@" >"$work/helm.yaml"
	"$compare" -objects -helm "$work/kustomize.yaml" "$work/helm.yaml" ||
		die "$what: helm template does not render the objects of kubectl kustomize config/default"
	ok "$what: helm template renders the objects of kubectl kustomize config/default"
}

"$helm" lint dist/chart
ok "helm lint dist/chart"
same_objects "one API"

"$here/build-control-plane.sh" >/dev/null
kubectl="$(k8s_bin_dir)/kubectl"
"$here/control-plane.sh" start "$cp_dir"
eval "$("$here/control-plane.sh" env "$cp_dir")"
export KUBECONFIG
"$helm" install chartdemo dist/chart --namespace "$ns" --create-namespace --timeout 2m
"$kubectl" wait --for=condition=Established --timeout=60s crd/ships.fleet.example.com
"$kubectl" api-resources --api-group=fleet.example.com -o name | grep -qx 'ships.fleet.example.com' ||
	die "ships.fleet.example.com is not served after helm install"
"$kubectl" get ships.fleet.example.com -A >/dev/null
"$kubectl" -n "$ns" get deployment/chartdemo-controller-manager serviceaccount/chartdemo-controller-manager >/dev/null
"$kubectl" get clusterrole/chartdemo-manager-role clusterrolebinding/chartdemo-manager-rolebinding >/dev/null
ok "helm install onto the live kube-apiserver: the CRD is established and served, the manager's objects exist"

# A user's edits to values.yaml survive a new run after create webhook.
sed -i 's/^  replicas: 1$/  replicas: 2 # set by hand/' dist/chart/values.yaml
grep -q 'replicas: 2 # set by hand' dist/chart/values.yaml || die "could not edit values.yaml"
"$opbuilder" create webhook --group fleet --version v1 --kind Ship --defaulting --programmatic-validation >/dev/null
"$opbuilder" edit --plugins=helm/v2-alpha >"$work/edit2.log" 2>&1 || {
	cat "$work/edit2.log" >&2
	die "the second edit --plugins=helm/v2-alpha failed"
}
grep -q 'replicas: 2 # set by hand' dist/chart/values.yaml || die "the second run lost the edit to values.yaml"
grep -q '^webhook:' dist/chart/values.yaml || die "values.yaml lacks the webhook section"
grep -q 'keeps webhook.enabled: false' "$work/edit2.log" || die "the second run did not warn that values.yaml keeps webhook.enabled: false"
for f in dist/chart/templates/webhook/validating-webhook-configuration.yaml \
	dist/chart/templates/webhook/mutating-webhook-configuration.yaml dist/chart/templates/cert-manager/serving-cert.yaml; do
	[[ -f $f ]] || die "the second run did not write $f"
done
grep -q '^      - name: Install cert-manager via Helm' .github/workflows/test-chart.yml ||
	die "the workflow's cert-manager step was not enabled"
ok "after create webhook: values.yaml edits kept (with a warning about webhook.enabled), webhook templates written"

"$helm" lint dist/chart
ok "helm lint dist/chart (with webhooks)"
same_objects "with webhooks" --set manager.replicas=1 --set certManager.enabled=true --set webhook.enabled=true

"$helm" upgrade chartdemo dist/chart --namespace "$ns" --timeout 2m \
	--set certManager.enabled=false --set webhook.enabled=false
[[ $("$helm" status chartdemo --namespace "$ns" -o json | grep -o '"status":"[a-z-]*"' | head -1) == '"status":"deployed"' ]] ||
	die "the release is not deployed after helm upgrade"
[[ $("$kubectl" -n "$ns" get deployment/chartdemo-controller-manager -o jsonpath='{.spec.replicas}') == 2 ]] ||
	die "the Deployment does not have the 2 replicas set in values.yaml"
"$kubectl" get ships.fleet.example.com -A >/dev/null
ok "helm upgrade (cert-manager and webhooks off: not on this control plane) deployed; replicas from values.yaml"

"$here/control-plane.sh" stop "$cp_dir"
log_info "helm e2e passed in $(fmt_duration $((SECONDS - t_total)))"
echo "helm: $passed passed, 0 failed"
