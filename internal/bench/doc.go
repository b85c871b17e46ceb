// Package bench measures ceph-rook at scale against a real API server:
// the plugin binary runs as in production (its own manager, its default
// client settings) behind a proxy that counts its requests, while the
// benchmark publishes a simulated inventory, pools, consumers and edits,
// and compares with a floor measured in the same run. `just bench` runs it.
package bench
