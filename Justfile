# ceph-rook: a Fundament plugin that gives a Kubernetes cluster block, shared
# file and S3 object storage by installing and driving Rook-Ceph.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Every Go command here builds without cgo, as the Dockerfiles do, so go vet,
# the tests and the binaries they build share one set of compiled packages
# (the builds of other projects' binaries under hack/ choose their own).
export CGO_ENABLED := "0"


default:
    @just --list

# Run the plugin on a local embedded control plane (no cluster needed).
run *args: tools
    go run ./cmd/localrun {{args}}

# The development console host against a cluster (flags: --kubeconfig, --listen, ...).
console *args:
    go run ./cmd/devconsole {{args}}

# The platform's plugin controller against a kubeconfig (needs --definitions-dir or --registry-url, --cluster-id, --organization-id).
plugin-controller *args:
    go run ./cmd/plugin-controller {{args}}

# The scale benchmark against a real API server (flags: -sizes 50,125,250,500 -idle 60s ...); results in results/bench.
bench *args: tools
    go run ./cmd/bench {{args}}

# The console's browser benchmark: the Disks page and the disk picker at 1,000 and 10,000 Disks in headless Chromium, against the same lists fetched with no rendering (CONSOLE_BENCH_SCREENSHOTS=1 keeps screenshots at 10,000).
bench-console: tools
    go test ./internal/devconsole/ -run '^$' -bench BenchmarkConsoleAtScale -benchtime 1x -timeout 40m

# ceph-rook on a real three-node cluster on this machine (a network and mount namespace, containerd and kubelet per node; the real Rook operator, real Ceph), then tear-down; needs root. The proof every change to what Rook or Ceph sees or does brings. Flags: -nodes 1|3, -keep, -down, -from and -until cluster|platform|rook|ceph|file|object|retire|join|tiers|upgrade|outage|drain|replace|swap|leave.
e2e *args: tools
    go run ./internal/e2e/cmd/e2e {{args}}

# The e2e with the upgrade: the plugin of the release before (Rook v1.18.0) installed first, upgraded in place after join (the Rook step, then a Ceph re-tag), the later phases on the upgraded cluster.
e2e-upgrade *args: tools
    go run ./internal/e2e/cmd/e2e -upgrade {{args}}

# Long reliability runs: more crashes, longer API server outages, a bigger scenario, and both fuzzers for ten minutes each.
soak: tools
    go test -tags soak -count=1 -timeout 90m -run 'TestSoak' .
    go test -run '^$' -fuzz FuzzParseDiscovery -fuzztime 10m -parallel 1 .
    go test -run '^$' -fuzz FuzzParseDefinition -fuzztime 10m -parallel 1 ./pluginruntime/definition

# Run everything CI runs: build the tools if missing, check generated code, lint, all Go tests, then the one-node e2e (root; `just e2e` is the three-node proof). With packages as args, only their tests.
test *args:
    {{ if args == "" { "hack/test-all.sh" } else { "just tools lint && go test -count=1 -timeout 60m " + args } }}

# Build the envtest control plane from source into the cache (no-op when built).
envtest:
    hack/envtest/build.sh

# Fetch Rook's chart and CRDs into the cache (no-op when cached).
rook-artifacts:
    go run ./hack/rook

# Fetch axe-core (npm pack, integrity checked) into the cache for the console's accessibility tests (no-op when cached).
axe-core:
    go run ./hack/axe

# Everything the tests need that is built or fetched once, outside the clone.
tools: envtest rook-artifacts axe-core

# Regenerate deepcopy, CRDs and the metadata API code.
generate:
    go tool controller-gen object paths=./api/... crd paths=./api/... output:crd:artifacts:config=crds
    go tool controller-gen object paths=./internal/plugincontroller/api/... crd paths=./internal/plugincontroller/api/... output:crd:artifacts:config=internal/plugincontroller/crds
    hack/gen-proto.sh

# gofmt and go vet.
lint:
    #!/usr/bin/env bash
    set -euo pipefail
    unformatted=$(gofmt -l $(git ls-files '*.go'))
    if [[ -n "$unformatted" ]]; then echo "gofmt needed:"; echo "$unformatted"; exit 1; fi
    go vet ./...
