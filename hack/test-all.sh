#!/usr/bin/env bash
# The whole suite as `just test` runs it: the tools, lint, the Go tests,
# then the three-node e2e (root).
#
# The e2e's builds (the Ceph root filesystem, Rook's operator from source,
# the images, the node binaries: `cluster.sh prepare`) wait on no test, so
# they start first and run beside the rest at the lowest CPU and I/O
# priority, taking only what the tools' builds, lint and the Go tests
# leave idle: those keep their speed, the root filesystem's downloads
# overlap the compiles, and on a fresh machine the e2e's cluster phase no
# longer builds for minutes. The Kubernetes builds both sides need take a
# lock (hack/envtest/build-k8s.sh), so each is built once. Warm, prepare
# finds everything cached in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
mkdir -p "$cache/e2e"
log="$cache/e2e/prepare.log"
start=$SECONDS
setsid nice -n 19 ionice -c 3 hack/e2e/cluster.sh prepare >"$log" 2>&1 &
prepare=$!
# A failing Go test ends the run: the builds beside it stop too (their
# outputs reach the cache only whole).
trap 'kill -- "-$prepare" 2>/dev/null || true' EXIT

just tools lint
go test -count=1 -timeout 60m ./...

echo "test-all: Go tests done after $((SECONDS - start)) s; waiting for the e2e's builds" >&2
if ! wait "$prepare"; then
	echo "test-all: the e2e's builds failed (hack/e2e/cluster.sh prepare):" >&2
	cat "$log" >&2
	exit 1
fi
trap - EXIT
echo "test-all: the e2e's builds ready after $((SECONDS - start)) s" >&2
go run ./internal/e2e/cmd/e2e
