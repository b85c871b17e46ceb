// Package chartrepo serves chart archives as a Helm chart repository on a
// local address, so the plugin's real install path (repository URL, chart
// name, pinned version) runs without network access: in the install tests
// and in `just run`, with Rook's real rook-ceph chart.
package chartrepo
