#!/usr/bin/env bash
# Fails when pkg/generated is not what hack/update-codegen.sh writes for the current API types,
# printing the difference. The tree is not changed.
set -o errexit -o nounset -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"
scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT

bash "${ROOT}/hack/update-codegen.sh" "${scratch}/generated"
mkdir -p "${scratch}/generated"
current="${ROOT}/pkg/generated"
if [[ ! -d "${current}" ]]; then
	current="${scratch}/none"
	mkdir -p "${current}"
fi
if ! diff -Naupr "${current}" "${scratch}/generated" >"${scratch}/diff"; then
	head -n 200 "${scratch}/diff"
	echo "error: pkg/generated is out of date with the API types; run \`make generate-client\` and commit the result" >&2
	exit 1
fi
echo "pkg/generated is up to date"
