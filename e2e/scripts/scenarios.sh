#!/usr/bin/env bash
# End-to-end scenarios: scaffold a project with the opbuilder binary, build it
# with its own Makefile and exercise it against a throwaway control plane
# (control-plane.sh: loopback etcd + kube-apiserver, no kubelet).
#
# Usage: scenarios.sh [--list] [NAME...]     (no NAME: every scenario, in order)
#
#   mycronjob  init + `create api` MyCronJob (the user story of seed 001) with
#              the types, controller and sample of docs/tutorial.md (read with
#              `tutorial.sh --file`); `make manifests install build`; bin/manager
#              runs against the plane; the sample is applied; passes once two
#              Jobs controlled by it exist; then the manager is stopped and
#              `make uninstall` removes the CRD.
#   foo        the sample-controller of seeds 003/004 with typed clients: init, `create api`
#              Foo, the seed's types, `edit --plugins=typed-clients/v1-alpha`, `make generate
#              manifests verify-client`; cmd/foo-controller (e2e/fixtures/foo), built on the
#              generated clientset, informer and lister with a workqueue, runs next to the
#              scaffolded bin/manager; a Foo gets its Deployment; the test plays the absent
#              Deployment controller (sets the Deployment's status), and the Foo's
#              status.availableReplicas follows through the generated clientset; scaling the
#              Foo scales the Deployment.
#   webhooks   init + `create api` + `create webhook` App with seed 000's rules; `make test`
#              runs them on envtest. First, a copy without config/network-policy/ and
#              test/e2e/ (an earlier release's layout) gets the same `create webhook`: the
#              two parts are left out and said, the rest passes `make build` and kustomize.
#              Then a v1 App converted through the hub, and the three webhooks called by the
#              API server while the manager runs under `make run`; stopped, then killed.
#   deploy     init + one `create api`; `make deploy IMG=example.com/app:v0.0.1`;
#              checks namespace, service account, RBAC, CRD, Deployment image and
#              metrics Service with kubectl. Pods never run (no kubelet), and
#              there is no undeploy (namespace deletion needs a controller manager).
#   ssa        init + `create api --ssa` Ship; a controller (e2e/fixtures/ssa) that
#              applies the Ship's status with the apply configuration `make
#              manifests` generated; bin/manager runs against the plane; passes
#              once the sample's Available condition is set and managedFields
#              show the controller's Apply on the status subresource.
#   deployimage  init + `create api --plugins=deploy-image/v1-alpha` Memcached with
#              image, command, port and user; `make install build`; bin/manager
#              runs with the image of config/manager/manager.yaml; the sample makes
#              it create the Deployment (checked field by field) and report
#              Available; a new size reaches the Deployment; deleting the sample
#              runs the finalizer (its event is recorded) and the object goes.
#   telemetry  init --plugins=go/v4,telemetry/v1-alpha, `create api` and `create webhook`
#              (defaulting, validation) Beacon, whose controller writes the status; make run
#              exports to a real OpenTelemetry Collector (otelcol.sh) while a Beacon is created:
#              the collector has the reconcile span (object, result), an API-call span under
#              it and the two webhook spans; the trace id is on a manager log line and is an
#              exemplar of /metrics/openmetrics; /debug/loglevel refuses a caller without a token
#              and one without the ClusterRole loglevel-editor, and reads and changes the level
#              for one bound to it.
#
# Each scenario runs in a subshell of its own, in a fresh directory
# $TMPDIR/opbuilder-scenario-NAME.XXXXXX with its own control plane, under an
# EXIT trap that stops the manager and the plane by PID. Every step is bounded
# (timeout). The directory is removed when the scenario passes and kept (path
# printed, with the tail of its log) when it fails.
# The last line is "scenarios: N passed, M failed"; exit status 1 if any failed.
#
# Environment:
#   OPBUILDER_BIN          opbuilder binary (default $OPBUILDER_TARGET_DIR/debug/opbuilder)
#   SCENARIO_KUBECTL       kubectl for the checks and make's KUBECTL (default: the
#                          1.36 kubectl that build-control-plane.sh built)
#   SCENARIO_STEP_TIMEOUT  seconds one opbuilder/make step may take (default 1200;
#                          a cold Go cache downloads and compiles a lot)
#   SCENARIO_JOBS_TIMEOUT  seconds to wait for the MyCronJob's Jobs (default 90)
#   SCENARIO_KEEP=1        keep the directory of passing scenarios too
#   OPBUILDER_E2E_CACHE, OPBUILDER_E2E_START_TIMEOUT  see control-plane.sh
#
# Adding a scenario: write a function scenario_<name> and append <name> to
# SCENARIOS below. It runs with `set -euo pipefail` in $SC_DIR and can use the
# helpers in the "scenario helpers" section: step, start_plane, start_manager,
# stop_manager, k (kubectl), expect_eq, pass.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Scenario names, in the order they run by default. Each has a scenario_<name>.
SCENARIOS=(mycronjob deploy webhooks ssa deployimage foo telemetry)

OPBUILDER_BIN=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
STEP_TIMEOUT=${SCENARIO_STEP_TIMEOUT:-1200}
JOBS_TIMEOUT=${SCENARIO_JOBS_TIMEOUT:-90}
FIXTURES="$OPBUILDER_ROOT/e2e/fixtures"

# ================================================================ scenarios

# The user story: a MyCronJob that creates a Job from its template every 5 s.
scenario_mycronjob() {
	local proj="$SC_DIR/project"
	mkdir -p "$proj"
	cd "$proj"
	step "$STEP_TIMEOUT" "opbuilder init" \
		"$OPBUILDER_BIN" init --domain wzj.kubebuilder.io --repo wzj.kubebuilder.io/project --project-name project
	step "$STEP_TIMEOUT" "opbuilder create api MyCronJob" \
		"$OPBUILDER_BIN" create api --group batch --version v1 --kind MyCronJob --resource --controller

	# The code of docs/tutorial.md (the tutorial stage runs the whole page; this scenario
	# builds the same code with `make build` and runs bin/manager).
	local f
	for f in api/v1/mycronjob_types.go internal/controller/mycronjob_controller.go \
		internal/controller/mycronjob_controller_test.go config/samples/batch_v1_mycronjob.yaml; do
		"$here/tutorial.sh" --file "$f" >"$f" || fail "no block for $f in docs/tutorial.md"
	done
	step "$STEP_TIMEOUT" "go get github.com/robfig/cron/v3" go get github.com/robfig/cron/v3@v3.0.1
	# `make build` runs `go fmt`, which would silently rewrite unformatted code.
	expect_eq "the tutorial's code is gofmt-clean" "$(gofmt -l api internal)" ""
	pass "tutorial code copied"

	start_plane
	# The CRD embeds a whole PodSpec (~320 KB as JSON): more than client-side apply can store
	# in its last-applied annotation. The scaffolded Makefile applies server-side, so plain
	# `make install` must work.
	step "$STEP_TIMEOUT" "make manifests install" make manifests install KUBECTL="$SC_KUBECTL"
	local crd=mycronjobs.batch.wzj.kubebuilder.io
	expect_crd_established "$crd"
	step "$STEP_TIMEOUT" "make build" make build
	[[ -x bin/manager ]] || fail "make build did not produce bin/manager"

	start_manager "$proj"
	step 60 "kubectl apply -k config/samples/" "$SC_KUBECTL" apply -k config/samples/
	local uid
	uid=$(k get mycronjob mycronjob-sample -o 'jsonpath={.metadata.uid}') || fail "cannot read mycronjob-sample"
	[[ -n $uid ]] || fail "mycronjob-sample has no uid"
	expect_eq "spec.schedule" "$(k get mycronjob mycronjob-sample -o 'jsonpath={.spec.schedule}')" "@every 5s"

	local t0=$SECONDS
	WAIT_FOR_PID=$MANAGER_PID wait_for "$JOBS_TIMEOUT" "2 Jobs controlled by mycronjob-sample" \
		owned_jobs_at_least 2 "$uid" || {
		k get jobs -o wide >>"$SC_LOG" 2>&1 || true
		fail "fewer than 2 Jobs controlled by mycronjob-sample after ${JOBS_TIMEOUT}s (manager log: $SC_DIR/manager.log)"
	}
	local job_names last
	job_names=$(owned_jobs "$uid" | tr '\n' ' ') || fail "cannot list Jobs"
	pass "Jobs controlled by mycronjob-sample after $((SECONDS - t0))s: $job_names"
	# The Jobs never finish here (no kubelet), so every one of them is active.
	last=$(k get mycronjob mycronjob-sample -o 'jsonpath={.status.active[-1:].name}') || fail "cannot read mycronjob-sample"
	[[ -n $last && " $job_names" == *" $last "* ]] ||
		fail "the last of status.active, '$last', is not one of the owned Jobs ($job_names)"
	pass "status.active ends with $last"
	[[ -n $(k get mycronjob mycronjob-sample -o 'jsonpath={.status.lastScheduleTime}') ]] ||
		fail "status.lastScheduleTime is not set"
	expect_eq "Job template copied into $last" \
		"$(k get job "$last" -o 'jsonpath={.spec.template.spec.containers[0].image}')" busybox:1.37

	stop_manager
	# ignore-not-found: the CR may already be gone; the timeout guards against a
	# delete that waits forever.
	step 180 "make uninstall" make uninstall ignore-not-found=true KUBECTL="$SC_KUBECTL"
	wait_for 60 "CRD $crd to be gone" crd_absent "$crd" || fail "CRD $crd still exists after make uninstall"
	pass "CRD removed"
}

# Server-side apply: the apply configurations generated for a `create api --ssa` type, used by a
# controller through controller-runtime's client.
scenario_ssa() {
	local proj="$SC_DIR/fleet"
	mkdir -p "$proj"
	cd "$proj"
	step "$STEP_TIMEOUT" "opbuilder init" \
		"$OPBUILDER_BIN" init --domain example.com --repo example.com/fleet --project-name fleet --owner "The Fleet Authors"
	step "$STEP_TIMEOUT" "opbuilder create api Ship --ssa" \
		"$OPBUILDER_BIN" create api --group fleet --version v1 --kind Ship --resource --controller --ssa
	step "$STEP_TIMEOUT" "make manifests" make manifests
	local ac=api/v1/applyconfiguration/api/v1
	[[ -f $ac/ship.go && -f $ac/shipstatus.go ]] || fail "make manifests generated no apply configurations in $ac"
	pass "apply configurations generated: $(cd "$ac" && ls | xargs)"

	cp -R "$FIXTURES/ssa/." .
	expect_eq "fixtures are gofmt-clean" "$(gofmt -l internal)" ""
	step "$STEP_TIMEOUT" "go mod tidy" go mod tidy

	start_plane
	step "$STEP_TIMEOUT" "make install" make install KUBECTL="$SC_KUBECTL"
	expect_crd_established ships.fleet.example.com
	step "$STEP_TIMEOUT" "make build" make build
	start_manager "$proj"
	step 60 "kubectl apply -k config/samples/" "$SC_KUBECTL" apply -k config/samples/
	WAIT_FOR_PID=$MANAGER_PID wait_for 90 "ship-sample to be Available" ship_available || {
		k get ship ship-sample -o yaml >>"$SC_LOG" 2>&1 || true
		fail "ship-sample has no Available=True condition (manager log: $SC_DIR/manager.log)"
	}
	pass "ship-sample is Available"
	expect_eq "the condition's message" \
		"$(k get ship ship-sample -o 'jsonpath={.status.conditions[?(@.type=="Available")].message}')" \
		"applied by ship-controller"
	expect_eq "managedFields entry of ship-controller" \
		"$(k get ship ship-sample --show-managed-fields -o 'jsonpath={range .metadata.managedFields[?(@.manager=="ship-controller")]}{.operation}/{.subresource}{end}')" \
		"Apply/status"
	stop_manager
}

ship_available() {
	[[ $(k get ship ship-sample -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}') == True ]]
}

# `make deploy` of a fresh project: every object config/default renders is accepted.
scenario_webhooks() {
	local proj="$SC_DIR/app-operator"
	mkdir -p "$proj"
	cd "$proj"
	step "$STEP_TIMEOUT" "opbuilder init" \
		"$OPBUILDER_BIN" init --domain example.com --repo example.com/app-operator --project-name app-operator
	step "$STEP_TIMEOUT" "opbuilder create api App" \
		"$OPBUILDER_BIN" create api --group ingress --version v1beta1 --kind App --resource --controller
	webhooks_in_an_older_layout "$proj"
	step "$STEP_TIMEOUT" "opbuilder create webhook App" \
		"$OPBUILDER_BIN" create webhook --group ingress --version v1beta1 --kind App --defaulting --programmatic-validation

	# Seed 000's rules, written into the scaffolded files (paths mirror the project).
	cp -R "$FIXTURES/app/." .
	expect_eq "fixtures are gofmt-clean" "$(gofmt -l api internal)" ""
	pass "fixtures copied"

	"$OPBUILDER_ROOT/e2e/scripts/link-envtest.sh" "$proj"
	export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=${KUBEBUILDER_CONTROLPLANE_START_TIMEOUT:-180s}
	step "$STEP_TIMEOUT" "make test" make test
	# make test is quiet; run the seed's specs verbosely to show they ran and passed.
	local out="$SC_DIR/webhook-specs.log"
	KUBEBUILDER_ASSETS="$(k8s_bin_dir)" timeout "$STEP_TIMEOUT" \
		go test -v ./internal/webhook/v1beta1/ -count=1 -ginkgo.v -ginkgo.no-color -ginkgo.focus 'seed 000' >"$out" 2>&1 ||
		{ tail -40 "$out"; fail "webhook specs failed"; }
	grep -q 'rejects an App whose Ingress has no Service' "$out" || fail "the rejection spec did not run"
	grep -q 'defaults enable_ingress to true through the API server' "$out" || fail "the defaulting spec did not run"
	grep -Eq 'SUCCESS! -- 4 Passed' "$out" || { tail -20 "$out"; fail "expected 4 passed seed specs"; }
	pass "defaulting applied and invalid App rejected through the API server"
	webhooks_under_make_run
}

# webhooks_under_make_run (issue 48), in the project of scenario_webhooks: App gets a second
# version, v1, converted through the hub v1beta1 (e2e/fixtures/app-conversion: v1's spec.foo is
# v1beta1's spec.image). With the CRD installed, `make run` serves the three webhooks from this
# machine, and the API server calls them: it defaults an App, refuses an invalid one and converts
# Apps to and from v1. Stopped (SIGTERM to make, go run and the manager, as Ctrl-C), it leaves
# no webhook configuration and the CRD's conversion as make install wrote it. Killed (SIGKILL to
# all three), its configurations stay but fail open (an App the validator refuses is admitted
# at once), `make install` puts the CRD back as it installs it, and the next make run deletes
# the configurations the killed one left.
webhooks_under_make_run() {
	step "$STEP_TIMEOUT" "opbuilder create api App v1 (no controller)" \
		"$OPBUILDER_BIN" create api --group ingress --version v1 --kind App --resource --controller=false
	step "$STEP_TIMEOUT" "opbuilder create webhook App --conversion --spoke v1" \
		"$OPBUILDER_BIN" create webhook --group ingress --version v1beta1 --kind App --conversion --spoke v1
	cp -R "$FIXTURES/app-conversion/." .
	expect_eq "the conversion fixture is gofmt-clean" "$(gofmt -l api)" ""
	start_plane
	step "$STEP_TIMEOUT" "make install" make install KUBECTL="$SC_KUBECTL"
	local crd=apps.ingress.example.com out
	expect_crd_established "$crd"

	start_make_run
	k get mutatingwebhookconfigurations,validatingwebhookconfigurations -l opbuilder.io/make-run \
		-o 'jsonpath={range .items[*]}{.kind} {.webhooks[*].failurePolicy} {.webhooks[*].clientConfig.url}{"\n"}{end}' \
		>>"$SC_LOG" 2>&1 || fail "cannot list the webhook configurations of make run"
	expect_eq "the CRD converts through make run" \
		"$(k get crd "$crd" -o 'jsonpath={.spec.conversion.webhook.clientConfig.url}')" "https://127.0.0.1:$MAKE_RUN_WEBHOOK_PORT/convert"
	app_apply app-run 'image: nginx:1.27
  enable_service: true' || fail "an App with a Service was refused under make run"
	expect_eq "enable_ingress defaulted under make run" \
		"$(k get apps.v1beta1.ingress.example.com app-run -o 'jsonpath={.spec.enable_ingress}')" true
	if out=$(app_apply app-invalid 'enable_ingress: true' 2>&1); then
		fail "an App with an Ingress and no Service was admitted under make run"
	fi
	[[ $out == *'spec.enable_service: Invalid value: false: must be true when enable_ingress is true'* ]] ||
		fail "the refusal under make run is not the validator's: $out"
	pass "an App with an Ingress and no Service refused under make run"
	expect_eq "the App read as v1 under make run (converted: spec.foo)" \
		"$(k get apps.v1.ingress.example.com app-run -o 'jsonpath={.spec.foo}')" nginx:1.27
	k apply -f - >>"$SC_LOG" 2>&1 <<'APP' || fail "cannot write an App as v1 under make run"
apiVersion: ingress.example.com/v1
kind: App
metadata:
  name: app-v1
  namespace: default
spec:
  foo: busybox:1.37
APP
	expect_eq "an App written as v1 stored as v1beta1 (converted: spec.image)" \
		"$(k get apps.v1beta1.ingress.example.com app-v1 -o 'jsonpath={.spec.image}')" busybox:1.37
	stop_make_run TERM
	grep -q "Removed the webhooks of make run from the cluster" "$SC_DIR/make-run.log" ||
		fail "make run did not say that it removed its webhooks (log: $SC_DIR/make-run.log)"
	expect_eq "webhook configurations left by a stopped make run" "$(make_run_configurations)" ""
	expect_eq "the CRD's conversion after make run" \
		"$(k get crd "$crd" -o 'jsonpath={.spec.conversion.webhook.clientConfig.url}{.spec.conversion.webhook.clientConfig.service.name}')" \
		webhook-service

	start_make_run
	stop_make_run KILL
	[[ -n $(make_run_configurations) ]] || fail "a killed make run left no configuration: this check proves nothing"
	expect_eq "failurePolicy of what a killed make run left" \
		"$(k get mutatingwebhookconfigurations,validatingwebhookconfigurations -l opbuilder.io/make-run \
			-o 'jsonpath={.items[*].webhooks[*].failurePolicy}')" "Ignore Ignore"
	app_apply app-unchecked 'enable_ingress: true' ||
		fail "the webhooks a killed make run left block the App's writes"
	pass "an App written while a killed make run's webhooks are left: admitted unchecked"
	step "$STEP_TIMEOUT" "make install (after a killed make run)" make install KUBECTL="$SC_KUBECTL"
	expect_eq "the CRD's conversion after make install" \
		"$(k get crd "$crd" -o 'jsonpath={.spec.conversion.webhook.clientConfig.url}{.spec.conversion.webhook.clientConfig.service.name}')" \
		webhook-service
	start_make_run
	grep -q "Deleted a webhook configuration that a killed make run left" "$SC_DIR/make-run.log" ||
		fail "the next make run did not delete what the killed one left (log: $SC_DIR/make-run.log)"
	pass "the next make run deleted what the killed one left"
	stop_make_run TERM
	expect_eq "webhook configurations at the end" "$(make_run_configurations)" ""
}

# app_apply NAME SPEC: apply the v1beta1 App NAME in default with SPEC (YAML lines under spec:).
app_apply() {
	k apply -f - <<APP
apiVersion: ingress.example.com/v1beta1
kind: App
metadata:
  name: $1
  namespace: default
spec:
  $2
APP
}

make_run_configurations() {
	k get mutatingwebhookconfigurations,validatingwebhookconfigurations -l opbuilder.io/make-run -o name
}

# start_make_run: make_run_start (lib.sh) in the current directory, its log $SC_DIR/make-run.log.
start_make_run() {
	make_run_start "$SC_DIR/make-run.log" || fail "make run did not serve its webhooks"
	pass "make run serves its webhooks"
}

# stop_make_run SIGNAL: make_run_stop (lib.sh).
stop_make_run() {
	make_run_stop "$1" || fail "make run did not stop within 40 s of SIG$1"
}

# webhooks_in_an_older_layout PROJ: a copy of PROJ as an earlier release made it (or its owner
# left it), without config/network-policy/ and test/e2e/. `create webhook` leaves those two parts
# out and says so; everything else is written, builds (make build: manifests, generate, fmt, vet,
# go build) and renders with kustomize.
webhooks_in_an_older_layout() {
	local old="$SC_DIR/older" out="$SC_DIR/older-webhook.log" said
	cp -R "$1" "$old"
	rm -r "$old/config/network-policy" "$old/test/e2e"
	cd "$old"
	log_info "[$SC_NAME] opbuilder create webhook App (older layout)"
	timeout "$STEP_TIMEOUT" "$OPBUILDER_BIN" create webhook --group ingress --version v1beta1 --kind App \
		--defaulting --programmatic-validation >"$out" 2>&1 ||
		{ cat "$out" >&2; fail "opbuilder create webhook in the older layout"; }
	said=$(<"$out")
	for part in "the network policy for webhook traffic, because config/network-policy/kustomization.yaml is missing" \
		"the webhooks' e2e checks, because test/e2e/e2e_test.go is missing"; do
		[[ $said == *"note: left out $part."* ]] || { cat "$out" >&2; fail "not said: left out $part"; }
	done
	[[ ! -e config/network-policy && ! -e test/e2e ]] || fail "a part left out wrote its files"
	step "$STEP_TIMEOUT" "make build (older layout)" make build
	kubectl kustomize config/default >"$SC_DIR/older-default.yaml" || fail "kubectl kustomize config/default (older layout)"
	said=$(<"$SC_DIR/older-default.yaml")
	[[ $said == *"kind: ValidatingWebhookConfiguration"* && $said == *"kind: Certificate"* ]] ||
		fail "config/default of the older layout renders without the webhooks or cert-manager"
	pass "older layout: the network policy and e2e checks left out and said; make build and kustomize pass"
	cd "$1"
}

scenario_deploy() {
	local name=guestbook img=example.com/app:v0.0.1
	local proj="$SC_DIR/$name" ns="$name-system" sa="$name-controller-manager"
	mkdir -p "$proj"
	cd "$proj"
	# No --project-name: it defaults to the directory name.
	step "$STEP_TIMEOUT" "opbuilder init" \
		"$OPBUILDER_BIN" init --domain example.com --repo example.com/guestbook
	step "$STEP_TIMEOUT" "opbuilder create api Guestbook" \
		"$OPBUILDER_BIN" create api --group webapp --version v1 --kind Guestbook --resource --controller

	start_plane
	step "$STEP_TIMEOUT" "make deploy IMG=$img" make deploy IMG="$img" KUBECTL="$SC_KUBECTL"

	expect_exists "namespace $ns" get namespace "$ns"
	expect_exists "service account $sa" -n "$ns" get serviceaccount "$sa"
	local crd=guestbooks.webapp.example.com
	expect_crd_established "$crd"

	# The manager's own rules (cluster-wide: init without --namespaced).
	expect_exists "ClusterRole $name-manager-role" get clusterrole "$name-manager-role"
	expect_binding "$name-manager-rolebinding" "" ClusterRole "$name-manager-role" "$ns" "$sa"
	local resources
	resources=$(k get clusterrole "$name-manager-role" -o 'jsonpath={.rules[*].resources}') || fail "cannot read ClusterRole"
	[[ $resources == *guestbooks* ]] || fail "ClusterRole $name-manager-role does not grant guestbooks: $resources"
	pass "ClusterRole $name-manager-role grants guestbooks"

	expect_exists "Role $name-leader-election-role" -n "$ns" get role "$name-leader-election-role"
	expect_binding "$name-leader-election-rolebinding" "$ns" Role "$name-leader-election-role" "$ns" "$sa"
	expect_exists "ClusterRole $name-metrics-auth-role" get clusterrole "$name-metrics-auth-role"
	expect_binding "$name-metrics-auth-rolebinding" "" ClusterRole "$name-metrics-auth-role" "$ns" "$sa"
	expect_exists "ClusterRole $name-metrics-reader" get clusterrole "$name-metrics-reader"

	local deploy="$name-controller-manager"
	expect_exists "Deployment $deploy" -n "$ns" get deployment "$deploy"
	expect_eq "image of Deployment $deploy" \
		"$(k -n "$ns" get deployment "$deploy" -o 'jsonpath={.spec.template.spec.containers[?(@.name=="manager")].image}')" "$img"
	expect_eq "service account of Deployment $deploy" \
		"$(k -n "$ns" get deployment "$deploy" -o 'jsonpath={.spec.template.spec.serviceAccountName}')" "$sa"

	local svc="$name-controller-manager-metrics-service"
	expect_exists "Service $svc" -n "$ns" get service "$svc"
	expect_eq "port of Service $svc" \
		"$(k -n "$ns" get service "$svc" -o 'jsonpath={.spec.ports[0].port}')" 8443
	# The Service must select the manager's pods.
	local selector labels
	selector=$(k -n "$ns" get service "$svc" -o 'jsonpath={.spec.selector}') || fail "cannot read Service $svc"
	labels=$(k -n "$ns" get deployment "$deploy" -o 'jsonpath={.spec.template.metadata.labels}') || fail "cannot read Deployment $deploy"
	[[ -n $selector && $selector != '{}' ]] || fail "Service $svc has no selector"
	local pair
	while read -r pair; do
		[[ -z $pair ]] || [[ $labels == *"$pair"* ]] ||
			fail "Service $svc selects $pair, which the pods of $deploy do not carry ($labels)"
	done < <(tr -d '{}' <<<"$selector" | tr ',' '\n')
	pass "Service $svc selects the pods of $deploy ($selector)"
	# No undeploy: deleting the namespace would stay Terminating without a
	# controller manager. The plane is thrown away with everything in it.
}

# deploy-image/v1-alpha: the operand's Deployment made by the manager from a Memcached.
scenario_deployimage() {
	local proj="$SC_DIR/cache" image=memcached:1.6.26-alpine3.19
	mkdir -p "$proj"
	cd "$proj"
	step "$STEP_TIMEOUT" "opbuilder init" \
		"$OPBUILDER_BIN" init --domain example.com --repo example.com/cache --project-name cache
	# Post-steps on: go mod tidy, make generate and make manifests.
	step "$STEP_TIMEOUT" "opbuilder create api Memcached --plugins=deploy-image/v1-alpha" \
		"$OPBUILDER_BIN" create api --group cache --version v1alpha1 --kind Memcached \
		--image="$image" --image-container-command=memcached,--memory-limit=64,-o,modern,-v \
		--image-container-port=11211 --run-as-user=1001 --plugins=deploy-image/v1-alpha

	start_plane
	step "$STEP_TIMEOUT" "make install" make install KUBECTL="$SC_KUBECTL"
	local crd=memcacheds.cache.example.com
	expect_crd_established "$crd"
	step "$STEP_TIMEOUT" "make build" make build
	# In a cluster the image reaches the manager through config/manager/manager.yaml; bin/manager
	# gets the same value from there.
	local wired
	wired=$(awk '$0 ~ /- name: MEMCACHED_IMAGE$/ { getline; sub(/^ *value: */, ""); print; exit }' config/manager/manager.yaml)
	expect_eq "MEMCACHED_IMAGE in config/manager/manager.yaml" "$wired" "$image"
	export MEMCACHED_IMAGE=$wired
	start_manager "$proj"

	step 60 "kubectl apply -k config/samples/" "$SC_KUBECTL" apply -k config/samples/
	local cr=memcached-sample uid
	uid=$(k get memcached "$cr" -o 'jsonpath={.metadata.uid}') || fail "cannot read $cr"
	WAIT_FOR_PID=$MANAGER_PID wait_for 60 "Deployment $cr" k get deployment "$cr" || {
		tail -n 30 "$SC_DIR/manager.log" >&2
		fail "the manager did not create Deployment $cr"
	}
	local path='{.spec.template.spec.containers[0]'
	expect_eq "owner of Deployment $cr" \
		"$(k get deployment "$cr" -o 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].uid}')" "$uid"
	expect_eq "replicas" "$(k get deployment "$cr" -o 'jsonpath={.spec.replicas}')" 1
	expect_eq "image" "$(k get deployment "$cr" -o "jsonpath=$path.image}")" "$image"
	expect_eq "command" "$(k get deployment "$cr" -o "jsonpath=$path.command}")" \
		'["memcached","--memory-limit=64","-o","modern","-v"]'
	expect_eq "port" "$(k get deployment "$cr" -o "jsonpath=$path.ports[0].containerPort}")" 11211
	expect_eq "container securityContext" \
		"$(k get deployment "$cr" -o "jsonpath=$path.securityContext.runAsUser} $path.securityContext.runAsNonRoot} $path.securityContext.allowPrivilegeEscalation} $path.securityContext.capabilities.drop}")" \
		'1001 true false ["ALL"]'
	expect_eq "pod securityContext" \
		"$(k get deployment "$cr" -o 'jsonpath={.spec.template.spec.securityContext.runAsNonRoot} {.spec.template.spec.securityContext.seccompProfile.type}')" \
		"true RuntimeDefault"

	available() {
		[[ $(k get memcached "$cr" -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}') == "$1" ]]
	}
	WAIT_FOR_PID=$MANAGER_PID wait_for 60 "$cr Available=True" available True ||
		fail "$cr is not Available: $(k get memcached "$cr" -o 'jsonpath={.status.conditions}')"
	expect_eq "Available reason" \
		"$(k get memcached "$cr" -o 'jsonpath={.status.conditions[?(@.type=="Available")].reason}')" Reconciling
	expect_eq "finalizer of $cr" "$(k get memcached "$cr" -o 'jsonpath={.metadata.finalizers}')" \
		'["cache.example.com/finalizer"]'

	step 60 "kubectl patch $cr size=3" "$SC_KUBECTL" patch memcached "$cr" --type=merge -p '{"spec":{"size":3}}'
	replicas3() { [[ $(k get deployment "$cr" -o 'jsonpath={.spec.replicas}') == 3 ]]; }
	WAIT_FOR_PID=$MANAGER_PID wait_for 60 "Deployment $cr to have 3 replicas" replicas3 ||
		fail "the new size did not reach Deployment $cr"
	pass "spec.size 3 reached the Deployment"

	step 60 "kubectl delete memcached $cr" "$SC_KUBECTL" delete memcached "$cr" --wait=false
	gone() {
		local out
		out=$(k get memcached "$cr" -o name --ignore-not-found) && [[ -z $out ]]
	}
	WAIT_FOR_PID=$MANAGER_PID wait_for 60 "$cr to be deleted" gone ||
		fail "$cr still exists: $(k get memcached "$cr" -o 'jsonpath={.metadata.finalizers} {.status.conditions}')"
	# The object carried the finalizer, so it went only once the controller removed it; the
	# event of doFinalizerOperationsForMemcached shows the cleanup ran.
	deleting_event() {
		k get events.events.k8s.io -o 'jsonpath={range .items[?(@.reason=="Deleting")]}{.regarding.uid}{"\n"}{end}' |
			grep -qx "$uid"
	}
	WAIT_FOR_PID=$MANAGER_PID wait_for 60 "the finalizer's Deleting event" deleting_event ||
		fail "no Deleting event for $cr (manager log: $SC_DIR/manager.log)"
	grep -q "Removing the finalizer" "$SC_DIR/manager.log" || fail "the manager did not log the finalizer's removal"
	pass "$cr deleted after the finalizer ran"
	stop_manager
}

# Seed 004's sample-controller, on the typed clients of the typed-clients plugin.
scenario_foo() {
	local proj="$SC_DIR/sample-controller"
	mkdir -p "$proj"
	cd "$proj"
	step "$STEP_TIMEOUT" "opbuilder init" \
		"$OPBUILDER_BIN" init --domain k8s.io --repo example.com/sample-controller --project-name sample-controller
	step "$STEP_TIMEOUT" "opbuilder create api Foo" \
		"$OPBUILDER_BIN" create api --group samplecontroller --version v1alpha1 --kind Foo --resource --controller
	# The seed's Foo, without code-generator tags: enabling the plugin adds them.
	cp "$FIXTURES/foo/api/v1alpha1/foo_types.go" api/v1alpha1/
	step 60 "opbuilder edit --plugins=typed-clients/v1-alpha" \
		"$OPBUILDER_BIN" edit --plugins=typed-clients/v1-alpha
	grep -qx '// +genclient' api/v1alpha1/foo_types.go || fail "edit did not add +genclient to the Foo type"
	"$here/seed-tools.sh" "$proj" >>"$SC_LOG" 2>&1 || fail "seed-tools.sh failed"
	step "$STEP_TIMEOUT" "make generate manifests (generate runs generate-client)" make generate manifests
	[[ -f pkg/generated/clientset/versioned/clientset.go ]] || fail "make generate wrote no clientset"
	step "$STEP_TIMEOUT" "make verify-client" make verify-client
	pass "typed clients generated and current"

	cp -R "$FIXTURES/foo/cmd" "$FIXTURES/foo/config" .
	expect_eq "fixtures are gofmt-clean" "$(gofmt -l cmd api)" ""
	step "$STEP_TIMEOUT" "go mod tidy" go mod tidy
	step "$STEP_TIMEOUT" "go build ./cmd/foo-controller" go build -o bin/foo-controller ./cmd/foo-controller
	step "$STEP_TIMEOUT" "make build (the scaffolded manager, same module)" make build
	pass "foo-controller and bin/manager built side by side"

	start_plane
	step "$STEP_TIMEOUT" "make install" make install KUBECTL="$SC_KUBECTL"
	expect_crd_established foos.samplecontroller.k8s.io
	start_manager "$proj"
	bin/foo-controller --kubeconfig "$KUBECONFIG" </dev/null >>"$SC_DIR/foo-controller.log" 2>&1 &
	EXTRA_PIDS+=("$!")
	local foo_pid=$!
	WAIT_FOR_PID=$foo_pid wait_for 60 "foo-controller caches to sync" \
		grep -q 'caches synced' "$SC_DIR/foo-controller.log" || fail "foo-controller did not start (log: $SC_DIR/foo-controller.log)"

	step 60 "kubectl apply the seed's example-foo" "$SC_KUBECTL" apply -f config/samples/samplecontroller_v1alpha1_foo.yaml
	local uid
	uid=$(k get foo example-foo -o 'jsonpath={.metadata.uid}') || fail "cannot read example-foo"
	WAIT_FOR_PID=$foo_pid wait_for 60 "Deployment example-foo controlled by Foo example-foo" \
		foo_owns_deployment "$uid" || fail "no Deployment example-foo controlled by example-foo (log: $SC_DIR/foo-controller.log)"
	expect_eq "replicas of Deployment example-foo" "$(k get deployment example-foo -o 'jsonpath={.spec.replicas}')" 1
	pass "the informer saw example-foo and the Deployment was created"

	# No kube-controller-manager or kubelet here: play the Deployment controller and report
	# one available replica. The Deployment informer requeues the Foo, whose status the
	# generated clientset updates.
	step 30 "report 1 available replica on Deployment example-foo" "$SC_KUBECTL" patch deployment example-foo \
		--subresource=status --type=merge -p '{"status":{"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1}}'
	WAIT_FOR_PID=$foo_pid wait_for 60 "example-foo status.availableReplicas = 1" foo_available 1 ||
		fail "status.availableReplicas of example-foo is not 1 (log: $SC_DIR/foo-controller.log)"
	pass "status.availableReplicas copied into example-foo through the generated clientset"

	step 30 "scale example-foo to 3" "$SC_KUBECTL" patch foo example-foo --type=merge -p '{"spec":{"replicas":3}}'
	WAIT_FOR_PID=$foo_pid wait_for 60 "Deployment example-foo scaled to 3" deployment_replicas 3 ||
		fail "Deployment example-foo was not scaled to 3 (log: $SC_DIR/foo-controller.log)"
	pass "scaling the Foo scaled its Deployment"
	kill -0 "$MANAGER_PID" 2>/dev/null || fail "bin/manager exited while foo-controller ran (log: $SC_DIR/manager.log)"
	pass "bin/manager ran alongside foo-controller"
}

foo_owns_deployment() {
	[[ $(k get deployment example-foo -o 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].uid}') == "$1" ]]
}
foo_available() { [[ $(k get foo example-foo -o 'jsonpath={.status.availableReplicas}') == "$1" ]]; }
deployment_replicas() { [[ $(k get deployment example-foo -o 'jsonpath={.spec.replicas}') == "$1" ]]; }

# scenario_telemetry (issue 49 item 2): see the usage at the top.
scenario_telemetry() {
	local proj="$SC_DIR/lighthouse" ctl=internal/controller/beacon_controller.go
	mkdir -p "$proj"
	cd "$proj"
	step "$STEP_TIMEOUT" "opbuilder init --plugins=go/v4,telemetry/v1-alpha" \
		"$OPBUILDER_BIN" init --domain example.com --repo example.com/lighthouse --project-name lighthouse \
		--plugins=go/v4,telemetry/v1-alpha
	step "$STEP_TIMEOUT" "opbuilder create api Beacon" \
		"$OPBUILDER_BIN" create api --group sea --version v1 --kind Beacon --resource --controller
	step "$STEP_TIMEOUT" "opbuilder create webhook Beacon" \
		"$OPBUILDER_BIN" create webhook --group sea --version v1 --kind Beacon --defaulting --programmatic-validation
	# An API call under the reconcile span: the controller writes the Beacon's status.
	perl -0pi -e 's/\n\treturn ctrl\.Result\{\}, nil\n\}/\n\tif err := r.Status().Update(ctx, &beacon); err != nil {\n\t\treturn ctrl.Result{}, err\n\t}\n\treturn ctrl.Result{}, nil\n}/' "$ctl"
	grep -q 'r.Status().Update(ctx, &beacon)' "$ctl" || fail "could not add the status update to $ctl"
	expect_eq "the changed controller is gofmt-clean" "$(gofmt -l internal)" ""

	TELEMETRY_OTEL_DIR="$SC_DIR/otel"
	step "$STEP_TIMEOUT" "OpenTelemetry Collector (otelcol.sh start)" "$here/otelcol.sh" start "$TELEMETRY_OTEL_DIR"
	# The API server traces its requests to the same collector (OTLP/gRPC): its webhook calls
	# carry a traceparent.
	local grpc
	grpc=$(<"$TELEMETRY_OTEL_DIR/grpc-endpoint")
	export OPBUILDER_APISERVER_TRACING=${grpc#http://}
	start_plane
	unset OPBUILDER_APISERVER_TRACING
	step "$STEP_TIMEOUT" "make install" make install KUBECTL="$SC_KUBECTL"
	expect_crd_established beacons.sea.example.com

	local mport
	mport=$(free_port)
	OTEL_EXPORTER_OTLP_ENDPOINT=$(<"$TELEMETRY_OTEL_DIR/endpoint") OTEL_BSP_SCHEDULE_DELAY=200 \
		MAKE_RUN_ARGS="--metrics-bind-address=127.0.0.1:$mport" start_make_run
	k apply -f config/samples/sea_v1_beacon.yaml >>"$SC_LOG" 2>&1 || fail "the sample Beacon was refused"
	wait_for 60 "the reconcile span of beacon-sample at the collector" telemetry_reconcile_span ||
		fail "no span 'reconcile beacon' of beacon-sample with reconcile.result success (spans: $TELEMETRY_OTEL_DIR/traces.jsonl)"
	local span tid sid
	span=$(telemetry_reconcile_span)
	tid=$(jq -r .traceId <<<"$span")
	sid=$(jq -r .spanId <<<"$span")
	expect_eq "the reconcile span's service, controller, namespace" \
		"$(jq -r '[.service, .attributes.controller, .attributes["k8s.namespace.name"]] | join(" ")' <<<"$span")" \
		"lighthouse beacon default"
	expect_eq "API-call spans under the reconcile span (client, PUT)" \
		"$(telemetry_spans | jq -r --arg s "$sid" 'select(.parentSpanId == $s and .kind == 3) | .attributes["http.request.method"]' | sort -u)" PUT
	local hook
	for hook in /mutate-sea-example-com-v1-beacon /validate-sea-example-com-v1-beacon; do
		expect_eq "server spans of the webhook $hook" \
			"$(telemetry_spans | jq -r --arg n "webhook $hook" 'select(.name == $n and .kind == 2) | .attributes["webhook.path"]' | sort -u)" "$hook"
	done
	wait_for 30 "a webhook span whose parent is the API server's span of the call" telemetry_webhook_in_apiserver_trace ||
		fail "no webhook span is the child of an API server span in its trace (spans: $TELEMETRY_OTEL_DIR/traces.jsonl)"
	pass "the webhook span joins the API server's trace: $(telemetry_webhook_in_apiserver_trace)"
	grep -F "$tid" "$SC_DIR/make-run.log" | grep -q trace_id ||
		fail "no manager log line carries the trace id $tid (log: $SC_DIR/make-run.log)"
	pass "the trace id $tid is on a reconcile log line"

	# Callers of the metrics server: none, one without a binding, one bound to loglevel-editor and
	# metrics-reader.
	k apply -f config/rbac/loglevel_editor_role.yaml -f config/rbac/metrics_reader_role.yaml >>"$SC_LOG" 2>&1 ||
		fail "cannot apply the ClusterRoles loglevel-editor and metrics-reader"
	k create serviceaccount nobody >>"$SC_LOG" 2>&1 || fail "cannot create the ServiceAccount nobody"
	k create serviceaccount operator >>"$SC_LOG" 2>&1 || fail "cannot create the ServiceAccount operator"
	k create clusterrolebinding operator-loglevel --clusterrole=loglevel-editor --serviceaccount=default:operator >>"$SC_LOG" 2>&1 &&
		k create clusterrolebinding operator-metrics --clusterrole=metrics-reader --serviceaccount=default:operator >>"$SC_LOG" 2>&1 ||
		fail "cannot bind the ServiceAccount operator"
	local url="https://127.0.0.1:$mport" nobody operator scrape
	nobody=$(k create token nobody) || fail "cannot get a token of nobody"
	operator=$(k create token operator) || fail "cannot get a token of operator"
	expect_eq "GET /debug/loglevel without a token" "$(curl -sk -o /dev/null -w '%{http_code}' "$url/debug/loglevel")" 401
	expect_eq "GET /debug/loglevel without the ClusterRole" \
		"$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $nobody" "$url/debug/loglevel")" 403
	expect_eq "PUT /debug/loglevel without the ClusterRole" \
		"$(curl -sk -o /dev/null -w '%{http_code}' -X PUT -d '{"level":"error"}' -H "Authorization: Bearer $nobody" "$url/debug/loglevel")" 403
	expect_eq "the log level read by loglevel-editor" \
		"$(curl -sfk -H "Authorization: Bearer $operator" "$url/debug/loglevel" | jq -r .level)" debug
	expect_eq "the log level set by loglevel-editor" \
		"$(curl -sfk -X PUT -H 'Content-Type: application/json' -d '{"level":"info"}' -H "Authorization: Bearer $operator" "$url/debug/loglevel" | jq -r .level)" info
	expect_eq "the log level read again" \
		"$(curl -sfk -H "Authorization: Bearer $operator" "$url/debug/loglevel" | jq -r .level)" info
	scrape=$(curl -sfk -H "Authorization: Bearer $operator" -H 'Accept: application/openmetrics-text; version=1.0.0' \
		"$url/metrics/openmetrics") || fail "cannot scrape $url/metrics/openmetrics as metrics-reader"
	printf '%s\n' "$scrape" | grep '^reconcile_duration_seconds' >>"$SC_LOG"
	local traced ids
	ids=$(telemetry_spans | jq -r 'select(.name == "reconcile beacon") | .traceId' | sort -u)
	traced=$(printf '%s\n' "$scrape" | grep '^reconcile_duration_seconds_bucket' | grep -o 'trace_id="[0-9a-f]*"' |
		cut -d'"' -f2 | sort -u | grep -Fx -f <(printf '%s\n' "$ids") | head -1) || true
	[[ -n $traced ]] || fail "no exemplar of reconcile_duration_seconds is the trace id of a reconcile span (see $SC_LOG)"
	pass "reconcile_duration_seconds has the exemplar trace_id=$traced, a reconcile span's trace"
	expect_eq "exemplars in the same endpoint's text format (a scraper that does not ask for OpenMetrics)" \
		"$(curl -sfk -H "Authorization: Bearer $operator" "$url/metrics/openmetrics" | grep -c 'trace_id=' || true)" 0
	stop_make_run TERM
	step 60 "stop the collector" "$here/otelcol.sh" stop "$TELEMETRY_OTEL_DIR"
	TELEMETRY_OTEL_DIR=""
}

telemetry_spans() { "$here/otelcol.sh" spans "$TELEMETRY_OTEL_DIR"; }
# telemetry_webhook_in_apiserver_trace: the name of a webhook span whose parent is a span of the
# API server in the same trace (fails without).
telemetry_webhook_in_apiserver_trace() {
	telemetry_spans | jq -rs '(map(select(.service == "apiserver") | {(.spanId): .traceId}) | add // {}) as $api
		| .[] | select((.name | startswith("webhook /")) and .kind == 2 and $api[.parentSpanId] == .traceId) | .name' |
		head -1 | grep .
}
# telemetry_reconcile_span: the first successful reconcile span of beacon-sample (fails without).
telemetry_reconcile_span() {
	telemetry_spans | jq -c 'select(.name == "reconcile beacon" and .attributes["k8s.object.name"] == "beacon-sample"
		and .attributes["reconcile.result"] == "success")' | head -1 | grep .
}

# ================================================================ scenario helpers

fail() {
	log_error "[$SC_NAME] FAIL: $*"
	exit 1
}
pass() { log_info "[$SC_NAME] ok: $*"; }

# run SECS CMD...: run CMD in the background (so a TERM trap can fire at once)
# with output appended to $SC_LOG, killed after SECS. timeout(1) leads its own
# process group and signals all of it, so make's and go's children go too.
run() {
	local secs=$1 rc=0
	shift
	timeout --kill-after=15 "$secs" "$@" </dev/null >>"$SC_LOG" 2>&1 &
	CHILD_PID=$!
	wait "$CHILD_PID" || rc=$?
	CHILD_PID=""
	return "$rc"
}

# step SECS DESC CMD...: a bounded step; on failure print the log tail and fail.
step() {
	local secs=$1 desc=$2 t0=$SECONDS rc=0
	shift 2
	log_info "[$SC_NAME] $desc"
	printf '\n==== %s %s\n$ %s\n' "$(date -u +%T)" "$desc" "$*" >>"$SC_LOG"
	run "$secs" "$@" || rc=$?
	if ((rc != 0)); then
		((rc == 124 || rc == 137)) && log_error "[$SC_NAME] '$desc' timed out after ${secs}s"
		printf -- '----- last 60 lines of %s -----\n' "$SC_LOG" >&2
		tail -n 60 "$SC_LOG" >&2
		printf -- '----- end -----\n' >&2
		fail "$desc (exit $rc)"
	fi
	log_info "[$SC_NAME] $desc: done in $(fmt_duration $((SECONDS - t0)))"
}

# k ARGS...: kubectl against the scenario's plane; a wedged server cannot hang it.
k() { "$SC_KUBECTL" --request-timeout=20s "$@"; }

expect_eq() {
	local desc=$1 got=$2 want=$3
	[[ $got == "$want" ]] || fail "$desc: got '$got', want '$want'"
	pass "$desc: '$got'"
}

expect_exists() {
	local desc=$1
	shift
	k "$@" -o name >>"$SC_LOG" 2>&1 || fail "$desc does not exist (kubectl $*)"
	pass "$desc exists"
}

# expect_binding NAME NAMESPACE("" = cluster) ROLE_KIND ROLE_NAME SA_NAMESPACE SA_NAME
expect_binding() {
	local name=$1 ns=$2 kind=$3 role=$4 sa_ns=$5 sa=$6 res=clusterrolebinding got
	local -a nsarg=()
	if [[ -n $ns ]]; then
		res=rolebinding
		nsarg=(-n "$ns")
	fi
	got=$(k "${nsarg[@]}" get "$res" "$name" \
		-o 'jsonpath={.roleRef.kind}/{.roleRef.name} {.subjects[0].kind}/{.subjects[0].namespace}/{.subjects[0].name}') ||
		fail "$res $name does not exist"
	expect_eq "$res $name" "$got" "$kind/$role ServiceAccount/$sa_ns/$sa"
}

# owned_jobs UID: names of the Jobs in the current namespace whose controller
# owner reference has UID.
owned_jobs() {
	k get jobs -o 'jsonpath={range .items[*]}{.metadata.name}{"\t"}{.metadata.ownerReferences[?(@.controller==true)].uid}{"\n"}{end}' |
		awk -F'\t' -v uid="$1" '$2 == uid { print $1 }'
}
owned_jobs_at_least() {
	local n
	n=$(owned_jobs "$2" | wc -l)
	((n >= $1))
}

# expect_crd_established NAME: poll, because `kubectl wait --for=condition=Established`
# fails at once ("status.conditions accessor error: <nil>") while a new CRD has
# no conditions yet.
crd_established() {
	[[ $(k get crd "$1" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}') == True ]]
}
expect_crd_established() {
	wait_for 60 "CRD $1 to be established" crd_established "$1" || fail "CRD $1 not established"
	pass "CRD $1 established"
}

crd_absent() {
	local out
	out=$(k get crd "$1" -o name --ignore-not-found) && [[ -z $out ]]
}


# start_plane: control plane in $CP_DIR; exports KUBECONFIG and sets SC_KUBECTL.
start_plane() {
	step 300 "start control plane" "$here/control-plane.sh" start "$CP_DIR"
	eval "$("$here/control-plane.sh" env "$CP_DIR")"
	SC_KUBECTL=${SCENARIO_KUBECTL:-$OPBUILDER_E2E_KUBECTL}
	[[ -x $SC_KUBECTL || -x $(command -v "$SC_KUBECTL" 2>/dev/null) ]] ||
		fail "kubectl '$SC_KUBECTL' is not executable"
	k get namespace default -o name >>"$SC_LOG" 2>&1 || fail "kubectl $SC_KUBECTL cannot reach the plane"
	pass "control plane up (KUBECONFIG=$KUBECONFIG, kubectl $SC_KUBECTL)"
}

# start_manager PROJECT_DIR: PROJECT_DIR/bin/manager in the background against
# $KUBECONFIG; returns once /readyz answers. Output: $SC_DIR/manager.log.
start_manager() {
	local port
	port=$(free_port)
	log_info "[$SC_NAME] starting bin/manager (probes on 127.0.0.1:$port)"
	"$1/bin/manager" --metrics-bind-address=0 --health-probe-bind-address="127.0.0.1:$port" \
		</dev/null >>"$SC_DIR/manager.log" 2>&1 &
	MANAGER_PID=$!
	WAIT_FOR_PID=$MANAGER_PID wait_for 60 "manager /readyz on port $port" \
		curl -fsS --max-time 2 "http://127.0.0.1:$port/readyz" || {
		tail -n 30 "$SC_DIR/manager.log" >&2
		fail "manager did not become ready"
	}
	pass "manager running (pid $MANAGER_PID)"
}

# stop_manager: SIGTERM, 40 s for the graceful shutdown (controller-runtime
# allows 30 s), then SIGKILL. Safe to repeat.
stop_manager() {
	[[ -n ${MANAGER_PID:-} ]] || return 0
	local pid=$MANAGER_PID deadline=$((SECONDS + 40))
	MANAGER_PID=""
	if kill -0 "$pid" 2>/dev/null; then
		log_info "[$SC_NAME] stopping manager (pid $pid)"
		kill -TERM "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			log_warn "[$SC_NAME] manager (pid $pid) ignored SIGTERM; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
}

# sc_cleanup: EXIT trap of a scenario subshell. Stops what the scenario started.
sc_cleanup() {
	local rc=$?
	trap - EXIT TERM
	if [[ -n ${CHILD_PID:-} ]]; then
		kill -TERM "$CHILD_PID" 2>/dev/null || true
		wait "$CHILD_PID" 2>/dev/null || true
	fi
	stop_manager
	make_run_stop KILL || true
	if [[ -n ${TELEMETRY_OTEL_DIR:-} ]]; then
		"$here/otelcol.sh" stop "$TELEMETRY_OTEL_DIR" >>"$SC_LOG" 2>&1 || true
	fi
	local pid
	for pid in "${EXTRA_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	"$here/control-plane.sh" stop "$CP_DIR" >>"$SC_LOG" 2>&1 || {
		log_error "[$SC_NAME] stopping the control plane in $CP_DIR failed"
		rc=1
	}
	if ((rc == 0)) && [[ ${SCENARIO_KEEP:-0} != 1 ]]; then
		rm -rf "$SC_DIR"
	else
		log_info "[$SC_NAME] kept $SC_DIR (log: $SC_LOG)"
	fi
	exit "$rc"
}

# run_scenario NAME: body of the subshell that runs one scenario.
run_scenario() {
	SC_NAME=$1
	SC_DIR=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-scenario-$SC_NAME.XXXXXX")
	SC_LOG="$SC_DIR/scenario.log"
	CP_DIR="$SC_DIR/plane"
	SC_KUBECTL=""
	MANAGER_PID=""
	MAKE_RUN_PGID=""
	TELEMETRY_OTEL_DIR=""
	EXTRA_PIDS=()
	CHILD_PID=""
	trap sc_cleanup EXIT
	trap 'exit 143' TERM
	log_info "[$SC_NAME] directory $SC_DIR"
	cd "$SC_DIR"
	"scenario_$SC_NAME"
}

# ================================================================ main

if [[ ${1:-} == --list ]]; then
	printf '%s\n' "${SCENARIOS[@]}"
	exit 0
fi
selected=("$@")
((${#selected[@]})) || selected=("${SCENARIOS[@]}")
for s in "${selected[@]}"; do
	declare -F "scenario_$s" >/dev/null || die "unknown scenario '$s' (known: ${SCENARIOS[*]})"
done

need_cmd go make gofmt curl timeout setsid
[[ -x $OPBUILDER_BIN ]] || die "opbuilder binary $OPBUILDER_BIN missing: run 'cargo build' (or set OPBUILDER_BIN)"
"$here/build-control-plane.sh" >/dev/null

passed=0
failed=0
failed_names=()
current=""
# The scenario runs in a background subshell so that INT/TERM reach this loop
# at once; they are passed on as TERM, whose trap in the subshell cleans up.
interrupted=0
on_signal() {
	interrupted=1
	[[ -n $current ]] && kill -TERM "$current" 2>/dev/null
}
trap on_signal INT TERM
for s in "${selected[@]}"; do
	t0=$SECONDS
	log_info "scenario $s: start"
	(run_scenario "$s") &
	current=$!
	rc=0
	# wait returns early (>128) when a signal arrives; wait again for the cleanup.
	while true; do
		wait "$current" && rc=0 || rc=$?
		kill -0 "$current" 2>/dev/null || break
	done
	current=""
	if ((rc == 0)); then
		passed=$((passed + 1))
		log_info "scenario $s: PASSED in $(fmt_duration $((SECONDS - t0)))"
	else
		failed=$((failed + 1))
		failed_names+=("$s")
		log_error "scenario $s: FAILED (exit $rc) after $(fmt_duration $((SECONDS - t0)))"
	fi
	((interrupted)) && break
done
((failed == 0)) || log_error "failed: ${failed_names[*]}"
echo "scenarios: $passed passed, $failed failed"
((interrupted == 0)) || exit 130
((failed == 0))
