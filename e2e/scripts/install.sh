#!/usr/bin/env bash
# The install path of a new user (README.md, "Install"), on the crate exactly as it would be
# published:
#
#   1. `cargo package --locked`: packages the crate (Cargo.toml's `include` list) and builds the
#      package on its own; `cargo publish --dry-run --locked --no-verify` then checks it against
#      the registry as a real publish would (without building it a second time);
#   2. the package must stay lean: nothing from e2e/ or docs/, and under MAX_KIB;
#   3. README's from-source command, `cargo install --locked --path .`, run in the unpacked
#      package (what `cargo install --locked opbuilder` downloads), into a scratch root, with
#      --debug (the dependencies of this checkout's `cargo build` are reused; see below);
#   4. the installed binary: `--version`, `version`, `init` and `create api` in a new project,
#      and the manual pages written where `man` finds them through PATH (`man -w opbuilder`).
#
# Usage: install.sh
# Needs: cargo (with crates.io reachable), man (man-db). OPBUILDER_INSTALL_ALLOW_DIRTY=1 packages
# a work tree with uncommitted changes (CI's clone is clean and runs without it).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_cmd cargo tar man
# man finds pages through PATH only when MANPATH does not override it.
unset MANPATH

# The packaged crate holds the templates, the earlier releases and the sources: about 0.6 MiB
# compressed today; this bound catches test trees or fixtures leaking into it.
MAX_KIB=2048
start=$SECONDS
cd "$OPBUILDER_ROOT"
version=$(awk -F'"' '/^version = / { print $2; exit }' Cargo.toml)
dirty=()
[[ -n ${OPBUILDER_INSTALL_ALLOW_DIRTY:-} ]] && dirty=(--allow-dirty)

log_info "cargo package --locked, cargo publish --dry-run --locked"
cargo package --locked "${dirty[@]}"
crate="$OPBUILDER_TARGET_DIR/package/opbuilder-$version.crate"
[[ -f $crate ]] || die "cargo package made no $crate"
cargo publish --dry-run --locked --no-verify "${dirty[@]}"

log_info "the package is lean"
files=$(tar -tzf "$crate")
count=$(wc -l <<<"$files")
if grep -E "^opbuilder-$version/(e2e|docs|target|\.ci)/" <<<"$files" | head -5 | grep .; then
	die "the package holds test or doc files (above): fix Cargo.toml's include list"
fi
for want in Cargo.toml Cargo.lock LICENSE README.md CHANGELOG.md versions.toml build.rs src/main.rs \
	scaffolds/init/Makefile.hbs releases/0.1.0/versions.toml; do
	grep -qx "opbuilder-$version/$want" <<<"$files" || die "the package lacks $want"
done
kib=$(($(stat -c %s "$crate") / 1024))
log_info "opbuilder-$version.crate: $count files, $kib KiB"
((kib <= MAX_KIB)) || die "the package is $kib KiB, over $MAX_KIB KiB: something large is included"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Unpacked at the same path on every run, so that cargo sees the same package (below).
unpacked="$OPBUILDER_TARGET_DIR/install/package"
rm -rf "$unpacked"
mkdir -p "$unpacked"
tar -xzf "$crate" -C "$unpacked"
root="$work/root"
log_info "cargo install --debug --locked --path . (in the unpacked package), into $root"
# With the dev profile and this checkout's cargo build directory (CARGO_BUILD_BUILD_DIR, as
# alpha-update builds the earlier releases), where run.sh's `cargo build` has just compiled the
# same dependencies with the same features: only the packaged crate itself compiles. What is
# tested is the package and the install (the files it holds, the binary's use), not the optimizer,
# and a cold run of CI is bound by CPU: the optimized build was most of this stage's 3 to 4 minutes
# of CPU, one without optimizations still compiled every dependency again in a profile nothing
# else builds (about a minute). The binary goes to a target directory of its own, never over this
# checkout's target/debug/opbuilder, which the other jobs run.
(cd "$unpacked/opbuilder-$version" &&
	CARGO_TARGET_DIR="$OPBUILDER_TARGET_DIR/install" CARGO_BUILD_BUILD_DIR="$OPBUILDER_TARGET_DIR" \
		cargo install --debug --locked --path . --root "$root")
bin="$root/bin/opbuilder"
[[ -x $bin ]] || die "cargo install wrote no $bin"
export PATH="$root/bin:$PATH"
[[ $(command -v opbuilder) == "$bin" ]] || die "the installed opbuilder is not first on PATH"

log_info "the installed binary"
kb=$(pin e2e.kubebuilder)
v=$(opbuilder --version)
[[ $v == "opbuilder $version (Kubebuilder $kb layout)" ]] || die "--version printed: $v"
opbuilder version | grep -qx "opbuilder $version" || die "opbuilder version does not start with its version"
opbuilder version | grep -q "kubebuilder: *$kb " || die "opbuilder version does not name Kubebuilder $kb"
project="$work/guestbook"
mkdir "$project"
(cd "$project" &&
	opbuilder init --domain example.com --repo example.com/guestbook --skip-post-steps &&
	opbuilder create api --group webapp --version v1 --kind Guestbook --resource --controller --skip-post-steps)
for f in PROJECT Makefile cmd/main.go api/v1/guestbook_types.go internal/controller/guestbook_controller.go; do
	[[ -f $project/$f ]] || die "init and create api made no $f"
done
grep -q "kind: Guestbook" "$project/PROJECT" || die "PROJECT does not record Guestbook"

log_info "the manual pages, found by man through PATH"
mkdir -p "$root/share/man/man1"
opbuilder man --dir "$root/share/man/man1" >/dev/null
for page in opbuilder opbuilder-init opbuilder-create-api; do
	found=$(man -w "$page") || die "man finds no $page page next to the installed binary"
	[[ $found == "$root/share/man/man1/$page.1" ]] || die "man found $page at $found, not the installed page"
done
# Read whole before the search: man under pipefail is killed by SIGPIPE when grep leaves at the
# line before the rest of the page is written.
page=$(man -P cat opbuilder 2>/dev/null) || die "man -P cat opbuilder failed"
grep -q "opbuilder-create(1)" <<<"$page" || die "the opbuilder page lists no subcommands"
opbuilder man | grep -q '^\.TH opbuilder 1' || die "opbuilder man prints no page"

log_info "install: ok in $(fmt_duration $((SECONDS - start)))"
