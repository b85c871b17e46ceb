// Package localrun is `just run`: ceph-rook on a laptop with no cluster.
// It starts the embedded control plane the tests use (etcd, kube-apiserver,
// the garbage collector) with its state in a data folder, serves Rook's
// real chart from a local chart repository, runs the plugin binary itself
// against it, starts the development console host, and, since no Rook
// operator or discovery daemon can run without nodes, a clearly labelled
// simulation of both. Stopping (ctx) ends every process it started.
package localrun
