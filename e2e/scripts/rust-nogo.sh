#!/usr/bin/env bash
# A Rust project (rust.opbuilder.io/v1-beta) on a machine with cargo and kubectl but no Go and no
# kustomize:
#   1. hack/set-image.sh (how make deploy and build-installer set the image without kustomize)
#      writes config/manager/kustomization.yaml byte for byte as `kustomize edit set image` does,
#      for a series of images (name:tag, registry:port/name:tag, name@digest, name:tag@digest,
#      tags YAML would read as numbers or bools), each applied over the one before;
#   2. then with a PATH that has no `go` and no `kustomize` (every directory of PATH that has one
#      replaced by a directory of links to its other commands): opbuilder scaffolds the project
#      (package nogo-operator), `make manifests build` works, and says once that it builds with
#      kubectl kustomize;
#   3. `make setup-envtest` fetches kube-apiserver and etcd from an index of envtest releases in
#      controller-tools' format, served on loopback (python3 -m http.server) with an archive
#      made of the e2e control-plane binaries: an archive whose SHA-512 is not the index's is
#      refused and installs nothing; the right one lands in bin/k8s/<version>-<os>-<arch>,
#      where `make test` finds it (the download from GitHub itself is not exercised offline);
#   4. on the e2e control plane (no nodes: the objects are checked, no pod runs), `make install
#      deploy` creates the CRD, the namespace, the manager's Deployment with image IMG and its
#      RBAC; `make undeploy uninstall` removes them (the namespace stays Terminating: the plane
#      has no namespace controller, so kubectl delete is run with --wait=false);
#      `make build-installer` writes dist/install.yaml with IMG;
#   5. `make test` (unit and integration tests) on the binaries setup-envtest installed.
# The crates build in the shared cargo build directory (lib.sh use_rust_target); `make build` is
# a release build, made with opt-level 0 here (what is tested is the Makefile, not the optimizer).
#
# Usage: rust-nogo.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
need_cmd cargo make kubectl curl python3 tar gzip sha512sum go
[[ -n ${OPBUILDER_BIN:-} ]] || die "OPBUILDER_BIN is not set (run through e2e/run.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/opbuilder-rust-nogo.XXXXXX")
cp_dir="$work/plane"
server=""
cleanup() {
	[[ -z $server ]] || kill "$server" 2>/dev/null || true
	"$scripts/control-plane.sh" stop "$cp_dir" || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------- 1. set-image.sh against kustomize
log_info "hack/set-image.sh against kustomize edit set image"
kustomize=$("$scripts/go-tool.sh" kustomize sigs.k8s.io/kustomize/kustomize/v5 "$(pin scaffold.kustomize)" sigs.k8s.io/kustomize/kustomize/v5)
set_image="$OPBUILDER_ROOT/scaffolds/rust/init/hack/set-image.sh"
mkdir -p "$work/k" "$work/s"
cp "$OPBUILDER_ROOT/e2e/testdata/rust/tree/config/manager/kustomization.yaml" "$work/k/"
cp "$work/k/kustomization.yaml" "$work/s/"
for img in controller:latest example.com/app:v0.1.0 registry.example.com:5000/team/app:v2 \
	app@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945 \
	localhost:5000/app:1.0@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945 \
	registry.example.com:5000/app app:123 app:yes app:1.2.3 app:1:2 example.com/app:v1; do
	(cd "$work/k" && "$kustomize" edit set image "controller=$img")
	bash "$set_image" "$work/s/kustomization.yaml" "controller=$img"
	diff -u "$work/k/kustomization.yaml" "$work/s/kustomization.yaml" ||
		die "set-image.sh controller=$img wrote another file than kustomize edit set image (diff above)"
done
# A file it cannot rewrite as kustomize would is refused, untouched.
printf 'bases:\n- ../x\n' >"$work/s/kustomization.yaml"
if bash "$set_image" "$work/s/kustomization.yaml" controller=app:v1 2>"$work/err"; then
	die "set-image.sh rewrote a kustomization with a deprecated field"
fi
grep -q 'install kustomize' "$work/err" || die "set-image.sh did not say what to do: $(cat "$work/err")"
[[ $(cat "$work/s/kustomization.yaml") == $'bases:\n- ../x' ]] || die "set-image.sh changed a file it refused"
log_info "set-image.sh wrote what kustomize writes for every image"

# The e2e control plane (built with Go, cached): the envtest archive's and the cluster's binaries.
"$scripts/build-control-plane.sh" >/dev/null

# ------------------------------------------------------------- 2. a PATH without go and kustomize
nogo_path=""
IFS=: read -r -a path_dirs <<<"$PATH"
i=0
for d in "${path_dirs[@]}"; do
	[[ -d $d ]] || continue
	if [[ -e $d/go || -e $d/gofmt || -e $d/kustomize ]]; then
		i=$((i + 1))
		mirror="$work/path/$i"
		mkdir -p "$mirror"
		for f in "$d"/*; do
			case "${f##*/}" in go | gofmt | kustomize) continue ;; esac
			ln -s "$f" "$mirror/"
		done
		d=$mirror
	fi
	nogo_path+="${nogo_path:+:}$d"
done
export PATH="$nogo_path"
if command -v go >/dev/null; then die "go is still on PATH: $(command -v go)"; fi
if command -v kustomize >/dev/null; then die "kustomize is still on PATH: $(command -v kustomize)"; fi
need_cmd cargo make kubectl
log_info "no go and no kustomize on PATH"

dir="$work/nogo-operator"
mkdir "$dir"
cd "$dir"
"$OPBUILDER_BIN" init --plugins=rust.opbuilder.io/v1-beta --domain example.com --project-name nogo-operator \
	--license copyright --owner "No Go Inc" --skip-post-steps
"$OPBUILDER_BIN" create api --group ship --version v1 --kind Frigate --resource --controller --skip-post-steps
[[ -f hack/boilerplate.rs.txt && ! -e hack/boilerplate.go.txt ]] || die "the license header is not hack/boilerplate.rs.txt alone"
grep -q "No Go Inc" src/api/ship/v1/frigate.rs || die "src/api/ship/v1/frigate.rs lacks the license header"
use_rust_target
export CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG=0

log_info "make manifests build"
make manifests build 2>&1 | tee "$work/build.log"
[[ -x target/release/nogo-operator ]] || die "make build wrote no target/release/nogo-operator"
[[ -f config/crd/bases/ship.example.com_frigates.yaml ]] || die "make manifests wrote no CRD"

# ------------------------------------------------------------- 3. make setup-envtest from an index
k8s=$(pin e2e.kubernetes)
platform=$(k8s_platform)
bins=$(k8s_bin_dir)
srv="$work/srv"
mkdir -p "$srv/stage/controller-tools/envtest"
cp "$bins/kube-apiserver" "$bins/etcd" "$bins/kubectl" "$srv/stage/controller-tools/envtest/"
archive="envtest-v$k8s-$platform.tar.gz"
tar -czf "$srv/$archive" -C "$srv/stage" controller-tools
rm -rf "$srv/stage"
sum=$(sha512sum "$srv/$archive" | cut -d' ' -f1)
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$srv" >"$work/http.log" 2>&1 &
server=$!
port=""
port_of() { port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$work/http.log" | head -1) && [[ -n $port ]]; }
WAIT_FOR_PID=$server wait_for 20 "the index server" port_of
port_of
base="http://127.0.0.1:$port"
# index HASH: the index with one release of the plane's minor (and an older patch, not chosen).
index() {
	cat <<EOF
releases:
  v$k8s:
    $archive:
      hash: $1
      selfLink: $base/$archive
  v${k8s%.*}.0-alpha.1:
    envtest-v${k8s%.*}.0-alpha.1-$platform.tar.gz:
      hash: 00
      selfLink: $base/missing.tar.gz
EOF
}
index "$(printf '%0128d' 0)" >"$srv/bad.yaml"
index "$sum" >"$srv/index.yaml"
log_info "make setup-envtest: an archive with another checksum than the index's is refused"
if make setup-envtest ENVTEST_INDEX_URL="$base/bad.yaml" >"$work/bad.log" 2>&1; then
	cat "$work/bad.log"
	die "make setup-envtest installed an archive whose checksum is not the index's"
fi
grep -q "refused" "$work/bad.log" || die "make setup-envtest did not say why it failed: $(cat "$work/bad.log")"
[[ ! -e bin/k8s/$k8s-$platform ]] || die "a refused download left bin/k8s/$k8s-$platform"
log_info "make setup-envtest from $base/index.yaml"
make setup-envtest ENVTEST_INDEX_URL="$base/index.yaml"
for b in kube-apiserver etcd; do
	[[ -x bin/k8s/$k8s-$platform/$b ]] || die "make setup-envtest installed no bin/k8s/$k8s-$platform/$b"
	cmp -s "$bins/$b" "bin/k8s/$k8s-$platform/$b" || die "bin/k8s/$k8s-$platform/$b is not the archive's"
done
make setup-envtest ENVTEST_INDEX_URL="$base/index.yaml" | grep -q "already" || die "a second make setup-envtest downloaded again"
kill "$server"
server=""

# ------------------------------------------------------------- 4. install, deploy, undeploy, installer
"$scripts/control-plane.sh" start "$cp_dir"
eval "$("$scripts/control-plane.sh" env "$cp_dir")"
img=registry.example.com:5000/nogo-operator:v0.1.0
log_info "make install deploy IMG=$img"
make install deploy IMG="$img" CONTAINER_TOOL=false 2>&1 | tee "$work/deploy.log"
n=$(grep -c 'building with kubectl kustomize' "$work/deploy.log" || true)
[[ $n == 1 ]] || die "make install deploy said $n times (not once) that it builds with kubectl kustomize"
[[ ! -e bin/kustomize ]] || die "make installed bin/kustomize without Go"
kubectl get crd frigates.ship.example.com >/dev/null || die "make install created no CRD"
kubectl get namespace nogo-operator-system >/dev/null || die "make deploy created no namespace"
got=$(kubectl -n nogo-operator-system get deployment nogo-operator-controller-manager \
	-o jsonpath='{.spec.template.spec.containers[0].image}') || die "make deploy created no Deployment"
[[ $got == "$img" ]] || die "the manager's Deployment runs $got, not $img"
kubectl get clusterrole nogo-operator-manager-role >/dev/null || die "make deploy created no manager-role"
kubectl get clusterrolebinding nogo-operator-manager-rolebinding >/dev/null || die "make deploy created no manager-rolebinding"
kubectl -n nogo-operator-system get serviceaccount nogo-operator-controller-manager >/dev/null ||
	die "make deploy created no ServiceAccount"
log_info "make deploy created the CRD, the namespace, the Deployment ($img), its ServiceAccount and RBAC"

# No namespace controller here: a deleted namespace never goes away, so do not wait for it.
cat >"$work/kubectl-nowait" <<'EOF'
#!/usr/bin/env bash
if [[ ${1:-} == delete ]]; then shift; exec kubectl delete --wait=false "$@"; fi
exec kubectl "$@"
EOF
chmod +x "$work/kubectl-nowait"
make undeploy uninstall ignore-not-found=true KUBECTL="$work/kubectl-nowait"
if kubectl get crd frigates.ship.example.com >/dev/null 2>&1; then die "make undeploy left the CRD"; fi
if kubectl get clusterrole nogo-operator-manager-role >/dev/null 2>&1; then die "make undeploy left manager-role"; fi
if kubectl -n nogo-operator-system get deployment nogo-operator-controller-manager >/dev/null 2>&1; then
	die "make undeploy left the Deployment"
fi
phase=$(kubectl get namespace nogo-operator-system -o jsonpath='{.status.phase}' 2>/dev/null || echo gone)
[[ $phase == Terminating || $phase == gone ]] || die "make undeploy left the namespace $phase"
log_info "make undeploy uninstall removed them"

img2=example.com/nogo-operator@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945
make build-installer IMG="$img2"
grep -q "image: $img2\$" dist/install.yaml || die "dist/install.yaml does not run $img2"
grep -q '^kind: CustomResourceDefinition$' dist/install.yaml || die "dist/install.yaml has no CRD"
log_info "make build-installer wrote dist/install.yaml with $img2"
"$scripts/control-plane.sh" stop "$cp_dir"

# ------------------------------------------------------------- 5. make test
log_info "make test on the binaries make setup-envtest installed"
env -u KUBEBUILDER_ASSETS -u KUBECONFIG make test
log_info "a Rust project without Go: manifests, build, setup-envtest, install, deploy, undeploy, build-installer and test passed"
