// Command s3object is the workload of just e2e's object step: it runs in a
// pod that takes a bucket claim's ConfigMap and Secret as its environment,
// exactly as the console's claim sheet tells a workload to, writes an object
// to the claimed bucket through the gateway's Service, reads it back and
// compares. It exits non-zero, saying why, when any of that fails.
//
// With -payload write it writes the e2e's payload objects
// (internal/e2e/payload) into the bucket instead; with -payload verify it
// reads them back and checks each one's SHA-256, which is how the e2e
// proves the bucket's data survived Ceph moving its copies.
package main
