#!/usr/bin/env bash
# Faults that need the real binary, real signals or root (the fast ones are in e2e/faults.rs):
#
#   1. kill -9 at random points: RUNS (default 120) runs of `create api`, slowed down between
#      steps (OPBUILDER_STEP_DELAY_MS, debug builds only) and killed after a random delay. After
#      the next command (another `create api`), the tree must be exactly the old tree plus that
#      command's work, or the killed command's work plus it: nothing half-applied, no stray file.
#   2. ENOSPC for real (root only): a tmpfs with too few inodes, then too few pages, at every
#      size between "nothing fits" and "everything fits". `create api` either succeeds with the
#      complete tree or fails with the tree byte-identical to before.
#   3. Concurrency, built: 8 `create api` started together, for 2 rounds; every kind is in
#      PROJECT and cmd/main.go, and (with Go) the project passes `make generate` and
#      `go build ./...`.
#
# Usage: faults.sh [RUNS]
# Needs: cargo. As root it needs mount/umount and fails if it cannot mount a tmpfs; as another
# user it skips part 2 and says so.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

runs=${1:-120}
need_cmd cargo find sort md5sum
start=$SECONDS
log_info "building opbuilder (debug: it has the failure seam)"
cargo build --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
bin="$OPBUILDER_TARGET_DIR/debug/opbuilder"
work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-faults.XXXXXX")
mnt="$work/mnt"
cleanup() {
	if mountpoint -q "$mnt" 2>/dev/null; then umount "$mnt" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
export OPBUILDER_TEST_VERSION=0.0.0-test SOURCE_DATE_EPOCH=1767225600
unset OPBUILDER_FAILPOINT OPBUILDER_CRASHPOINT OPBUILDER_FAIL_ROLLBACK OPBUILDER_STEP_DELAY_MS

# manifest DIR: every path with its type, mode, link target and content hash, sorted.
manifest() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %p %l\n' | sort && find . -type f -print0 | sort -z | xargs -0 -r md5sum)
}

api() { # api DIR KIND [extra env...]
	local dir=$1 kind=$2
	shift 2
	(cd "$dir" && env "$@" "$bin" create api --group fleet --version v1 --kind "$kind" \
		--resource --controller --skip-post-steps >/dev/null 2>"$work/last.err")
}

base="$work/base"
mkdir -p "$base/guestbook"
base="$base/guestbook"
(cd "$base" && "$bin" init --domain example.com --repo example.com/guestbook --skip-post-steps >/dev/null)
api "$base" Schooner || die "setting up the base project: $(cat "$work/last.err")"

# The two acceptable end states of the kill loop, computed without faults.
ref_next="$work/ref-next/guestbook"
ref_both="$work/ref-both/guestbook"
mkdir -p "$ref_next" "$ref_both"
cp -a "$base/." "$ref_next/"
cp -a "$base/." "$ref_both/"
api "$ref_next" Ketch || die "reference run failed"
api "$ref_both" Brig || die "reference run failed"
api "$ref_both" Ketch || die "reference run failed"
manifest "$ref_next" >"$work/ref-next.txt"
manifest "$ref_both" >"$work/ref-both.txt"

log_info "kill -9 loop: $runs runs"
killed=0 rolled_back=0 committed=0 failures=0
for ((i = 1; i <= runs; i++)); do
	d="$work/run/guestbook"
	rm -rf "$work/run"
	mkdir -p "$d"
	cp -a "$base/." "$d/"
	(cd "$d" && exec env OPBUILDER_STEP_DELAY_MS=3 "$bin" create api --group fleet --version v1 \
		--kind Brig --resource --controller --skip-post-steps >/dev/null 2>&1) &
	pid=$!
	# create api takes ~100 steps of 3 ms: kill anywhere from before the first to after the last.
	sleep "0.$(printf '%03d' $((RANDOM % 450)))"
	if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
	wait "$pid" 2>/dev/null || true
	if ! api "$d" Ketch; then
		log_error "run $i: the next command failed: $(cat "$work/last.err")"
		failures=$((failures + 1))
		continue
	fi
	grep -q "rolled back" "$work/last.err" && rolled_back=$((rolled_back + 1))
	manifest "$d" >"$work/now.txt"
	if cmp -s "$work/now.txt" "$work/ref-next.txt"; then
		:
	elif cmp -s "$work/now.txt" "$work/ref-both.txt"; then
		committed=$((committed + 1))
	else
		log_error "run $i: the tree is neither old+next nor killed+next:"
		diff "$work/ref-next.txt" "$work/now.txt" | head -20 >&2 || true
		failures=$((failures + 1))
	fi
done
log_info "kill loop: $killed killed mid-run, $rolled_back rolled back by the next command, $committed had committed, $failures failures"
[[ $failures -eq 0 ]] || die "kill -9 loop: $failures of $runs runs left a wrong tree"
[[ $rolled_back -ge 10 ]] || die "kill -9 loop: only $rolled_back runs were killed mid-transaction; the timing no longer reaches the transaction"

if [[ $(id -u) -ne 0 ]]; then
	log_warn "SKIPPED the ENOSPC part: it mounts a tmpfs and needs root (CI runs it as root)"
else
	need_cmd mount umount mountpoint
	mkdir -p "$mnt"
	ref="$work/ref-one/guestbook"
	mkdir -p "$ref"
	cp -a "$base/." "$ref/"
	api "$ref" Brig || die "reference run failed"
	manifest "$base" >"$work/base.txt"
	manifest "$ref" >"$work/ref-one.txt"
	nfiles=$(find "$base" | wc -l)
	# check_enospc LABEL MOUNT-OPTIONS [FILL-KIB]: one create api on a fresh tmpfs.
	check_enospc() {
		local label=$1 opts=$2 fill=${3:-}
		mount -t tmpfs -o "$opts" tmpfs "$mnt" || die "cannot mount a tmpfs ($opts) as root"
		local d="$mnt/guestbook"
		if ! mkdir -p "$d" || ! cp -a "$base/." "$d/" 2>/dev/null; then
			umount "$mnt"
			return 2 # the base project itself does not fit
		fi
		if [[ -n $fill ]]; then
			# Take all but FILL KiB of what is left.
			local avail
			avail=$(df -k --output=avail "$mnt" | tail -1)
			if ((avail > fill)); then
				head -c "$(((avail - fill) * 1024))" /dev/zero >"$mnt/filler" 2>/dev/null || true
			fi
		fi
		local rc=0
		api "$d" Brig || rc=$?
		rm -f "$mnt/filler"
		manifest "$d" >"$work/now.txt"
		umount "$mnt"
		if [[ $rc -eq 0 ]]; then
			cmp -s "$work/now.txt" "$work/ref-one.txt" || {
				diff "$work/ref-one.txt" "$work/now.txt" | head >&2
				die "ENOSPC $label: success but the tree is not the complete one"
			}
			return 0
		fi
		grep -qi "no space\|quota\|inode" "$work/last.err" ||
			die "ENOSPC $label: failed for another reason: $(cat "$work/last.err")"
		cmp -s "$work/now.txt" "$work/base.txt" || {
			diff "$work/base.txt" "$work/now.txt" | head >&2
			die "ENOSPC $label: failed and left a changed tree: $(cat "$work/last.err")"
		}
		return 1
	}
	log_info "ENOSPC: too few inodes"
	enospc=0 fitted=0
	for ((n = nfiles; n <= nfiles + 40; n++)); do
		rc=0
		check_enospc "nr_inodes=$n" "size=64m,nr_inodes=$n" || rc=$?
		case $rc in 0) fitted=$((fitted + 1)) ;; 1) enospc=$((enospc + 1)) ;; esac
	done
	log_info "inodes: $enospc runs hit ENOSPC (tree intact), $fitted fitted"
	[[ $enospc -ge 5 && $fitted -ge 1 ]] || die "the inode sweep did not cover both outcomes ($enospc ENOSPC, $fitted fitted)"
	log_info "ENOSPC: too few blocks"
	enospc=0 fitted=0
	for ((k = 0; k <= 200; k += 8)); do
		rc=0
		check_enospc "free=${k}KiB" "size=16m,nr_inodes=4096" "$k" || rc=$?
		case $rc in 0) fitted=$((fitted + 1)) ;; 1) enospc=$((enospc + 1)) ;; esac
	done
	log_info "blocks: $enospc runs hit ENOSPC (tree intact), $fitted fitted"
	[[ $enospc -ge 5 && $fitted -ge 1 ]] || die "the block sweep did not cover both outcomes ($enospc ENOSPC, $fitted fitted)"
fi
log_info "concurrency: 8 parallel create api, 2 rounds, then the project must build"
par="$work/par/fleet"
mkdir -p "$par"
(cd "$par" && "$bin" init --domain example.com --repo example.com/fleet --skip-post-steps >/dev/null)
kinds=()
for round in 1 2; do
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		k="Ship${round}x${i}"
		kinds+=("$k")
		(cd "$par" && OPBUILDER_LOCK_TIMEOUT=120 "$bin" create api --group fleet --version v1 --kind "$k" \
			--resource --controller --skip-post-steps >/dev/null 2>"$work/par-$k.err") &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || die "a parallel create api failed: $(cat "$work"/par-*.err)"
	done
done
for k in "${kinds[@]}"; do
	grep -q "^  kind: $k\$" "$par/PROJECT" || die "$k is missing from PROJECT"
	grep -q "${k}Reconciler{" "$par/cmd/main.go" || die "$k is missing from cmd/main.go"
done
if command -v go >/dev/null 2>&1; then
	# `set -e` does not apply inside a subshell tested with `||`: chain the steps explicitly.
	(
		cd "$par" &&
			{ go mod tidy >/dev/null 2>&1 || go mod tidy; } &&
			"$OPBUILDER_ROOT/e2e/scripts/seed-tools.sh" "$par" &&
			make generate >/dev/null &&
			go build ./...
	) || die "the project made by parallel commands does not build"
	log_info "concurrency: ${#kinds[@]} kinds recorded, and the project builds"
elif [[ -n ${CI:-} ]]; then
	die "Go is needed in CI to build the project made by parallel commands"
else
	log_warn "concurrency: ${#kinds[@]} kinds recorded; Go not found, so the build was not checked"
fi

log_info "faults passed in $(fmt_duration $((SECONDS - start)))"
