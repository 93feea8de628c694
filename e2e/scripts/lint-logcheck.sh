#!/usr/bin/env bash
# `make lint` with logcheck, as a user with the network gets it: golangci-lint built with the
# plugins of the project's .custom-gcl.yml. (Offline, `make lint` falls back to the standard
# linters; every golden tree's `make lint` in the golden stage runs that way.)
#
# `golangci-lint custom` clones golangci-lint from GitHub, which CI cannot reach, so the same build
# is made here from the Go module proxy: golangci-lint's module source at the version
# .custom-gcl.yml names, its cmd/golangci-lint/plugins.go importing each plugin (the file
# `golangci-lint custom` writes), each plugin module at its version, `go build`. The binary is
# cached in $E2E_CACHE/tools by both versions. Then, in a project opbuilder makes (init, create
# api, create webhook), with that binary as bin/golangci-lint-custom:
#   - `make lint` runs it (no fallback note) and reports nothing on the project as scaffolded;
#   - its linters include logcheck, and a log call with an odd key/value list is reported by
#     logcheck (so the plugin is really loaded and enabled by .golangci.yml);
#   - without the binary and with its build marked failed, `make lint` says so and passes with
#     the standard linters.
#
# Usage: lint-logcheck.sh
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_cmd go make flock
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
start=$SECONDS
op_bin=${OPBUILDER_BIN:-}
if [[ -z $op_bin ]]; then
	cargo build --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml"
	op_bin="$OPBUILDER_TARGET_DIR/debug/opbuilder"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-lint-logcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT

dir="$work/logs"
mkdir -p "$dir"
(
	cd "$dir"
	"$op_bin" init --domain example.com --repo example.com/logs --skip-post-steps
	"$op_bin" create api --group ship --version v1 --kind Frigate --resource --controller --skip-post-steps
	"$op_bin" create webhook --group ship --version v1 --kind Frigate --defaulting \
		--programmatic-validation --skip-post-steps
) >"$work/scaffold.log" 2>&1 || {
	cat "$work/scaffold.log" >&2
	die "opbuilder failed to scaffold the project"
}

# The versions .custom-gcl.yml asks for (the file opbuilder wrote: `version:` at the top, then
# one `module:`, `import:`, `version:` per plugin).
gcl_version=$(sed -n 's/^version: *//p' "$dir/.custom-gcl.yml")
mapfile -t modules < <(sed -n 's/^ *- module: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$dir/.custom-gcl.yml")
mapfile -t imports < <(sed -n 's/^ *import: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$dir/.custom-gcl.yml")
mapfile -t versions < <(sed -n 's/^    version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$dir/.custom-gcl.yml")
[[ -n $gcl_version && ${#modules[@]} -gt 0 && ${#modules[@]} -eq ${#imports[@]} && ${#modules[@]} -eq ${#versions[@]} ]] ||
	die "cannot read the golangci-lint version and the plugins from .custom-gcl.yml:$(cat "$dir/.custom-gcl.yml")"
key="golangci-lint-custom-$gcl_version"
for i in "${!modules[@]}"; do
	key+="-$(basename "${modules[$i]}")-${versions[$i]}"
done
cache="$E2E_CACHE/tools/$key"
custom="$cache/golangci-lint-custom"
mkdir -p "$cache"
exec 9>"$cache.lock"
flock 9
if [[ ! -x $custom ]]; then
	log_info "building golangci-lint $gcl_version with ${modules[*]} from the Go module proxy"
	src=$(go mod download -json "github.com/golangci/golangci-lint/v2@$gcl_version" | awk -F'"' '$2 == "Dir" { print $4 }')
	[[ -d $src/cmd/golangci-lint ]] || die "golangci-lint $gcl_version's source is not in the module cache ($src)"
	build="$work/golangci-lint"
	cp -R "$src" "$build"
	chmod -R u+w "$build"
	{
		printf 'package main\n\n// This file is used to declare module plugins.\n\nimport (\n'
		printf '\t_ "%s"\n' "${imports[@]}"
		printf ')\n'
	} >"$build/cmd/golangci-lint/plugins.go"
	(
		cd "$build"
		for i in "${!modules[@]}"; do
			go get "${modules[$i]}@${versions[$i]}"
		done
		go mod tidy
		CGO_ENABLED=0 go build -trimpath -o "$custom.tmp" ./cmd/golangci-lint
	) >"$work/build.log" 2>&1 || {
		tail -n 30 "$work/build.log" >&2
		die "building golangci-lint with the plugins of .custom-gcl.yml failed"
	}
	mv -f "$custom.tmp" "$custom"
fi
exec 9>&-

cd "$dir"
go mod tidy >/dev/null 2>&1 || go mod tidy
"$here/seed-tools.sh" --lint "$dir"
make generate >/dev/null
cp "$custom" bin/golangci-lint-custom
# The golden trees' golangci-lint cache when run.sh gives one (their dependencies' analysis).
export GOLANGCI_LINT_CACHE="${OPBUILDER_LINT_CACHE:-$work/golangci-cache}"

# The list is read whole before it is searched: `linters | grep -q` under pipefail failed about one
# time in three, when grep had found the line and left before golangci-lint had written the rest
# (exit 141, SIGPIPE).
linters=$(bin/golangci-lint-custom linters) || die "bin/golangci-lint-custom linters failed"
grep -q '^logcheck:' <<<"$linters" || die "the custom golangci-lint has no logcheck"
log_info "make lint with logcheck"
make lint >"$work/lint.log" 2>&1 || {
	cat "$work/lint.log" >&2
	die "make lint with logcheck fails on the project as scaffolded"
}
! grep -q 'could not be built' "$work/lint.log" || die "make lint fell back to the standard linters: $(cat "$work/lint.log")"

cat >internal/controller/zz_logcheck.go <<'EOF'
package controller

import "sigs.k8s.io/controller-runtime/pkg/log"

// OddPairs logs a key without its value.
func OddPairs() {
	log.Log.Info("odd pairs", "key")
}
EOF
if make lint >"$work/lint-bad.log" 2>&1; then
	die "make lint passed a log call with an odd key/value list: logcheck did not run"
fi
grep -q '(logcheck)' "$work/lint-bad.log" || die "make lint failed, but not through logcheck: $(tail -n 20 "$work/lint-bad.log")"
rm internal/controller/zz_logcheck.go

log_info "make lint without the custom binary (its build failed, as offline)"
rm bin/golangci-lint-custom
echo "(no network)" >bin/golangci-lint-custom.failed
make lint >"$work/lint-fallback.log" 2>&1 || {
	cat "$work/lint-fallback.log" >&2
	die "make lint fails when it falls back to the standard linters"
}
grep -q 'could not be built' "$work/lint-fallback.log" || die "make lint fell back without saying so: $(cat "$work/lint-fallback.log")"

log_info "lint-logcheck passed in $(fmt_duration $((SECONDS - start)))"
