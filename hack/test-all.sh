#!/usr/bin/env bash
# The whole suite as `just test` (and so CI's .ci/run) runs it: the tools,
# lint, every Go test, then the one-node e2e (root): the real kubelet, the
# real Rook operator and real Ceph on every run, in the phases one node
# holds (cluster, platform, rook, ceph, file, object, retire). The
# three-node `just e2e` is the proof each change to what Rook or Ceph sees
# or does brings before its issue is resolved (README, "Contributing"); it
# does not run here, where a cold machine must finish well inside CI's
# 90 minutes.
#
# The e2e's builds (the Ceph root filesystem, Rook's operator from source,
# the images, the node binaries: `cluster.sh prepare`) wait on no test, so
# they start first and run beside the rest at the lowest CPU and I/O
# priority, taking only what the tools' builds, lint and the Go tests
# leave idle: those keep their speed, the root filesystem's downloads
# overlap the compiles, and on a fresh machine the e2e's cluster phase no
# longer builds for minutes. The Kubernetes builds both sides need take a
# lock (hack/envtest/build-k8s.sh), so each is built once. Warm, prepare
# finds everything cached in seconds. It builds only what the one-node run
# needs (not the Rook release `just e2e-upgrade` starts from), into the
# same cache the three-node run reads.
#
# Each step's time since the start goes to stderr ("test-all: ..."), the
# figures the README's measurements quote.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
mkdir -p "$cache/e2e"
log="$cache/e2e/prepare.log"
start=$SECONDS
lap() { echo "test-all: $* after $((SECONDS - start)) s" >&2; }

setsid nice -n 19 ionice -c 3 hack/e2e/cluster.sh prepare >"$log" 2>&1 &
prepare=$!
# A failing Go test ends the run: the builds beside it stop too (their
# outputs reach the cache only whole).
trap 'kill -- "-$prepare" 2>/dev/null || true' EXIT

just tools
lap "tools ready"
just lint
lap "lint done"
# Lint ran every go vet check already, so the tests skip go test's own
# subset of them.
go test -count=1 -vet=off -timeout 60m ./...
lap "Go tests done; waiting for the e2e's builds"

if ! wait "$prepare"; then
	echo "test-all: the e2e's builds failed (hack/e2e/cluster.sh prepare):" >&2
	cat "$log" >&2
	exit 1
fi
trap - EXIT
lap "the e2e's builds ready"
go run ./internal/e2e/cmd/e2e -nodes 1
lap "one-node e2e passed"
