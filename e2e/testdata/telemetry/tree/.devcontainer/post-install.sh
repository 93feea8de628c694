#!/usr/bin/env bash
# Prepares the dev container: installs Kind and kubectl so that `make deploy`
# and `make test-e2e` work inside it. Run by devcontainer.json on creation.
set -euo pipefail

case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *)
    echo "post-install: unsupported architecture $(uname -m)" >&2
    exit 1
    ;;
esac

echo "Installing Kind"
go install sigs.k8s.io/kind@latest
kind version

echo "Installing kubectl"
kubectl_version="$(curl -fsSL https://dl.k8s.io/release/stable.txt)"
curl -fsSLo /usr/local/bin/kubectl \
  "https://dl.k8s.io/release/${kubectl_version}/bin/linux/${arch}/kubectl"
chmod +x /usr/local/bin/kubectl
kubectl version --client

# Kind attaches its nodes to a Docker network called "kind"; create it up
# front so the first `kind create cluster` does not race with Docker-in-Docker.
docker network inspect kind >/dev/null 2>&1 || docker network create kind || true

echo "Dev container ready: Go $(go env GOVERSION), $(kind version), kubectl ${kubectl_version}"
