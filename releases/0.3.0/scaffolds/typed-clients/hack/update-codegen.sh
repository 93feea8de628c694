#!/usr/bin/env bash
# Writes the typed clients of this project's APIs (a clientset, listers, informers and apply
# configurations) into pkg/generated, with kube_codegen.sh from k8s.io/code-generator.
#
# Which types get clients: those marked `// +genclient` in api/<version> (single group) or
# api/<group>/<version> (multigroup). The code-generator version follows k8s.io/apimachinery in
# go.mod, so the clients match the libraries the project builds with; set CODEGEN_VERSION to
# pick another. It comes through the Go module proxy; its generators are installed in
# bin/code-generator-<version>.
#
# `make generate` (and so `make build`, `make test`, `make run`) runs this every time. When
# nothing it reads (api/, go.mod, hack/boilerplate.go.txt, this script, the code-generator
# version) and nothing in pkg/generated changed since it last wrote pkg/generated, it says so and
# stops; the checksums are kept in bin/.generate-client.sum. CODEGEN_FORCE=1 regenerates anyway.
#
# Usage: hack/update-codegen.sh [OUTPUT_DIR]   (default: pkg/generated)
set -o errexit -o nounset -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"
OUT_DIR="${1:-${ROOT}/pkg/generated}"
MODULE="$(go list -m)"
OUT_PKG="${MODULE}/pkg/generated"
CODEGEN_VERSION="${CODEGEN_VERSION:-$(go list -m -f '{{.Version}}' k8s.io/apimachinery)}"

# One checksum over the inputs and the output tree: each file's path and contents.
sum=(sha256sum)
command -v sha256sum >/dev/null || sum=(shasum -a 256)
fingerprint() {
	{
		echo "code-generator ${CODEGEN_VERSION} ${OUT_PKG}"
		find api go.mod hack/boilerplate.go.txt hack/update-codegen.sh pkg/generated -type f -print0 2>/dev/null |
			LC_ALL=C sort -z | xargs -0 -r "${sum[@]}"
	} | "${sum[@]}"
}
stamp=""
if [[ "${OUT_DIR}" == "${ROOT}/pkg/generated" ]]; then
	stamp="${ROOT}/bin/.generate-client.sum"
	if [[ -z "${CODEGEN_FORCE:-}" && -d "${OUT_DIR}" && -f "${stamp}" && "$(fingerprint)" == "$(cat "${stamp}")" ]]; then
		echo "pkg/generated is up to date: nothing changed since it was generated (CODEGEN_FORCE=1 regenerates it)"
		exit 0
	fi
	rm -f "${stamp}"
fi

scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT

# Download outside the project, so that go.mod and go.sum stay as they are.
CODEGEN_ROOT="$(cd "${scratch}" && GOWORK=off GOFLAGS= GO111MODULE=on \
	go mod download -json "k8s.io/code-generator@${CODEGEN_VERSION}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
if [[ ! -f "${CODEGEN_ROOT}/kube_codegen.sh" ]]; then
	echo "error: could not download k8s.io/code-generator@${CODEGEN_VERSION} (no kube_codegen.sh in ${CODEGEN_ROOT:-the module cache})" >&2
	exit 1
fi

BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"
if [[ ! -f "${BOILERPLATE}" ]]; then
	BOILERPLATE="${scratch}/no-header.txt"
	: >"${BOILERPLATE}"
fi

# kube_codegen.sh takes the group from the directory above each version directory: the
# project root for api/<version>, api/ for api/<group>/<version>. The two cannot be mixed.
single=()
multi=()
while IFS= read -r dir; do
	case "${dir}" in
	api/*/*/*) echo "error: ${dir}: +genclient types must be in api/<version> or api/<group>/<version>" >&2; exit 1 ;;
	api/*/*) multi+=("${dir}") ;;
	api/*) single+=("${dir}") ;;
	esac
done < <(grep -rlE --include='*.go' '^[[:space:]]*//[[:space:]]*\+genclient' api 2>/dev/null |
	xargs -r -n1 dirname | LC_ALL=C sort -u)
if ((${#single[@]} > 0 && ${#multi[@]} > 0)); then
	echo "error: typed clients need one layout, but +genclient types are in ${single[*]} (single group)" \
		"and ${multi[*]} (multigroup); move ${single[*]} to api/<group>/<version>" >&2
	exit 1
fi
input=(api)
if ((${#single[@]} > 0)); then
	input=(--one-input-api api .)
fi

export GOBIN="${ROOT}/bin/code-generator-${CODEGEN_VERSION}"
mkdir -p "${GOBIN}"
# kube_codegen.sh installs the generators from its own module, in the module cache.
export GOWORK=off GOFLAGS=
# shellcheck disable=SC1091
source "${CODEGEN_ROOT}/kube_codegen.sh"

# (kube_codegen.sh lists what it wrote before in these; create them so that it finds none.)
mkdir -p "${OUT_DIR}"/{applyconfiguration,clientset,listers,informers}
log="${scratch}/codegen.log"
set +o errexit
(
	kube::codegen::gen_client \
		--with-watch \
		--with-applyconfig \
		--output-dir "${OUT_DIR}" \
		--output-pkg "${OUT_PKG}" \
		--boilerplate "${BOILERPLATE}" \
		"${input[@]}"
) 2>&1 | tee "${log}"
status="${PIPESTATUS[0]}"
set -o errexit

# informer-gen names each group's package after its directory. For a hyphenated group
# (api/sea-creatures) that is not a Go package name, so it writes that one file unformatted and
# fails after writing everything else. Drop the hyphen, as the importers' aliases already do.
fixed=0
for f in "${OUT_DIR}"/informers/externalversions/*/interface.go; do
	[[ -f "${f}" ]] || continue
	name="$(sed -n 's/^package //p' "${f}")"
	if [[ "${name}" == *-* ]]; then
		sed -i "s/^package ${name}\$/package ${name//-/}/" "${f}"
		gofmt -w "${f}"
		fixed=$((fixed + 1))
	fi
done
if [[ "${status}" != 0 ]]; then
	# Any other failure, or one about another file, stands.
	failures="$(grep -o 'errors in target "[^"]*"' "${log}" | sort -u | wc -l)"
	hyphen="$(grep -o 'errors in target "[^"]*/informers/externalversions/[^"/]*-[^"/]*"' "${log}" | sort -u | wc -l)"
	if [[ "${fixed}" == 0 || "${failures}" != "${hyphen}" ]] || ! grep -q '^Generating informer code' "${log}"; then
		echo "error: kube_codegen.sh failed (exit ${status}); see its output above" >&2
		exit 1
	fi
	echo "note: the informer-gen error above is the hyphenated group name; the package clause was fixed"
fi

if [[ -n "${stamp}" ]]; then
	mkdir -p "${ROOT}/bin"
	fingerprint >"${stamp}"
fi
