#!/usr/bin/env bash
# Projects made by earlier Kubebuilder releases (issue 45): opbuilder's commands work in them and
# `opbuilder alpha update` carries them to the current templates.
#
# For each release (the oldest v4 the Go module proxy serves, one between, and [e2e] kubebuilder of
# versions.toml, the parity oracle, whose binary is shared with the parity stage), built with
# go-tool.sh and cached by version:
#
#  1. Kubebuilder makes the same project: init, two kinds in two versions (Memcached and Redis,
#     v1 and v1alpha1), a controller for a core type (apps/v1 Deployment), every webhook type
#     (defaulting and validating for Memcached, conversion for Redis), deploy-image (Busybox),
#     grafana, and the helm plugin the release has (v1-alpha, or v2-alpha with the dist/install.yaml
#     of `make build-installer`), v1 marked as the storage version of both kinds. Its post-steps run as for a user (`go mod tidy`), but not `make`:
#     the controller-gen of releases before v4.3 (v0.15, v0.16) does not compile with Go 1.26 (the
#     x/tools it requires), so every project here leaves `make generate manifests` to the end, where
#     the current templates' tools run.
#  2. Pristine: that project, committed, is updated by `opbuilder alpha update`, which builds the
#     release (or takes it from PATH) and scaffolds it again for the merge base. Without user code the
#     update is clean and the result is what `opbuilder alpha generate` writes for the same PROJECT,
#     file by file (go.mod, go.sum, PROJECT's `core:` field and the storage-version markers aside). This
#     shows the base is the release's own scaffold, in the order the project was made.
#  3. With user code: a field and a storage-version marker in the types, a line in the reconciler, a
#     default in the defaulting webhook, a line in main.go. Then opbuilder's `create api` (a third
#     kind, Valkey), `create webhook` (its defaulting webhook) and `edit --plugins=autoupdate/v1-alpha`
#     run in the release's project, each keeping every user line. Then `opbuilder alpha update`:
#     conflicts only in the files the user or those commands changed since Kubebuilder made them
#     (resolved for the user, as alpha-update.sh does),
#     every user line kept, PROJECT's cliVersion names opbuilder. A webhook of a release before
#     v4.3 (api/<version>/<kind>_webhook.go, on controller-runtime's removed webhook.Defaulter) is
#     kept by the update, which says where the current templates write it; the user's default is
#     moved there (what the note tells the user to do). Then `go mod tidy`, `make build` for every
#     release, `make test` (envtest) for the oldest and the newest, and `opbuilder alpha check` is
#     clean.
#  2b. For the newest release, opbuilder's own plugins in the untouched project: `edit
#     --plugins=certs/v1-alpha` (docs/certs.md) and `edit --plugins=telemetry/v1-alpha`, then
#     `alpha update` merges without a conflict (the base is Kubebuilder's replay plus the same
#     edits), `make build` passes, config/default renders no cert-manager object, and cmd/main.go
#     sets each up once.
#
# Releases without cliVersion in PROJECT (before v4.6) are updated with --from-version. The oldest
# release reports no version (`kubebuilder version` says unknown when built from the proxy), so
# opbuilder builds it itself, into ~/.cache/opbuilder/kubebuilder; the others are found on PATH.
#
# Needs: go (the Go module proxy), git, make, kubectl. OPBUILDER_KEEP_WORK=1 keeps the work
# directory (its projects, logs and each update's output) after a run that passed.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
need_cmd git go make kubectl flock

NEW=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $NEW ]] || die "build opbuilder first (cargo build): $NEW"
unset OPBUILDER_TEST_VERSION
NEWEST=$(pin e2e.kubebuilder)
# The oldest v4 release the proxy serves, one between (the first whose webhooks live in
# internal/webhook/, with the helm plugin's v1-alpha), and the newest.
RELEASES=(v4.0.0 v4.6.0 "$NEWEST")
OLDEST=${RELEASES[0]}
# Usage: kubebuilder-releases.sh [RELEASE...] (default: all of RELEASES)
(($# == 0)) || RELEASES=("$@")
# Releases whose project also runs `make test`.
TESTED=" $OLDEST $NEWEST "

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-kb-releases.XXXXXX")
log_info "work directory: $work"
fail() {
	log_error "$*"
	exit 1
}

# kb_binary VERSION: the release's kubebuilder, built with go-tool.sh (cached by version; the
# newest is the parity stage's oracle). Releases before v4.6 keep their main package in cmd/.
kb_binary() {
	local v=$1 dir pkg=sigs.k8s.io/kubebuilder/v4
	if [[ $v == "$NEWEST" ]]; then
		"$here/go-tool.sh" kubebuilder
		return
	fi
	dir=$(go mod download -json "$pkg@$v" | awk -F'"' '$2 == "Dir" { print $4 }')
	[[ -f $dir/main.go ]] || pkg+=/cmd
	"$here/go-tool.sh" kubebuilder sigs.k8s.io/kubebuilder/v4 "$v" "$pkg" \
		--require "golang.org/x/tools@$(pin kubebuilder.x_tools)"
}

# A `make` that does nothing, first on PATH while Kubebuilder scaffolds (its post-step `make
# generate`; see the header).
mkdir -p "$work/no-make"
printf '#!/bin/sh\nexit 0\n' >"$work/no-make/make"
chmod +x "$work/no-make/make"

# scaffold VERSION KB DIR: the project, made by Kubebuilder VERSION (binary KB).
scaffold() {
	local v=$1 kb=$2 dir=$3 help
	mkdir -p "$dir"
	help=$("$kb" --help)
	(
		cd "$dir"
		export PATH="$work/no-make:$PATH"
		"$kb" init --domain example.com --repo example.com/shop --project-name shop --skip-go-version-check
		"$kb" create api --group cache --version v1 --kind Memcached --resource --controller
		"$kb" create api --group cache --version v1alpha1 --kind Memcached --resource --controller=false
		"$kb" create api --group cache --version v1 --kind Redis --resource --controller
		"$kb" create api --group cache --version v1alpha1 --kind Redis --resource --controller=false
		"$kb" create api --group apps --version v1 --kind Deployment --resource=false --controller
		"$kb" create webhook --group cache --version v1 --kind Memcached --defaulting --programmatic-validation
		if "$kb" create webhook --help | grep -q -- '--spoke'; then
			"$kb" create webhook --group cache --version v1 --kind Redis --conversion --spoke v1alpha1
		else
			"$kb" create webhook --group cache --version v1 --kind Redis --conversion
		fi
		# Two versions of a kind need a storage version for `make manifests` (the helm plugin's
		# below runs it): v1, as the user would mark it (a conversion webhook with --spoke marks its hub).
		local f
		for f in api/v1/memcached_types.go api/v1/redis_types.go; do
			grep -q '^// +kubebuilder:storageversion$' "$f" ||
				sed -i '0,/^\/\/ +kubebuilder:subresource:status$/s//&\n\/\/ +kubebuilder:storageversion/' "$f"
		done
		"$kb" create api --group cache --version v1alpha1 --kind Busybox --image=busybox:1.36.1 \
			--image-container-command=sleep,3600 --plugins=deploy-image/v1-alpha
		"$kb" edit --plugins=grafana.kubebuilder.io/v1-alpha
	) >"$dir.log" 2>&1 || fail "Kubebuilder $v could not make the project: $(tail -20 "$dir.log")"
	if grep -q 'helm/v2-alpha' <<<"$help"; then
		# Its edit makes the chart from `make build-installer`'s dist/install.yaml: made in a copy
		# (make generate manifests and kustomize edit change other files), with the tools of the e2e
		# cache (the release pins the same controller-gen and kustomize as opbuilder).
		cp -R "$dir" "$dir-installer"
		"$here/seed-tools.sh" "$dir-installer"
		(cd "$dir-installer" && make build-installer) >>"$dir.log" 2>&1 ||
			fail "Kubebuilder $v's project: make build-installer failed: $(tail -20 "$dir.log")"
		mkdir -p "$dir/dist"
		cp "$dir-installer/dist/install.yaml" "$dir/dist/install.yaml"
		rm -rf "$dir-installer"
		(cd "$dir" && PATH="$work/no-make:$PATH" "$kb" edit --plugins=helm/v2-alpha) >>"$dir.log" 2>&1 ||
			fail "Kubebuilder $v: edit --plugins=helm/v2-alpha failed: $(tail -20 "$dir.log")"
		[[ -f $dir/dist/chart/Chart.yaml ]] || fail "Kubebuilder $v wrote no dist/chart"
	elif grep -q 'helm.kubebuilder.io/v1-alpha' <<<"$help"; then
		(cd "$dir" && PATH="$work/no-make:$PATH" "$kb" edit --plugins=helm.kubebuilder.io/v1-alpha) >>"$dir.log" 2>&1 ||
			fail "Kubebuilder $v: edit --plugins=helm.kubebuilder.io/v1-alpha failed: $(tail -20 "$dir.log")"
		[[ -f $dir/dist/chart/Chart.yaml ]] || fail "Kubebuilder $v wrote no dist/chart"
	fi
	git -C "$dir" init -q
	git -C "$dir" add -A
	git -C "$dir" -c user.name=e2e -c user.email=e2e@example.invalid commit -qm "made by Kubebuilder $v"
}

# commit DIR MESSAGE
commit() {
	git -C "$1" add -A
	git -C "$1" -c user.name=e2e -c user.email=e2e@example.invalid commit -qm "$2"
}

# edit FILE TEXT ANCHOR...: the user's lines TEXT (\n between lines, \t for tabs) in FILE, after the
# first line that matches the first ANCHOR (an extended regular expression) found in FILE, unless
# they are all there already; each is recorded as user code of FILE (USER_LINES, USER_FILES).
edit() {
	local file=$1 text=$2 line missing=0 anchor
	shift 2
	while IFS= read -r line; do
		[[ -n ${line//[[:space:]]/} ]] || continue
		grep -qxF -- "$file"$'\t'"$line" "$USER_LINES" || printf '%s\t%s\n' "$file" "$line" >>"$USER_LINES"
		grep -qxF -- "$line" "$file" || missing=1
	done < <(printf '%b\n' "$text")
	grep -qxF "$file" "$USER_FILES" || echo "$file" >>"$USER_FILES"
	((missing)) || return 0
	for anchor in "$@"; do
		grep -qE "$anchor" "$file" || continue
		PAT=$anchor TEXT=$(printf '%b' "$text") awk '{ print } !done && $0 ~ ENVIRON["PAT"] { print ENVIRON["TEXT"]; done = 1 }' \
			"$file" >"$file.new"
		mv "$file.new" "$file"
		return 0
	done
	fail "$file has no line matching $* to add the user's code after"
}

# user_code: the user's edits, where they are missing: in the release's files, and again in the
# current templates' where a conflict of the update was resolved for the templates (see below).
user_code() {
	local webhook=internal/webhook/v1/memcached_webhook.go obj=obj
	# The types: a field.
	edit api/v1/memcached_types.go '\t// Size is the number of memcached pods (user code).\n\tSize int32 `json:"size,omitempty"`' \
		'^type MemcachedSpec struct'
	# The reconciler logs the request.
	edit internal/controller/memcached_controller.go \
		'\tctrl.LoggerFrom(ctx).Info("user code: reconciling Memcached", "request", req.NamespacedName)' \
		'^func \(r \*MemcachedReconciler\) Reconcile\('
	# The defaulting webhook sets the size (in api/ before Kubebuilder v4.3, as a method of the type).
	if [[ -f api/v1/memcached_webhook.go ]]; then
		webhook=api/v1/memcached_webhook.go obj=r
	elif grep -q 'memcached, ok := obj' "$webhook"; then
		obj=memcached
	fi
	edit "$webhook" "\\tif $obj.Spec.Size == 0 {\\n\\t\\t$obj.Spec.Size = 1 // user code: the default size\\n\\t}" \
		'memcachedlog.Info\("Defaulting for Memcached"' '^func \((r|d) \*Memcached[A-Za-z]*\) Default\('
	# ... and its test says so, in Kubebuilder's skeleton (v4.3 on) or in the current template's.
	webhook=internal/webhook/v1/memcached_webhook_test.go
	if [[ -f $webhook ]] && grep -q 'Context("When creating Memcached under Defaulting Webhook"' "$webhook"; then
		edit "$webhook" '\t\tIt("sets the default size (user code)", func() {\n\t\t\tExpect(defaulter.Default(ctx, obj)).To(Succeed())\n\t\t\tExpect(obj.Spec.Size).To(Equal(int32(1)))\n\t\t})' \
			'Context\("When creating Memcached under Defaulting Webhook"'
	elif [[ -f $webhook && ! -f api/v1/memcached_webhook.go ]]; then
		edit "$webhook" '\t\tIt("sets the default size (user code)", func() {\n\t\t\tobj := &cachev1.Memcached{}\n\t\t\tExpect((&MemcachedDefaulter{}).Default(ctx, obj)).To(Succeed())\n\t\t\tExpect(obj.Spec.Size).To(Equal(int32(1)))\n\t\t})' \
			'Context\("defaulting", func\(\) \{'
	fi
	# main.go says hello.
	edit cmd/main.go '\tsetupLog.Info("user code: the shop operator starts")' '^[[:space:]]+ctrl\.SetLogger\('
}

# user_lines_kept WHEN: every recorded user line is in its file.
user_lines_kept() {
	local entry file line missing=0
	while IFS= read -r entry; do
		file=${entry%%$'\t'*} line=${entry#*$'\t'}
		if [[ ! -f $file ]] || ! grep -qxF -- "$line" "$file"; then
			log_error "$RELEASE ($1): the user's line is gone from $file: $line"
			missing=1
		fi
	done <"$USER_LINES"
	((missing == 0)) || fail "$RELEASE: user code lost $1"
}

# update_project DIR FROM_FLAG...: run `opbuilder alpha update` in DIR with the release's
# kubebuilder on PATH; writes DIR.update.log, sets UPDATE_RC.
update_project() {
	local dir=$1
	shift
	set +e
	(cd "$dir" && PATH="$(dirname "$KB"):$PATH" "$NEW" alpha update "$@") >"$dir.update.log" 2>&1
	UPDATE_RC=$?
	set -e
	log_info "$RELEASE: alpha update in $(basename "$dir") exited $UPDATE_RC:"
	sed 's/^/    /' "$dir.update.log" >&2
	grep -q "^note: the base of the merge is this project scaffolded again from PROJECT by Kubebuilder $RELEASE " "$dir.update.log" ||
		fail "$RELEASE: the update did not say it scaffolded the base with Kubebuilder $RELEASE"
	grep -q "^cliVersion: $OP_VERSION\$" "$dir/PROJECT" || fail "$RELEASE: PROJECT's cliVersion is not $OP_VERSION after the update"
}

# create_webhook: opbuilder's create webhook for the third kind.
create_webhook() {
	"$NEW" create webhook --group cache --version v1 --kind Valkey --defaulting --skip-post-steps >"$base/create-webhook.log" 2>&1 ||
		fail "$RELEASE: opbuilder create webhook: $(cat "$base/create-webhook.log")"
	user_lines_kept "after opbuilder create webhook"
}

OP_VERSION=$("$NEW" version | head -1 | cut -d' ' -f2)
for RELEASE in "${RELEASES[@]}"; do
	t0=$SECONDS
	KB=$(kb_binary "$RELEASE")
	base="$work/$RELEASE"
	log_info "$RELEASE: Kubebuilder makes the project ($KB)"
	scaffold "$RELEASE" "$KB" "$base/project"
	from=()
	grep -q '^cliVersion:' "$base/project/PROJECT" || from=(--from-version "$RELEASE")

	# ------------------------------------------------------------ 2. pristine
	git clone -q "$base/project" "$base/pristine"
	update_project "$base/pristine" "${from[@]}"
	((UPDATE_RC == 0)) || fail "$RELEASE: the update of the untouched project exited $UPDATE_RC (conflicts: $(cd "$base/pristine" && grep -rl '^<<<<<<< yours$' --exclude-dir=.git . | xargs))"
	case "$RELEASE" in
	"$OLDEST")
		grep -q "Kubebuilder $RELEASE (.*/opbuilder/kubebuilder/$RELEASE/kubebuilder, built \(now\|before\))" "$base/pristine.update.log" ||
			fail "$RELEASE: opbuilder did not build the release itself (it reports no version on PATH)"
		;;
	*) grep -q "Kubebuilder $RELEASE ($KB, on PATH)" "$base/pristine.update.log" || fail "$RELEASE: the kubebuilder on PATH was not used" ;;
	esac
	"$NEW" alpha generate --input-dir "$base/pristine" --output-dir "$base/generated" >"$base/generated.log" 2>&1 ||
		fail "$RELEASE: alpha generate: $(cat "$base/generated.log")"
	# Only what is no template may differ: go.mod (its pins raised, `go mod tidy`'s requires
	# kept), go.sum, PROJECT (the user's, and alpha generate records the core type's `core: true`),
	# the helm chart's input (dist/install.yaml, made by make), directories the update emptied.
	diff -r -x .git -x go.mod -x go.sum -x PROJECT -x install.yaml -I '^// +kubebuilder:storageversion$' \
		"$base/generated" "$base/pristine" >"$base/pristine.diff" 2>&1 || true
	while IFS= read -r line; do
		# A directory whose files the update removed stays, empty.
		if [[ $line =~ ^Only\ in\ (.*/pristine[^:]*):\ (.*)$ ]]; then
			d="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
			[[ -d $d && -z $(find "$d" -type f) ]] && continue
		fi
		fail "$RELEASE: the updated untouched project is not what alpha generate writes:
$(head -60 "$base/pristine.diff")"
	done <"$base/pristine.diff"
	log_info "PASS $RELEASE pristine: updated cleanly to exactly the current templates"

	# ------------------------------------------------------------ 2b. certs (the newest release)
	# opbuilder's certs plugin turned on in the untouched project, whose webhooks use cert-manager
	# (issue 48): `edit` writes into Kubebuilder's cmd/main.go, the project builds; `alpha update`
	# then merges without a conflict (the base gets the same edit) and moves the webhooks to the
	# manager's own certificate: config/default renders nothing of cert-manager.
	if [[ $RELEASE == "$NEWEST" ]]; then
		git clone -q "$base/project" "$base/certs"
		for plugin in certs/v1-alpha telemetry/v1-alpha; do
			(cd "$base/certs" && "$NEW" edit --plugins=$plugin) >>"$base/certs-edit.log" 2>&1 ||
				fail "$RELEASE: opbuilder edit --plugins=$plugin: $(cat "$base/certs-edit.log")"
		done
		commit "$base/certs" "certs and telemetry"
		update_project "$base/certs" "${from[@]}"
		((UPDATE_RC == 0)) || fail "$RELEASE: the update after edit --plugins=certs/v1-alpha and telemetry/v1-alpha exited $UPDATE_RC (conflicts: $(cd "$base/certs" && grep -rl '^<<<<<<< yours$' --exclude-dir=.git . | xargs))"
		(
			cd "$base/certs"
			go mod tidy
			"$here/seed-tools.sh" .
			make build
			kubectl kustomize config/default >"$base/certs-rendered.yaml"
		) >"$base/certs-build.log" 2>&1 || fail "$RELEASE: certs: go mod tidy, make build, kustomize: $(tail -40 "$base/certs-build.log")"
		! grep -n 'cert-manager' "$base/certs-rendered.yaml" >&2 || fail "$RELEASE: certs: config/default still renders cert-manager (above)"
		grep -q -- '--webhook-cert-secret=webhook-server-cert' "$base/certs-rendered.yaml" ||
			fail "$RELEASE: certs: the manager does not get --webhook-cert-secret"
		[[ $(grep -c 'webhookcerts.SetupCluster(' "$base/certs/cmd/main.go") == 1 ]] ||
			fail "$RELEASE: certs: cmd/main.go does not set up the certificate exactly once"
		[[ $(grep -c 'telemetry.Setup(' "$base/certs/cmd/main.go") == 1 ]] ||
			fail "$RELEASE: telemetry: cmd/main.go does not set up telemetry exactly once"
		[[ $(grep -c '^- loglevel_editor_role.yaml$' "$base/certs/config/rbac/kustomization.yaml") == 1 ]] ||
			fail "$RELEASE: telemetry: config/rbac/kustomization.yaml does not list the log-level role exactly once"
		log_info "PASS $RELEASE certs and telemetry: edit --plugins=certs/v1-alpha and telemetry/v1-alpha in Kubebuilder's project, alpha update without a conflict, make build, no cert-manager in config/default, each set up once"
	fi

	# ------------------------------------------------------------ 3. user code
	cd "$base/project"
	scaffolded=$(git rev-parse HEAD)
	USER_LINES="$base/user-lines" USER_FILES="$base/user-files"
	: >"$USER_LINES"
	: >"$USER_FILES"
	# (Kubebuilder's deploy-image leaves main.go unformatted when its post-step make does not run.)
	unformatted=$(gofmt -l api internal cmd)
	user_code
	[[ $(gofmt -l api internal cmd) == "$unformatted" ]] || fail "the user code is not gofmt-clean: $(gofmt -l api internal cmd)"
	commit . "user code"
	"$NEW" create api --group cache --version v1 --kind Valkey --resource --controller --skip-post-steps >"$base/create-api.log" 2>&1 ||
		fail "$RELEASE: opbuilder create api: $(cat "$base/create-api.log")"
	user_lines_kept "after opbuilder create api"
	# In the layouts before Kubebuilder v4.7 (no config/network-policy/, no e2e webhook markers),
	# create webhook leaves those parts out and says so (issue 45, item 1); the update brings them.
	create_webhook
	if [[ ! -f config/network-policy/kustomization.yaml ]]; then
		grep -q '^note: left out' "$base/create-webhook.log" ||
			fail "$RELEASE: create webhook in a project without config/network-policy/ said nothing left out: $(cat "$base/create-webhook.log")"
	fi
	if ((${#from[@]})); then
		# No cliVersion (Kubebuilder before v4.6): the update workflow needs one, and the edit says
		# so; the user adds it as told (without the v, as Kubebuilder writes it).
		! "$NEW" edit --plugins=autoupdate/v1-alpha >"$base/edit.log" 2>&1 ||
			fail "$RELEASE: opbuilder edit --plugins=autoupdate/v1-alpha without cliVersion succeeded"
		grep -q 'Add `cliVersion: <version>` to PROJECT' "$base/edit.log" || fail "$RELEASE: opbuilder edit: $(cat "$base/edit.log")"
		sed -i "1i cliVersion: ${RELEASE#v}" PROJECT
		from=()
	fi
	"$NEW" edit --plugins=autoupdate/v1-alpha >"$base/edit.log" 2>&1 || fail "$RELEASE: opbuilder edit: $(cat "$base/edit.log")"
	user_lines_kept "after opbuilder edit"
	commit . "opbuilder create api, create webhook, edit"
	before=$(git rev-parse HEAD)
	update_project "$base/project" "${from[@]}"
	conflicted=$(grep -rl '^<<<<<<< yours$' --exclude-dir=.git . | sed 's|^\./||' | sort || true)
	for f in $conflicted; do
		mkdir -p "$base/conflicts/$(dirname "$f")"
		cp "$f" "$base/conflicts/$f"
	done
	if [[ -n $conflicted ]]; then
		((UPDATE_RC == 1)) || fail "$RELEASE: conflicts but exit $UPDATE_RC"
		# Only where the project differs from Kubebuilder's scaffold: the user's edits, and what
		# opbuilder's commands added to Kubebuilder's files (in its own words and order).
		changed=$(git diff --name-only "$scaffolded" "$before")
		for f in $conflicted; do
			grep -qxF "$f" <<<"$changed" ||
				fail "$RELEASE: conflict in $f, which is as Kubebuilder scaffolded it (it must merge cleanly)"
			grep -q "CONFLICT.* $f\$" "$base/project.update.log" || fail "$RELEASE: $f has conflict markers but is not listed"
		done
	else
		((UPDATE_RC == 0)) || fail "$RELEASE: alpha update exited $UPDATE_RC without conflicts"
	fi
	user_lines_kept "by opbuilder alpha update"
	# Resolved as a user would: Kubebuilder's text and opbuilder's differ throughout a file (the same
	# interface in other words), so keeping the user's side of a region can leave the user's lines
	# next to helpers the new template renamed outside it. Each conflict takes the template's side,
	# and the user's code goes back into it (user_code adds what is missing).
	for f in $conflicted; do
		keep_theirs "$f"
	done
	# Kubebuilder before v4.3 kept the webhooks and their suite in api/v1/; the update keeps those
	# that differ from the base (the user's webhook, and the suite, which the base's replay extended
	# with the webhook opbuilder created in internal/webhook/v1/) and names where the templates
	# write them now. The user does what the note says: the code moves (user_code puts it back
	# into the new file), the old file goes.
	if [[ $RELEASE == "$OLDEST" ]]; then
		grep -q "^note: api/v1/memcached_webhook.go: .*move your code into internal/webhook/v1/memcached_webhook.go" "$base/project.update.log" ||
			fail "$RELEASE: the update did not say where the webhook moved"
	fi
	sed -n 's/^note: \([^ ]*\): the .* templates no longer write it but .* instead, and you changed it; .*/\1/p' \
		"$base/project.update.log" >"$base/moved"
	while read -r f; do
		git rm -q "$f"
	done <"$base/moved"
	# A file the new templates add that the project has already is kept, and the note points to
	# `alpha generate` for the template's: opbuilder's create webhook wrote
	# internal/webhook/v1/webhook_suite_test.go for its own webhook in an older layout, and the
	# template's sets up every webhook of the project. The user takes the template's where they did
	# not write the file.
	sed -n 's/^note: \([^ ]*\): the .* templates add this file, and you have one already; yours is kept .*/\1/p' \
		"$base/project.update.log" >"$base/added"
	if [[ -s $base/added ]]; then
		"$NEW" alpha generate --output-dir "$base/template" >"$base/template.log" 2>&1 ||
			fail "$RELEASE: alpha generate after the update: $(cat "$base/template.log")"
		while read -r f; do
			grep -qxF "$f" "$USER_FILES" || cp "$base/template/$f" "$f"
		done <"$base/added"
	fi
	: >"$USER_LINES"
	user_code
	log_info "$RELEASE: go mod tidy, make build$([[ $TESTED == *" $RELEASE "* ]] && echo ', make test')"
	go mod tidy >"$base/tidy.log" 2>&1 || fail "$RELEASE: go mod tidy after the update: $(tail -20 "$base/tidy.log")"
	"$here/seed-tools.sh" .
	make build >"$base/make-build.log" 2>&1 || fail "$RELEASE: make build: $(tail -40 "$base/make-build.log")"
	if [[ $TESTED == *" $RELEASE "* ]]; then
		"$here/link-envtest.sh" .
		make test >"$base/make-test.log" 2>&1 || fail "$RELEASE: make test: $(tail -60 "$base/make-test.log")"
	fi
	user_lines_kept "after make"
	commit . "updated to opbuilder $OP_VERSION"
	"$NEW" alpha check >"$base/check.log" 2>&1 || fail "$RELEASE: alpha check after the update: $(cat "$base/check.log")"
	log_info "PASS $RELEASE: opbuilder's create api, create webhook and edit, then alpha update: user code kept, $([[ $TESTED == *" $RELEASE "* ]] && echo 'make build and make test pass' || echo 'make build passes'), alpha check clean ($(fmt_duration $((SECONDS - t0))))"
	cd "$work"
done
if [[ -n ${OPBUILDER_KEEP_WORK:-} ]]; then
	log_info "kept $work (OPBUILDER_KEEP_WORK)"
else
	rm -rf "$work"
fi
log_info "kubebuilder-releases: all checks passed (${RELEASES[*]})"
