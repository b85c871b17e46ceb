#!/usr/bin/env bash
# build-k8s.sh VERSION OUT COMMAND...: builds the named commands of
# k8s.io/kubernetes VERSION (kube-apiserver, kubelet, ...) into OUT.
#
# One module serves every command the envtest control plane
# (hack/envtest/build.sh) and the e2e's nodes (hack/e2e/node-binaries.sh)
# need, so both builds resolve the same dependency versions and the second
# reuses every package the first compiled. The commands asked for at once
# are built by one `go build`, their links side by side, and without symbol
# table and DWARF (-s -w: the link is the slow, single-threaded step;
# panics still print function names and lines). A binary appears in OUT
# only once built whole. The version is stamped as Kubernetes' own build
# stamps it.
set -euo pipefail
# Kubernetes' own choice of cgo (Go's default), whatever the
# caller's (the Justfile turns cgo off for this repository's code).
unset CGO_ENABLED

version=$1 out=$2
shift 2
CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
mod="$CACHE_ROOT/envtest/src/k8s-$version"

# One build at a time (`just test` runs the envtest build and the e2e's
# node build side by side): the second waits, then compiles nothing anew.
mkdir -p "$(dirname "$mod")"
exec 9>"$mod.lock"
flock 9
need=()
for bin in "$@"; do
	[[ -x "$out/$bin" ]] || need+=("$bin")
done
((${#need[@]})) || exit 0

if [[ ! -f "$mod/go.sum" ]]; then
	echo "hack/envtest: preparing a module for k8s.io/kubernetes $version" >&2
	mkdir -p "$mod"
	# Staging version: k8s.io/X for Kubernetes v1.A.B is v0.A.B.
	staging="v0.${version#v1.}"
	gomod_file=$(cd "$mod" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
	{
		echo "module k8sbuild"
		echo
		echo "go 1.26.0"
		echo
		echo "require k8s.io/kubernetes $version"
		echo
		echo "replace ("
		# Every staging replace of kubernetes' own go.mod, pinned to the
		# published staging version. The two sample modules are refused by
		# the proxy and nothing we build needs them.
		grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod_file" |
			awk '{print $1}' |
			grep -vE '^k8s\.io/(sample-cli-plugin|sample-controller)$' |
			while read -r m; do echo "	$m => $m $staging"; done
		echo ")"
	} >"$mod/go.mod"
	cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
	(cd "$mod" && go mod tidy -e >/dev/null 2>"$mod/tidy.log") || { cat "$mod/tidy.log" >&2; rm -f "$mod/go.sum"; exit 1; }
fi

minor="${version#v1.}"
minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
pkgs=()
for bin in "${need[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$bin"); done
tmp="$out/.build"
rm -rf "$tmp"
mkdir -p "$tmp"
(cd "$mod" && go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}")
for bin in "${need[@]}"; do mv "$tmp/$bin" "$out/$bin"; done
rmdir "$tmp"
