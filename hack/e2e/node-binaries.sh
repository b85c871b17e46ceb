#!/usr/bin/env bash
# Builds what a real node needs beside the envtest control plane: kubelet,
# kube-scheduler and kube-proxy (Kubernetes v1.37.2, like kube-apiserver)
# and CoreDNS, from the Go module proxy into a cache folder outside the
# clone, and prints that folder. A binary already in the cache is never
# rebuilt. With the envtest build's Go cache warm this takes about two
# minutes; cold, kubelet alone is about 12 minutes on 2 cores.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
OUT="$CACHE_ROOT/e2e/bin/k8s-${K8S_VERSION}-coredns-${COREDNS_VERSION}"
WORK="$CACHE_ROOT/e2e/src"

log() { echo "hack/e2e: $*" >&2; }

mkdir -p "$OUT" "$WORK"
# One run at a time: `just test` runs this beside the e2e's builds
# (hack/test-all.sh); the second waits and finds the binaries built.
exec 9>"$OUT.lock"
flock 9

need_k8s=()
for bin in kubelet kube-scheduler kube-proxy; do
	[[ -x "$OUT/$bin" ]] || need_k8s+=("$bin")
done

if ((${#need_k8s[@]})); then
	log "building ${need_k8s[*]} $K8S_VERSION"
	"$(dirname "$0")/../envtest/build-k8s.sh" "$K8S_VERSION" "$OUT" "${need_k8s[@]}"
fi

if [[ ! -x "$OUT/coredns" ]]; then
	mod="$WORK/coredns-$COREDNS_VERSION"
	mkdir -p "$mod"
	if [[ ! -f "$mod/go.sum" ]]; then
		log "preparing a module for CoreDNS $COREDNS_VERSION"
		cat >"$mod/go.mod" <<GOMOD
module corednsbuild

go 1.26.0

require github.com/coredns/coredns $COREDNS_VERSION
GOMOD
		# Only the plugins a cluster's Corefile uses, in CoreDNS's own order
		# (core/dnsserver/zdirectives.go): the order plugins run in is the
		# order they are registered in, not the order they are imported in.
		cat >"$mod/main.go" <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"errors", "log", "health", "ready", "kubernetes", "forward", "cache", "loadbalance"}
}

func main() { coremain.Run() }
GO
		(cd "$mod" && go mod tidy >/dev/null 2>"$mod/tidy.log" || { cat "$mod/tidy.log" >&2; exit 1; })
	fi
	log "building CoreDNS $COREDNS_VERSION"
	# Static, or it will not start in an image without a libc.
	(cd "$mod" && CGO_ENABLED=0 go build -trimpath -o "$OUT/coredns.tmp" .)
	mv "$OUT/coredns.tmp" "$OUT/coredns"
fi

echo "$OUT"
