// Command pause is the e2e test's pod sandbox process (what
// registry.k8s.io/pause does): it holds the pod's namespaces open, reaps
// children that get re-parented to it, and exits 0 on SIGINT or SIGTERM.
// It is built as a static binary by internal/e2e/images, from this file alone.
package main
