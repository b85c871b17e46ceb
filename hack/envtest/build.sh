#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver, kube-controller-manager,
# kubectl and etcd) from the Go module proxy into a cache folder outside the
# clone, keyed by version, and prints that folder (for KUBEBUILDER_ASSETS).
# setup-envtest cannot download on our machines, so we build from source.
# A binary already in the cache is never rebuilt.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
OUT="$CACHE_ROOT/envtest/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
WORK="$CACHE_ROOT/envtest/src"

log() { echo "hack/envtest: $*" >&2; }

mkdir -p "$OUT" "$WORK"

# Staging version: k8s.io/X for Kubernetes v1.A.B is v0.A.B.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

need_k8s=()
for bin in kube-apiserver kube-controller-manager kubectl; do
	[[ -x "$OUT/$bin" ]] || need_k8s+=("$bin")
done

if ((${#need_k8s[@]})); then
	mod="$WORK/kubernetes-$K8S_VERSION"
	mkdir -p "$mod"
	if [[ ! -f "$mod/go.sum" ]]; then
		log "preparing a module for k8s.io/kubernetes $K8S_VERSION"
		gomod_file=$(cd "$mod" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
		{
			echo "module envtestbuild"
			echo
			echo "go 1.26.0"
			echo
			echo "require k8s.io/kubernetes $K8S_VERSION"
			echo
			echo "replace ("
			# Every staging replace of kubernetes' own go.mod, pinned to the
			# published staging version. The two sample modules are refused by
			# the proxy and nothing we build needs them.
			grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod_file" |
				awk '{print $1}' |
				grep -vE '^k8s\.io/(sample-cli-plugin|sample-controller)$' |
				while read -r m; do echo "	$m => $m $STAGING_VERSION"; done
			echo ")"
		} >"$mod/go.mod"
		cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
		(cd "$mod" && go mod tidy -e >/dev/null 2>"$mod/tidy.log" || { cat "$mod/tidy.log" >&2; exit 1; })
	fi
	minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
	ldflags=""
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	done
	for bin in "${need_k8s[@]}"; do
		log "building $bin $K8S_VERSION (cold: kube-apiserver ~20 min, the others ~10 min)"
		(cd "$mod" && go build -trimpath -ldflags "$ldflags" -o "$OUT/$bin.tmp" "k8s.io/kubernetes/cmd/$bin")
		mv "$OUT/$bin.tmp" "$OUT/$bin"
	done
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
