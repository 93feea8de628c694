#!/usr/bin/env bash
# The instruction budget (issue 50): the instructions opbuilder executes for each command of
# e2e/instructions.toml, counted by valgrind's callgrind on a release build, against the figures
# recorded there. Counts, not times: they do not depend on the machine's load.
#
# Each command runs with post-steps off, in a fresh copy of its starting tree (at the same path
# every time, so that no path's length changes the count), with a fixed environment (env -i:
# PATH, HOME, SOURCE_DATE_EPOCH, an XDG_CONFIG_HOME that does not exist, LC_ALL=C), twice: the two
# counts must agree within REPEAT_PCT percent (they differ by a few thousand instructions: std's
# HashMap seeds its hashes at random, and the transaction's temporary names are random, so a few
# comparisons more or less), and the lower one is taken. The stage fails when
#
#   - a command takes more than its figure plus `tolerance` percent (e2e/instructions.toml): if
#     the growth is intended, update the figure in the same change and say why in CHANGELOG.md;
#   - a command's two counts disagree, or a command fails.
#
# A count more than `tolerance` percent under its figure is reported (lower the figure in the same
# change to keep the gain), not failed; so is the ratio of `create api` in a project of 200 kinds
# to a first `create api`, against issue 50's goal of 1.5.
#
# Usage: instructions.sh [--record]
#   --record   write the counts into e2e/instructions.toml (with the version of Cargo.toml), then
#              check as usual; for a change that moves a figure on purpose.
# INSTRUCTIONS_BIN=PATH measures that binary instead of building this checkout's release build.
# Needs: cargo, valgrind (installed with apt-get when missing, as root).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

record=0
case "${1:-}" in
--record) record=1 ;;
"") ;;
*) die "usage: instructions.sh [--record]" ;;
esac
budget="$OPBUILDER_ROOT/e2e/instructions.toml"
REPEAT_PCT=0.5
need_cmd cargo awk cp
start=$SECONDS

if ! command -v valgrind >/dev/null; then
	command -v apt-get >/dev/null && (($(id -u) == 0)) ||
		die "valgrind is not installed (Debian: apt-get install valgrind), and this is not root on Debian to install it"
	log_info "apt-get install valgrind"
	# Another apt-get may hold the lock for a while: wait for it rather than fail.
	apt_opts=(-q -o DPkg::Lock::Timeout=600)
	apt-get "${apt_opts[@]}" update >/dev/null || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends valgrind >/dev/null ||
		die "apt-get install valgrind failed"
fi

if [[ -n ${INSTRUCTIONS_BIN:-} ]]; then
	op=$INSTRUCTIONS_BIN
else
	log_info "cargo build --release (what users run; a debug build's counts say little about it)"
	cargo build --release --locked --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
	op="$OPBUILDER_TARGET_DIR/release/opbuilder"
fi
[[ $op == /* ]] || op="$PWD/$op"
[[ -x $op ]] || die "no opbuilder binary at $op"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/trees"
# The fixed environment of every command, set up or measured.
run_env=(env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_CONFIG_HOME="$work/home/no-config" LC_ALL=C
	SOURCE_DATE_EPOCH=1767225600)
# The starting trees are made without fsync (OPBUILDER_FSYNC=0): 200 create api take a while.
op() { "${run_env[@]}" OPBUILDER_FSYNC=0 "$op" "$@"; }

# The starting trees, each in $work/trees/NAME/project (a project's name is its directory's).
tree() { mkdir -p "$work/trees/$1/project" && cd "$work/trees/$1/project"; }
api() { op create api --group ship --version "$1" --kind "$2" --resource --controller --skip-post-steps; }
log_info "starting trees (the project of 200 kinds takes 200 create api)"
(
	set -e
	tree empty
	tree go-init && op init --domain example.com --repo example.com/p --skip-post-steps
	tree go-api && op init --domain example.com --repo example.com/p --skip-post-steps && api v1 Frigate
	tree go-200 && op init --domain example.com --repo example.com/p --skip-post-steps
	for i in $(seq -w 1 200); do api v1 "Kind$i"; done
	# helm/v2-alpha reads the kustomize output (make build-installer makes it): a fixture of it.
	tree helm && op init --domain example.com --repo example.com/x --project-name x --skip-post-steps &&
		api v1beta1 Frigate && mkdir dist && cp "$OPBUILDER_ROOT/e2e/fixtures/helm/install.yaml" dist/
	tree rust-init && op init --plugins=rust.opbuilder.io/v1-beta --domain example.com --skip-post-steps
) >"$work/setup.log" 2>&1 || {
	cat "$work/setup.log" >&2
	die "making the starting trees failed"
}
[[ $(find "$work/trees/go-200/project/api/v1" -name 'kind*_types.go' | wc -l) == 200 ]] ||
	die "the project of 200 kinds does not have 200 kinds"

# The commands: NAME, starting tree, arguments.
declare -A from args
names=(init create-api create-api-200 create-webhook edit-helm rust-init rust-create-api)
from[init]=empty
args[init]="init --domain example.com --repo example.com/p --skip-post-steps"
from[create-api]=go-init
args[create-api]="create api --group ship --version v1 --kind Frigate --resource --controller --skip-post-steps"
from[create-api-200]=go-200
args[create-api-200]=${args[create-api]}
from[create-webhook]=go-api
args[create-webhook]="create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation --skip-post-steps"
from[edit-helm]=helm
args[edit-helm]="edit --plugins=helm/v2-alpha --skip-build-installer"
from[rust-init]=empty
args[rust-init]="init --plugins=rust.opbuilder.io/v1-beta --domain example.com --skip-post-steps"
from[rust-create-api]=rust-init
args[rust-create-api]=${args[create-api]}

# count NAME: one run under callgrind in a fresh copy of its starting tree; prints the count.
count() {
	local dir="$work/run/project" n
	rm -rf "$work/run" && mkdir -p "$work/run"
	cp -a "$work/trees/${from[$1]}/project" "$dir"
	# shellcheck disable=SC2086 # the arguments are words
	(cd "$dir" && "${run_env[@]}" valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
		"$op" ${args[$1]}) >"$work/$1.log" 2>&1 || {
		cat "$work/$1.log" >&2
		die "$1: \`opbuilder ${args[$1]}\` failed under valgrind"
	}
	n=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$work/$1.log")
	[[ $n =~ ^[0-9]+$ ]] || die "$1: no instruction count in valgrind's output: $(tail -5 "$work/$1.log")"
	echo "$n"
}

# figure NAME: the recorded figure (a `name = 1_234_567` line of the file), or nothing.
figure() { awk -v k="$1" -F'=' '{ gsub(/[ _]/, "", $1); gsub(/[ _]/, "", $2) } $1 == k { print $2 }' "$budget"; }
tolerance=$(figure tolerance)
[[ $tolerance =~ ^[0-9]+$ ]] || die "$budget has no tolerance = N (percent)"

declare -A got
failed=()
for name in "${names[@]}"; do
	a=$(count "$name")
	b=$(count "$name")
	if ! awk -v a="$a" -v b="$b" -v p="$REPEAT_PCT" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d * 100 <= p * a) }'; then
		failed+=("$name: two runs counted $a and $b instructions, more than $REPEAT_PCT% apart")
	fi
	got[$name]=$((a < b ? a : b))
done

# grouped N: 1234567 as 1_234_567.
grouped() {
	awk -v n="$1" 'BEGIN { s = ""; while (length(n) > 3) { s = "_" substr(n, length(n) - 2) s; n = substr(n, 1, length(n) - 3) } print n s }'
}
if ((record)); then
	version=$(awk -F'"' '/^version = / { print $2; exit }' "$OPBUILDER_ROOT/Cargo.toml")
	for name in "${names[@]}"; do
		grep -q "^$name = " "$budget" || die "$budget has no line for $name"
		sed -i "s/^$name = .*/$name = $(grouped "${got[$name]}")/" "$budget"
	done
	sed -i "s/^release = .*/release = \"$version\"/" "$budget"
	log_info "recorded the counts in $budget (release $version)"
fi

printf '\n| %-16s | %-12s | %12s | %8s | %s\n' command instructions recorded change "opbuilder ..."
printf '|%s|%s|%s|%s|%s\n' "$(printf -- '-%.0s' {1..18})" "$(printf -- '-%.0s' {1..14})" \
	"$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..20})"
for name in "${names[@]}"; do
	want=$(figure "$name")
	[[ $want =~ ^[0-9]+$ ]] || die "$budget has no figure for $name"
	change=$(awk -v g="${got[$name]}" -v w="$want" 'BEGIN { printf "%+.1f%%", (g - w) * 100 / w }')
	printf '| %-16s | %12s | %12s | %8s | %s\n' "$name" "${got[$name]}" "$want" "$change" "${args[$name]}"
	if awk -v g="${got[$name]}" -v w="$want" -v t="$tolerance" 'BEGIN { exit !(g * 100 > w * (100 + t)) }'; then
		failed+=("$name: ${got[$name]} instructions, more than $tolerance% over the $want recorded in e2e/instructions.toml (if intended: update the figure in this change and say why in CHANGELOG.md)")
	elif awk -v g="${got[$name]}" -v w="$want" -v t="$tolerance" 'BEGIN { exit !(g * 100 < w * (100 - t)) }'; then
		log_warn "$name: ${got[$name]} instructions, more than $tolerance% under the $want recorded: lower the figure in e2e/instructions.toml to keep the gain"
	fi
done
echo "(release of the figures: $(awk -F'"' '/^release = / { print $2 }' "$budget"); valgrind $(valgrind --version | sed 's/^valgrind-//'))"
ratio=$(awk -v a="${got[create-api-200]}" -v b="${got[create-api]}" 'BEGIN { printf "%.2f", a / b }')
if awk -v r="$ratio" 'BEGIN { exit !(r > 1.5) }'; then
	log_warn "create api in a project of 200 kinds costs ${ratio}x a first create api: over issue 50's goal of 1.5x"
else
	echo "create api at 200 kinds / a first create api: ${ratio}x (goal: at most 1.5x)"
fi

if ((${#failed[@]})); then
	printf '  %s\n' "${failed[@]}" >&2
	die "the instruction budget is exceeded (${#failed[@]} problem(s), above)"
fi
log_info "instruction budget kept, in $(fmt_duration $((SECONDS - start)))"
