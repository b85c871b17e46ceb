#!/usr/bin/env bash
# Regenerates the Go and Connect code of the plugin runtime's metadata API
# from pluginruntime/proto into pluginruntime/gen. The generated code is
# committed, so building the module never needs this script.
#
# The proto uses `edition = "2023"`, which Debian's protoc (3.21) cannot
# parse, so the compiler is buf (npm package @bufbuild/buf, pinned below;
# installed into the cache folder on first use, or taken from $BUF). The Go
# plugins are the module's own tool dependencies (`go tool protoc-gen-go`,
# `go tool protoc-gen-connect-go`), so their versions follow go.mod.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

buf_version="1.75.0"
proto_root="pluginruntime/proto"
out="pluginruntime/gen"
module="$(go list -m)"
# The proto is kept exactly as the platform publishes it (no go_package
# option); the Go import path is mapped here instead.
gomap="Mpluginmetadata/v1/metadata.proto=$module/$out/pluginmetadata/v1;pluginmetadatav1"

buf="${BUF:-}"
if [[ -z "$buf" ]]; then
	cache="${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook/buf-$buf_version"
	buf="$cache/node_modules/.bin/buf"
	if [[ ! -x "$buf" ]]; then
		echo "gen-proto: installing @bufbuild/buf@$buf_version into $cache" >&2
		mkdir -p "$cache"
		npm install --prefix "$cache" --no-audit --no-fund --silent "@bufbuild/buf@$buf_version" >&2
	fi
fi

template=$(cat <<JSON
{
  "version": "v2",
  "plugins": [
    {"local": ["go", "tool", "protoc-gen-go"], "out": ".", "opt": ["module=$module", "$gomap"]},
    {"local": ["go", "tool", "protoc-gen-connect-go"], "out": ".", "opt": ["module=$module", "$gomap"]}
  ]
}
JSON
)

rm -rf "$out"
"$buf" generate "$proto_root" --template "$template"
gofmt -l "$out" | (! grep .) || { echo "gen-proto: generated code is not gofmt-clean" >&2; exit 1; }
echo "gen-proto: $(find "$out" -name '*.go' | wc -l) files under $out"
