#!/usr/bin/env bash
# The Go of PROJECT files as people keep them (issue 45) builds: e2e/shapes.rs extends a project
# whose PROJECT is e2e/fixtures/shapes/groups (a group-less API, a dotted, a one-letter and a Go
# keyword group, groups named core and apps in the project's own domain beside Kubernetes' apps,
# an external type, an entry without domain or path, types moved out of api/), made by `alpha
# generate` of that PROJECT, with a webhook and a second version of every kind, and keeps the
# tree (OPBUILDER_SHAPES_OUT). This script proves that tree with verify-project.sh: go mod tidy,
# gofmt, make generate manifests build, go vet (which compiles the tests), one CRD per kind,
# kubectl kustomize. Not `make test` nor `make lint`: the templates are the golden trees' (which
# run both); what differs here is names and import paths, which build and vet check. About 3
# minutes on a warm Go cache.
#
# Usage: shapes.sh
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

need_cmd cargo go make kubectl
work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-shapes.XXXXXX")
trap 'rm -rf "$work"' EXIT

log_info "e2e/shapes.rs: the extended tree of the groups fixture"
OPBUILDER_SHAPES_OUT="$work" cargo test --locked --quiet --manifest-path "$OPBUILDER_ROOT/Cargo.toml" \
	--test e2e shapes::groups_of_every_shape_are_extended_where_their_types_are
tree="$work/groups-extended"
[[ -f $tree/PROJECT ]] || die "e2e/shapes.rs kept no tree in $tree (OPBUILDER_SHAPES_OUT)"
OPBUILDER_SKIP_LINT="the shapes tree is the golden trees' templates with other names and paths, which build and vet check" \
	"$here/verify-project.sh" --no-test "$tree"
