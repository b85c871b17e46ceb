// Command pki writes the certificates of a one-node e2e cluster into a
// folder (internal/e2e/pki):
//
//	pki -dir DIR -ip 10.96.0.1,192.0.2.2 -name kubernetes,node-1 \
//	    -client admin=admin/system:masters -client kubelet=system:node:node-1/system:nodes
//
// A -client is FILE=USER[/GROUP,...].
package main
