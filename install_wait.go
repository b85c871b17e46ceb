package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitEstablished waits until every named CRD is Established.
func waitEstablished(ctx context.Context, c client.Client, names []string) error {
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, establishedTimeout, true, func(ctx context.Context) (bool, error) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s is not Established: %w", name, err)
		}
	}
	return nil
}

func newHelmInstaller(*rest.Config, *slog.Logger) chartInstaller { return nil }
