#!/usr/bin/env bash
# alpha update end to end (issues 10, 21 and 33), for every earlier release (0.1.0 to 0.4.0):
#
#  1. Each release is reproduced exactly. opbuilder is built at the release commit (cached by
#     commit in $E2E_CACHE/opbuilder-<commit>); for each golden command script of that commit,
#     the old binary makes project A; `opbuilder alpha generate --templates-version <release>`
#     scaffolds A's PROJECT again (B) with the embedded templates of that release; the old binary
#     replays the same commands (C); B and C must be identical file by file.
#  2. Upgrade: a project made by each release's binary (post-steps included) with user code,
#     committed to git, is updated by `opbuilder alpha update`: from 0.1.0 the MyCronJob of
#     docs/tutorial.md (plus a scaffolded v2 spoke and a conversion webhook), from 0.2.0, 0.3.0
#     and 0.4.0 the App fixtures of e2e/fixtures/app. Conflicts are only in the user's own files;
#     they are resolved in favour of the user's code. Then: the user code is still there, go.mod requires
#     the current controller-runtime, the template fixes arrived (0.1.0: the conversion CA
#     injection renders <ns>/<project>-serving-cert in `kubectl kustomize config/default`;
#     0.2.0: the manager takes --webhook-port from the webhook patch; 0.3.0: the manager's
#     /readyz checks the webhook server and .custom-gcl.yml arrives), `make generate manifests
#     build test` passes on the envtest control plane, and `opbuilder alpha check` is clean (it
#     was not before the update).
#  3. Rust: a project of the Rust layout made by 0.4.0 (rust.opbuilder.io/v1-alpha) with the
#     App of docs/rust-tutorial.md as 0.4.0 had it (a field added to the types, the controller
#     and the webhooks written against 0.4.0's templates: webhook files without the markers that
#     merging a webhook type needs) is updated the same way: user code kept, PROJECT's layout
#     moved to rust.opbuilder.io/v1-beta, the user's own upgrade of their code done as
#     CHANGELOG.md's "Upgrading from 0.4.0" says (rust-user-upgrade.py: a kept finalizer's verbs,
#     an import the merge took away, async webhook handlers), the user's license header (hack/boilerplate.go.txt,
#     edited) moved to hack/boilerplate.rs.txt, every marker line of the new webhook templates
#     either in the user's resolved files or named by a note of the update, Cargo.lock written by
#     the update's post-step `cargo generate-lockfile` (0.4.0 wrote none; the new Dockerfile
#     builds with --locked), `make manifests test CARGO_FLAGS=--locked` (cargo build, unit tests
#     and the integration tests on the envtest control plane) passes, `alpha check` clean.
#
# Needs: git with the history of the release commit, cargo, go, make, kubectl (and crates.io or
# a warm cargo cache for the Rust project).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
need_cmd git cargo go make kubectl flock

# Each earlier release and the commit it was made from.
RELEASES=(0.1.0:647f151 0.2.0:14a3679 0.3.0:cb18620 0.4.0:6e8ae6c)
NEW=${OPBUILDER_BIN:-$OPBUILDER_TARGET_DIR/debug/opbuilder}
[[ -x $NEW ]] || die "build opbuilder first (cargo build): $NEW"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
unset OPBUILDER_TEST_VERSION

# release_binary RELEASE COMMIT: build (once, cached by commit) and print the release's binary.
release_binary() {
	local release=$1 commit=$2 dir="$E2E_CACHE/opbuilder-$2" src
	git -C "$OPBUILDER_ROOT" cat-file -e "$commit^{commit}" 2>/dev/null ||
		die "commit $commit (release $release) is not in this clone; fetch the full history (git fetch --unshallow)"
	mkdir -p "$E2E_CACHE"
	exec 9>"$E2E_CACHE/.opbuilder-releases.lock" # one build at a time in release-target
	flock 9
	if [[ ! -x $dir/opbuilder ]]; then
		log_info "building opbuilder $release at $commit (once; cached in $dir)"
		src=$(mktemp -d)
		git -C "$OPBUILDER_ROOT" worktree add --quiet --detach "$src/tree" "$commit"
		# Their dependencies mostly agree with each other's and with this checkout's, so they are
		# compiled in this checkout's cargo build directory (CARGO_BUILD_BUILD_DIR), where
		# `cargo build` of e2e/run.sh has just compiled them: a cold 0.1.0 compiled 8 crates in
		# 13 s there, against 3 min 21 s in a directory of its own. The binaries go to a target
		# directory of their own (--target-dir), never over this checkout's target/debug/opbuilder.
		CARGO_BUILD_BUILD_DIR=$OPBUILDER_TARGET_DIR nice cargo build --quiet --locked \
			--manifest-path "$src/tree/Cargo.toml" --target-dir "$E2E_CACHE/release-target" ||
			{
				git -C "$OPBUILDER_ROOT" worktree remove --force "$src/tree" >/dev/null 2>&1 || true
				rm -rf "$src"
				die "building opbuilder $release at $commit failed"
			}
		mkdir -p "$dir"
		cp "$E2E_CACHE/release-target/debug/opbuilder" "$dir/opbuilder.tmp"
		mv "$dir/opbuilder.tmp" "$dir/opbuilder"
		git -C "$OPBUILDER_ROOT" worktree remove --force "$src/tree" >/dev/null
		rm -rf "$src"
	fi
	flock -u 9
	# Read whole: the releases before 0.3.0 panic when stdout closes early (`| head -1`).
	local said
	said=$("$dir/opbuilder" version) || die "$dir/opbuilder version failed"
	[[ ${said%%$'\n'*} == "opbuilder $release"* ]] || die "$dir/opbuilder is not opbuilder $release"
	printf '%s\n' "$dir/opbuilder"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-alpha-update.XXXXXX")
log_info "work directory: $work"

fail() {
	log_error "$*"
	exit 1
}

# run_script BIN DIR FILE: run the `opbuilder ...` lines of FILE in DIR with BIN.
run_script() {
	local bin=$1 dir=$2 file=$3
	mkdir -p "$dir"
	(cd "$dir" && OB=$bin bash -euo pipefail <(sed -e '/^#/d' -e 's/^opbuilder /"$OB" /' "$file")) \
		>"$dir.log" 2>&1 || fail "running $file with $bin failed: $(tail -5 "$dir.log")"
}

# same_as_release NAME SCRIPT: the old binary's project and its regeneration agree.
same_as_release() {
	local name=$1 script=$2 a="$work/$1-made" b="$work/$1-regenerated" c="$work/$1-replayed"
	run_script "$OLD" "$a" "$script"
	"$NEW" alpha generate --templates-version "$RELEASE" --input-dir "$a" --output-dir "$b" >"$b.log" ||
		fail "alpha generate --templates-version $RELEASE failed for $name: $(cat "$b.log")"
	# The replayed commands, as the old binary takes them.
	sed -n 's/^  opbuilder //p' "$b.log" |
		sed -e 's/^/opbuilder /' -e '/^opbuilder \(init\|create\) /s/$/ --skip-post-steps/' >"$c.commands"
	[[ -s $c.commands ]] || fail "alpha generate listed no commands for $name"
	run_script "$OLD" "$c" "$c.commands"
	if ! diff -r "$b" "$c" >"$c.diff"; then
		fail "$name: the embedded $RELEASE templates do not reproduce the $RELEASE binary:\n$(head -60 "$c.diff")"
	fi
	log_info "PASS $name: regenerated with the embedded $RELEASE templates = made by opbuilder $RELEASE ($(find "$b" -type f | wc -l) files)"
}

# ---------------------------------------------------------------- 1. reproduce each release
declare -A OLD_BIN COMMIT
for entry in "${RELEASES[@]}"; do
	RELEASE=${entry%%:*}
	RELEASE_COMMIT=${entry#*:}
	OLD=$(release_binary "$RELEASE" "$RELEASE_COMMIT")
	OLD_BIN[$RELEASE]=$OLD
	COMMIT[$RELEASE]=$RELEASE_COMMIT
	scripts=0
	for t in $(git -C "$OPBUILDER_ROOT" ls-tree --name-only "$RELEASE_COMMIT" e2e/testdata/); do
		name=$(basename "$t")
		git -C "$OPBUILDER_ROOT" show "$RELEASE_COMMIT:$t/commands" >"$work/$RELEASE-golden-$name.commands" 2>/dev/null || continue
		same_as_release "$RELEASE-golden-$name" "$work/$RELEASE-golden-$name.commands"
		scripts=$((scripts + 1))
	done
	((scripts >= 4)) || fail "expected at least 4 golden scripts at $RELEASE_COMMIT, found $scripts"
done

# The two upgrade projects' command lists (without post-steps here: their files are the same).
cat >"$work/mycronjob.commands" <<'EOF'
opbuilder init --domain wzj.kubebuilder.io --repo wzj.kubebuilder.io/project --project-name project --skip-post-steps
opbuilder create api --group batch --version v1 --kind MyCronJob --resource --controller --skip-post-steps
opbuilder create webhook --group batch --version v1 --kind MyCronJob --defaulting --programmatic-validation --skip-post-steps
opbuilder create api --group batch --version v2 --kind MyCronJob --resource --controller=false --skip-post-steps
opbuilder create webhook --group batch --version v1 --kind MyCronJob --conversion --spoke v2 --skip-post-steps
EOF
cat >"$work/app.commands" <<'EOF'
opbuilder init --domain example.com --repo example.com/app-operator --project-name app-operator --skip-post-steps
opbuilder create api --group ingress --version v1beta1 --kind App --resource --controller --skip-post-steps
opbuilder create webhook --group ingress --version v1beta1 --kind App --defaulting --programmatic-validation --skip-post-steps
EOF
RELEASE=0.1.0 OLD=${OLD_BIN[0.1.0]}
same_as_release mycronjob "$work/mycronjob.commands"
RELEASE=0.2.0 OLD=${OLD_BIN[0.2.0]}
same_as_release app "$work/app.commands"
RELEASE=0.3.0 OLD=${OLD_BIN[0.3.0]}
same_as_release app-0.3.0 "$work/app.commands"
RELEASE=0.4.0 OLD=${OLD_BIN[0.4.0]}
same_as_release app-0.4.0 "$work/app.commands"
cat >"$work/rust-app.commands" <<'EOF'
opbuilder init --plugins=rust.opbuilder.io/v1-alpha --domain example.com --project-name app-upgrade
opbuilder create api --group ingress --version v1beta1 --kind App --resource --controller
opbuilder create webhook --group ingress --version v1beta1 --kind App --defaulting --programmatic-validation
EOF
same_as_release rust-app-0.4.0 "$work/rust-app.commands"

# ---------------------------------------------------------------- 2. upgrade with user code
export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=${KUBEBUILDER_CONTROLPLANE_START_TIMEOUT:-180s}
"$here/build-control-plane.sh" >/dev/null

# upgrade NAME COMMANDS USER_FILES_FN CHECK_FN [BEFORE_FN]: BEFORE_FN checks the old release's project
# as it renders after its `make generate manifests`, before the update.
upgrade() {
	local name=$1 commands=$2 user_code=$3 proj="$work/$1-project"
	log_info "$name: made by opbuilder $RELEASE (with post-steps), user code added, committed"
	run_script "$OLD" "$proj" <(sed 's/ --skip-post-steps$//' "$commands")
	cd "$proj"
	"$user_code"
	make generate manifests >"$work/$name-make-before.log" 2>&1 || fail "$name: make generate manifests before the update: $(tail -20 "$work/$name-make-before.log")"
	# An optional fifth argument checks what the old release's project renders.
	[[ -z ${5:-} ]] || "$5"
	git init -q . && git add -A && git -c user.name=e2e -c user.email=e2e@example.invalid commit -qm "made by opbuilder $RELEASE"
	local before
	before=$(git rev-parse HEAD)

	set +e
	"$NEW" alpha check >"$work/$name-check-before.log" 2>&1
	local rc=$?
	set -e
	[[ $rc == 1 ]] || fail "$name: alpha check before the update exited $rc, want 1: $(cat "$work/$name-check-before.log")"

	echo "// uncommitted" >>cmd/main.go
	set +e
	"$NEW" alpha update >"$work/$name-refused.log" 2>&1
	rc=$?
	set -e
	[[ $rc == 1 ]] && grep -q "uncommitted changes" "$work/$name-refused.log" ||
		fail "$name: alpha update in a dirty work tree: exit $rc, $(cat "$work/$name-refused.log")"
	git checkout -q cmd/main.go
	[[ -z $(git status --porcelain) ]] || fail "$name: the refused update touched files: $(git status --porcelain)"

	set +e
	"$NEW" alpha update >"$work/$name-update.log" 2>&1
	rc=$?
	set -e
	log_info "$name: alpha update exited $rc:"
	sed 's/^/    /' "$work/$name-update.log" >&2
	local conflicted
	conflicted=$(grep -rl '^<<<<<<< yours$' --exclude-dir=bin --exclude-dir=.git . | sed 's|^\./||' | sort || true)
	if [[ -n $conflicted ]]; then
		[[ $rc == 1 ]] || fail "$name: conflicts but exit $rc"
		local f
		for f in $conflicted; do
			grep -qxF "$f" "$work/$name-user-files" ||
				fail "$name: conflict in $f, which the user did not write (the template-only files must merge cleanly)"
			grep -q "CONFLICT.* $f\$" "$work/$name-update.log" || fail "$name: $f has markers but is not listed"
			keep_yours "$f"
		done
	else
		[[ $rc == 0 ]] || fail "$name: alpha update exited $rc without conflicts"
	fi
	grep -q "^cliVersion: $("$NEW" version | head -1 | cut -d' ' -f2)\$" PROJECT || fail "$name: PROJECT cliVersion not moved"
	local want_cr
	want_cr=$(pin scaffold.controller_runtime)
	grep -q "^	sigs.k8s.io/controller-runtime $want_cr\$\|^require sigs.k8s.io/controller-runtime $want_cr\$" go.mod ||
		fail "$name: go.mod does not require controller-runtime $want_cr after the update: $(grep controller-runtime go.mod)"
	# The user's files are the user's (the conflicts resolved for them are their code).
	local f
	while read -r f; do
		git diff --quiet "$before" -- "$f" || {
			# Taken whole before it is cut: `git diff | head` under pipefail fails the script
			# when git writes after head has left (SIGPIPE), as a diff of more than a buffer does.
			head -40 <<<"$(git diff "$before" -- "$f")" >&2
			log_info "$name: $f merged with template changes (above)"
		}
	done <"$work/$name-user-files"
	"$4"
	log_info "$name: make generate manifests build test"
	"$OPBUILDER_ROOT/e2e/scripts/link-envtest.sh" "$proj"
	# As the update's note says when go.mod's pins moved: tidy first.
	if grep -q "^note: go.mod: .*run \`go mod tidy\`" "$work/$name-update.log"; then
		go mod tidy >"$work/$name-tidy.log" 2>&1 || fail "$name: go mod tidy after the update: $(tail -20 "$work/$name-tidy.log")"
	fi
	make generate manifests build test >"$work/$name-make.log" 2>&1 || fail "$name: make generate manifests build test: $(tail -40 "$work/$name-make.log")"
	"$NEW" alpha check >"$work/$name-check.log" 2>&1 || fail "$name: alpha check after the update: $(cat "$work/$name-check.log")"
	log_info "PASS $name: updated $RELEASE -> current, user code kept, make generate manifests build test, alpha check clean"
	cd "$work"
}

mycronjob_code() {
	local f
	: >"$work/mycronjob-user-files"
	for f in api/v1/mycronjob_types.go internal/controller/mycronjob_controller.go \
		internal/controller/mycronjob_controller_test.go internal/webhook/v1/mycronjob_webhook.go \
		internal/webhook/v1/mycronjob_webhook_test.go config/samples/batch_v1_mycronjob.yaml; do
		"$here/tutorial.sh" --file "$f" >"$f" || fail "no block for $f in docs/tutorial.md"
		echo "$f" >>"$work/mycronjob-user-files"
	done
	# v1 is the conversion hub: keep the storage-version marker the conversion webhook added.
	sed -i 's|^type MyCronJob struct {|// +kubebuilder:storageversion\n&|' api/v1/mycronjob_types.go
	grep -q '+kubebuilder:storageversion' api/v1/mycronjob_types.go || fail "no storageversion marker"
	[[ -z $(gofmt -l api internal) ]] || fail "user code is not gofmt-clean"
	go get github.com/robfig/cron/v3@v3.0.1 >"$work/mycronjob-go-get.log" 2>&1 ||
		fail "go get robfig/cron: $(cat "$work/mycronjob-go-get.log")"
}

# crd_ca_injection: the cert-manager.io/inject-ca-from annotation of the CustomResourceDefinition
# in `kubectl kustomize config/default` (the webhook configurations carry one too, right in every
# release: a search of the whole output cannot tell whether the CRD's is). The output is read whole
# before it is searched: a `kubectl kustomize | grep -q` under pipefail fails when grep leaves
# before kubectl has written the rest (SIGPIPE).
crd_ca_injection() {
	local rendered
	rendered=$(kubectl kustomize config/default) || fail "mycronjob: kubectl kustomize config/default failed"
	awk '/^---$/ { if (crd) print v; crd = 0; v = ""; next }
		/^kind: CustomResourceDefinition$/ { crd = 1 }
		/^ +cert-manager\.io\/inject-ca-from: / { v = $2 }
		END { if (crd) print v }' <<<"$rendered"
}

# What 0.1.0 renders, with the CRD its `make manifests` wrote: the CRD's CA injection names the
# namespace twice, <ns>/<ns>, not the Certificate (the bug the update fixes).
mycronjob_before() {
	local got
	got=$(crd_ca_injection)
	[[ $got == project-system/project-system ]] ||
		fail "mycronjob: the 0.1.0 project's CRD has inject-ca-from '$got', not the bug's project-system/project-system; the check after the update would prove nothing"
}

mycronjob_check() {
	grep -q 'Schedule string `json:"schedule"`' api/v1/mycronjob_types.go || fail "mycronjob: the user's Schedule field is gone"
	grep -q 'ConcurrencyPolicy' internal/controller/mycronjob_controller.go || fail "mycronjob: the user's Reconcile is gone"
	local got
	got=$(crd_ca_injection)
	[[ $got == project-system/project-serving-cert ]] ||
		fail "mycronjob: the conversion CA injection fix did not arrive: the CRD's inject-ca-from is '$got'"
	log_info "mycronjob: user code kept; CRD annotated cert-manager.io/inject-ca-from: project-system/project-serving-cert"
}

app_code() {
	cp -R "$OPBUILDER_ROOT/e2e/fixtures/app/." .
	(cd "$OPBUILDER_ROOT/e2e/fixtures/app" && find . -type f | sed 's|^\./||') >"$work/$name-user-files"
}

app_check() {
	grep -q 'EnableIngress \*bool' api/v1beta1/app_types.go || fail "app: the user's EnableIngress field is gone"
	grep -q 'must be true when enable_ingress is true' internal/webhook/v1beta1/app_webhook.go ||
		fail "app: the user's validation is gone"
	# A template change of 0.3.0 that must arrive in a file the user did not touch.
	grep -q -- '--webhook-port=9443' config/default/manager_webhook_patch.yaml ||
		fail "app: the webhook patch did not gain --webhook-port"
	log_info "app: user code kept"
}

app_0_3_0_code() {
	app_code
	! grep -q 'StartedChecker' cmd/main.go || fail "app-0.3.0: the 0.3.0 project already checks the webhook server; the check below would prove nothing"
	[[ ! -e .custom-gcl.yml ]] || fail "app-0.3.0: the 0.3.0 project already has .custom-gcl.yml"
}

app_0_3_0_check() {
	app_check
	# Template changes since 0.3.0 that must arrive in files the user did not touch.
	grep -q 'mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker())' cmd/main.go ||
		fail "app-0.3.0: the manager's webhook readiness check did not arrive in cmd/main.go"
	grep -q 'sigs.k8s.io/logtools' .custom-gcl.yml || fail "app-0.3.0: .custom-gcl.yml did not arrive"
	log_info "app-0.3.0: user code kept; /readyz checks the webhook server; .custom-gcl.yml added"
}

RELEASE=0.1.0 OLD=${OLD_BIN[0.1.0]}
upgrade mycronjob "$work/mycronjob.commands" mycronjob_code mycronjob_check mycronjob_before
RELEASE=0.2.0 OLD=${OLD_BIN[0.2.0]}
upgrade app "$work/app.commands" app_code app_check
RELEASE=0.3.0 OLD=${OLD_BIN[0.3.0]}
upgrade app-0.3.0 "$work/app.commands" app_0_3_0_code app_0_3_0_check
RELEASE=0.4.0 OLD=${OLD_BIN[0.4.0]}
upgrade app-0.4.0 "$work/app.commands" app_code app_check
# ---------------------------------------------------------------- 3. a Rust project with user code
# upgrade_rust NAME COMMANDS: a Rust project made by $OLD with the tutorial's App, updated.
upgrade_rust() {
	local name=$1 commands=$2 proj="$work/$1-project" f rc
	log_info "$name: made by opbuilder $RELEASE, the App of docs/rust-tutorial.md added, committed"
	run_script "$OLD" "$proj" "$commands"
	cd "$proj"
	grep -qx -- '- rust.opbuilder.io/v1-alpha' PROJECT || fail "$name: the $RELEASE project does not record rust.opbuilder.io/v1-alpha"
	: >"$work/$name-user-files"
	# The user's code as the release's tutorial wrote it.
	git -C "$OPBUILDER_ROOT" show "$RELEASE_COMMIT:docs/rust-tutorial.md" >"$work/$name-tutorial.md"
	for f in src/api/ingress/v1beta1/app.rs src/controllers/app.rs tests/app_controller_test.rs \
		src/webhooks/ingress_v1beta1_app.rs tests/ingress_v1beta1_app_webhook_test.rs config/samples/ingress_v1beta1_app.yaml; do
		# The crate is app-upgrade, not the tutorial's app-operator: the Rust projects of the e2e
		# tests share one cargo target directory, where two packages of one name and version
		# (the tutorial's, built at the same time) would overwrite each other's artifacts.
		TUTORIAL_DOC="$work/$name-tutorial.md" "$here/tutorial.sh" --rust --file "$f" | sed 's/\bapp_operator\b/app_upgrade/g' >"$f" ||
			fail "no block for $f in docs/rust-tutorial.md"
		echo "$f" >>"$work/$name-user-files"
	done
	# The user's license text, in 0.4.0's hack/boilerplate.go.txt: the update moves it to
	# hack/boilerplate.rs.txt.
	[[ -f hack/boilerplate.go.txt ]] || fail "$name: the $RELEASE project has no hack/boilerplate.go.txt"
	sed -i 's/^Copyright YEAR.*/Copyright YEAR The App Upgrade Authors, all rights reserved./' hack/boilerplate.go.txt
	grep -q 'App Upgrade Authors' hack/boilerplate.go.txt || fail "$name: no Copyright line in hack/boilerplate.go.txt"
	cp hack/boilerplate.go.txt "$work/$name-boilerplate"
	git init -q . && git add -A && git -c user.name=e2e -c user.email=e2e@example.invalid commit -qm "made by opbuilder $RELEASE"
	local before
	before=$(git rev-parse HEAD)
	set +e
	"$NEW" alpha check >"$work/$name-check-before.log" 2>&1
	rc=$?
	set -e
	[[ $rc == 1 ]] || fail "$name: alpha check before the update exited $rc, want 1: $(cat "$work/$name-check-before.log")"
	set +e
	"$NEW" alpha update >"$work/$name-update.log" 2>&1
	rc=$?
	set -e
	log_info "$name: alpha update exited $rc:"
	sed 's/^/    /' "$work/$name-update.log" >&2
	local conflicted
	conflicted=$(grep -rl '^<<<<<<< yours$' --exclude-dir=target --exclude-dir=.git . | sed 's|^\./||' | sort || true)
	if [[ -n $conflicted ]]; then
		[[ $rc == 1 ]] || fail "$name: conflicts but exit $rc"
		for f in $conflicted; do
			grep -qxF "$f" "$work/$name-user-files" ||
				fail "$name: conflict in $f, which the user did not write (the template-only files must merge cleanly)"
			keep_yours "$f"
		done
	else
		[[ $rc == 0 ]] || fail "$name: alpha update exited $rc without conflicts"
	fi
	# What CHANGELOG.md's "Upgrading from 0.4.0" has the user do to their own code: the
	# templates' changes merged into it need their hand (a finalizer's verbs, an import the
	# merge took away, webhook handlers made async with a &Cluster).
	# shellcheck disable=SC2046 # one file a line, no spaces
	python3 "$here/rust-user-upgrade.py" $(cat "$work/$name-user-files") >"$work/$name-user-upgrade.log" ||
		fail "$name: rust-user-upgrade.py failed: $(cat "$work/$name-user-upgrade.log")"
	log_info "$name: the user's own upgrade of their code: $(tr '\n' ';' <"$work/$name-user-upgrade.log")"
	grep -q "^cliVersion: $("$NEW" version | head -1 | cut -d' ' -f2)\$" PROJECT || fail "$name: PROJECT cliVersion not moved"
	grep -qx -- '- rust.opbuilder.io/v1-beta' PROJECT ||
		fail "$name: PROJECT's layout did not move to rust.opbuilder.io/v1-beta: $(grep -A2 '^layout' PROJECT)"
	# The user's code is the user's (a conflict resolved for them is their code).
	while read -r f; do
		git diff --quiet "$before" -- "$f" || {
			# Taken whole before it is cut: `git diff | head` under pipefail fails the script
			# when git writes after head has left (SIGPIPE), as a diff of more than a buffer does.
			head -40 <<<"$(git diff "$before" -- "$f")" >&2
			log_info "$name: $f merged with template changes (above)"
		}
	done <"$work/$name-user-files"
	grep -q 'enable_ingress' src/api/ingress/v1beta1/app.rs || fail "$name: the user's field is gone"
	cmp -s "$work/$name-boilerplate" hack/boilerplate.rs.txt ||
		fail "$name: hack/boilerplate.rs.txt is not the user's license header: $(cat hack/boilerplate.rs.txt 2>&1)"
	[[ ! -e hack/boilerplate.go.txt ]] || fail "$name: the update left hack/boilerplate.go.txt"
	# The markers `create webhook` merges a second webhook type above: in the resolved files, or
	# named by the update, which says to keep them.
	local m file
	for m in src/webhooks/ingress_v1beta1_app.rs:webhook-configurations src/webhooks/ingress_v1beta1_app.rs:webhook-routes \
		src/webhooks/ingress_v1beta1_app.rs:webhook-handlers src/webhooks/ingress_v1beta1_app.rs:webhook-tests \
		tests/ingress_v1beta1_app_webhook_test.rs:webhook-checks; do
		file=${m%%:*} m=${m#*:}
		grep -q "// +kubebuilder:scaffold:$m\$" "$file" ||
			grep -q "^note: $file: .*\`+kubebuilder:scaffold:$m\`.*keep them" "$work/$name-update.log" ||
			fail "$name: $file lost the marker $m and the update did not say to keep it"
	done
	grep -q 'layout `rust.opbuilder.io/v1-beta`' README.md || fail "$name: the README's template change did not arrive"
	# The project had no Cargo.lock (0.4.0 wrote none) and the new Dockerfile builds with --locked:
	# the update's post-step wrote it, and every build below is --locked.
	grep -q '^\[1/1\] cargo generate-lockfile' "$work/$name-update.log" ||
		fail "$name: the update did not run cargo generate-lockfile"
	[[ -f Cargo.lock ]] || fail "$name: no Cargo.lock after the update"
	log_info "$name: make manifests test CARGO_FLAGS=--locked (cargo build, unit and integration tests)"
	"$OPBUILDER_ROOT/e2e/scripts/link-envtest.sh" "$proj"
	# In a subshell: use_rust_target unsets SOURCE_DATE_EPOCH, which opbuilder's runs here need.
	(use_rust_target && make manifests test CARGO_FLAGS=--locked >"$work/$name-make.log" 2>&1) ||
		fail "$name: make manifests test: $(tail -40 "$work/$name-make.log")"
	"$NEW" alpha check >"$work/$name-check.log" 2>&1 || fail "$name: alpha check after the update: $(cat "$work/$name-check.log")"
	log_info "PASS $name: updated $RELEASE -> current (rust.opbuilder.io/v1-alpha -> v1-beta), user code kept, make manifests test, alpha check clean"
	cd "$work"
}

RELEASE=0.4.0 RELEASE_COMMIT=${COMMIT[0.4.0]} OLD=${OLD_BIN[0.4.0]}
upgrade_rust rust-app-0.4.0 "$work/rust-app.commands"
rm -rf "$work"
log_info "alpha-update: all checks passed"
