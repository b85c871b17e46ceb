// Package pki makes the certificates and keys a one-node cluster needs: a
// cluster CA, the API server's serving certificate, client certificates
// for the control plane, the node and an administrator, and the service
// account signing key. Everything is written as PEM files into one folder,
// named as the cluster's flags name them.
//
// It is for a throwaway test cluster: keys are ECDSA P-256, certificates
// last a day, and nothing is protected beyond file modes.
package pki
