// Package crd checks that the CustomResourceDefinitions a plugin depends on
// are served. A CRD that exists is not yet usable: until the API server has
// accepted its names and marked it Established, creating its objects fails.
// Charts that ship CRDs (Rook, cert-manager) leave exactly this gap between
// "installed" and "usable".
//
//	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
//	defer cancel()
//	if err := crd.WaitEstablished(ctx, c, []string{"cephclusters.ceph.rook.io", "cephblockpools.ceph.rook.io"}); err != nil {
//		return err // transient: the runtime degrades the plugin and retries
//	}
//
// The client's scheme must know apiextensions.k8s.io/v1.
package crd

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// Check reports, without waiting, whether every named CRD (<plural>.<group>)
// exists and is Established. A CRD that is missing or not yet established is
// a transient error naming each such CRD and why.
func Check(ctx context.Context, c client.Reader, names ...string) error {
	problems, err := check(ctx, c, names)
	if err != nil {
		return pluginerrors.NewTransient(err)
	}
	return problemsError(problems)
}

// check returns what keeps the CRDs from being usable, or the error that
// prevented finding out.
func check(ctx context.Context, c client.Reader, names []string) ([]string, error) {
	var problems []string
	for _, name := range names {
		var obj apiextensionsv1.CustomResourceDefinition
		err := c.Get(ctx, client.ObjectKey{Name: name}, &obj)
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, name+": not found")
		case err != nil:
			return nil, fmt.Errorf("get CRD %s: %w", name, err)
		default:
			if reason := notEstablished(&obj); reason != "" {
				problems = append(problems, name+": "+reason)
			}
		}
	}
	return problems, nil
}

func problemsError(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return pluginerrors.NewTransient(fmt.Errorf("CRDs not ready: %s", strings.Join(problems, "; ")))
}

// notEstablished returns why a CRD is not usable yet, or "" when it is.
func notEstablished(obj *apiextensionsv1.CustomResourceDefinition) string {
	established, namesAccepted := condition(obj, apiextensionsv1.Established), condition(obj, apiextensionsv1.NamesAccepted)
	switch {
	case established != nil && established.Status == apiextensionsv1.ConditionTrue:
		return ""
	case namesAccepted != nil && namesAccepted.Status == apiextensionsv1.ConditionFalse:
		// Conflicting names never resolve by waiting; say so.
		return fmt.Sprintf("names not accepted (%s: %s)", namesAccepted.Reason, namesAccepted.Message)
	case established != nil:
		return fmt.Sprintf("not established (%s: %s)", established.Reason, established.Message)
	default:
		return "not established yet"
	}
}

func condition(obj *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range obj.Status.Conditions {
		if obj.Status.Conditions[i].Type == t {
			return &obj.Status.Conditions[i]
		}
	}
	return nil
}

// Option changes how WaitEstablished polls.
type Option func(*waitOptions)

type waitOptions struct {
	interval time.Duration
}

// WithInterval sets the polling period (default 1s).
func WithInterval(d time.Duration) Option {
	return func(o *waitOptions) { o.interval = d }
}

// WaitEstablished polls until every named CRD is Established or ctx ends;
// bound it with a context deadline. On timeout it returns Check's last
// answer — which CRDs are missing and why — as a transient error.
func WaitEstablished(ctx context.Context, c client.Reader, names []string, opts ...Option) error {
	o := waitOptions{interval: time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	// The answer on timeout is the last thing learned about the CRDs; an API
	// error only when nothing was learned, because the final poll is often
	// cut short by the very deadline that ends the wait.
	var problems []string
	var apiErr error
	err := wait.PollUntilContextCancel(ctx, o.interval, true, func(ctx context.Context) (bool, error) {
		p, err := check(ctx, c, names)
		if err != nil {
			apiErr = err
			return false, nil
		}
		problems = p
		return len(problems) == 0, nil
	})
	switch {
	case err == nil:
		return nil
	case problems != nil:
		return pluginerrors.NewTransient(fmt.Errorf("wait for CRDs: %w: %w", err, problemsError(problems)))
	case apiErr != nil:
		return pluginerrors.NewTransient(fmt.Errorf("wait for CRDs: %w: %w", err, apiErr))
	default:
		return pluginerrors.NewTransient(fmt.Errorf("wait for CRDs %s: %w", strings.Join(names, ", "), err))
	}
}
