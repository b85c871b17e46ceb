#!/usr/bin/env bash
# The whole suite as `just test` runs it, after tools and lint: the Go
# tests, then the three-node e2e (root).
#
# The e2e's builds (the node binaries, Rook's operator from source, the
# Ceph root filesystem, the images: `cluster.sh prepare`) wait on no test,
# so they run beside the Go tests at the lowest CPU and I/O priority and
# take only what the tests leave idle: the tests keep their speed, and on
# a fresh machine the e2e's cluster phase no longer builds for minutes.
# Warm, prepare finds everything cached in seconds.
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
