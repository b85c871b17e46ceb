// Package gencheck fails a test when code controller-gen generates has
// drifted from its source: the committed deepcopy and CRDs are compared
// with a fresh generation into a temporary folder.
package gencheck
