#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver, kube-controller-manager,
# kubectl and etcd) from the Go module proxy into a cache folder outside the
# clone, keyed by version, and prints that folder (for KUBEBUILDER_ASSETS).
# setup-envtest cannot download on our machines, so we build from source.
# A binary already in the cache is never rebuilt.
#
# The Kubernetes binaries come from hack/envtest/build-k8s.sh, which
# hack/e2e/node-binaries.sh uses for the node's commands too.
set -euo pipefail
# Kubernetes' and etcd's own choice of cgo (Go's default), whatever the
# caller's (the Justfile turns cgo off for this repository's code).
unset CGO_ENABLED

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
OUT="$CACHE_ROOT/envtest/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
WORK="$CACHE_ROOT/envtest/src"

log() { echo "hack/envtest: $*" >&2; }

mkdir -p "$OUT" "$WORK"
# One run at a time: `just test` runs this beside the e2e's builds
# (hack/test-all.sh); the second waits and finds the binaries built.
exec 9>"$OUT.lock"
flock 9

need_k8s=()
for bin in kube-apiserver kube-controller-manager kubectl; do
	[[ -x "$OUT/$bin" ]] || need_k8s+=("$bin")
done

if ((${#need_k8s[@]})); then
	log "building ${need_k8s[*]} $K8S_VERSION (cold: about 15 min on 2 cores)"
	"$(dirname "$0")/build-k8s.sh" "$K8S_VERSION" "$OUT" "${need_k8s[@]}"
fi

if [[ ! -x "$OUT/etcd" ]]; then
	mod="$WORK/etcd-$ETCD_VERSION"
	mkdir -p "$mod"
	if [[ ! -f "$mod/go.sum" ]]; then
		log "preparing a module for etcd $ETCD_VERSION"
		cat >"$mod/go.mod" <<GOMOD
module etcdbuild

go 1.26.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
		cat >"$mod/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
		(cd "$mod" && go mod tidy >/dev/null)
	fi
	log "building etcd $ETCD_VERSION"
	(cd "$mod" && go build -trimpath -o "$OUT/etcd.tmp" .)
	mv "$OUT/etcd.tmp" "$OUT/etcd"
fi

echo "$OUT"
