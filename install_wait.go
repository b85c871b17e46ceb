package main

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/crd"
)

// establishedTimeout bounds the wait for CRDs after they are applied.
const establishedTimeout = 2 * time.Minute

// waitEstablished waits until every named CRD is Established: the
// manager's caches cannot sync on a kind the API server does not serve yet.
func waitEstablished(ctx context.Context, c client.Client, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, establishedTimeout)
	defer cancel()
	return crd.WaitEstablished(ctx, c, names, crd.WithInterval(200*time.Millisecond))
}
