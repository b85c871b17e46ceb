// Package cachedir names the folders outside the clone where the project's
// tooling keeps what it builds or fetches once: the envtest control plane,
// Rook's chart and CRDs, and axe-core for the console's accessibility tests. Scripts in hack/ and the test helpers agree on
// these paths through this package (and hack/*.sh, which mirror it).
package cachedir
