package plugincontroller

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncAction is what a live object needs to match the desired one.
type syncAction int

const (
	// inSync: nothing to write.
	inSync syncAction = iota
	// patchLive: the sync function changed the live object; send the
	// difference.
	patchLive
	// recreate: an immutable field differs; delete and create again.
	recreate
)

func (a syncAction) String() string {
	return [...]string{"in sync", "patch", "recreate"}[a]
}

// syncFunc compares a live object with the desired one. For patchLive it
// has already copied the desired parts onto live. It compares only what the
// controller decides: fields the API server defaults, and labels or
// annotations others add, are left alone, so a converged installation
// costs no writes.
type syncFunc[T any] func(desired, live T) syncAction

func syncNamespace(desired, live *corev1.Namespace) syncAction {
	return patchIf(syncLabels(desired, live))
}

func syncServiceAccount(desired, live *corev1.ServiceAccount) syncAction {
	return patchIf(syncLabels(desired, live))
}

func syncRoleBinding(desired, live *rbacv1.RoleBinding) syncAction {
	if desired.RoleRef != live.RoleRef {
		return recreate // roleRef is immutable
	}
	return patchIf(syncLabels(desired, live), syncExact(desired.Subjects, &live.Subjects))
}

func syncClusterRole(desired, live *rbacv1.ClusterRole) syncAction {
	// Exact: a rule someone added is a permission nobody approved.
	return patchIf(syncLabels(desired, live), syncExact(desired.Rules, &live.Rules))
}

func syncClusterRoleBinding(desired, live *rbacv1.ClusterRoleBinding) syncAction {
	if desired.RoleRef != live.RoleRef {
		return recreate // roleRef is immutable
	}
	return patchIf(syncLabels(desired, live), syncExact(desired.Subjects, &live.Subjects))
}

func syncDeployment(desired, live *appsv1.Deployment) syncAction {
	if !equality.Semantic.DeepEqual(desired.Spec.Selector, live.Spec.Selector) {
		return recreate // the selector is immutable
	}
	return patchIf(
		syncLabels(desired, live),
		syncCovered(desired.Spec.Replicas, &live.Spec.Replicas),
		syncCovered(desired.Spec.Strategy, &live.Spec.Strategy),
		syncCovered(desired.Spec.Template, &live.Spec.Template),
	)
}

func syncService(desired, live *corev1.Service) syncAction {
	return patchIf(
		syncLabels(desired, live),
		syncCovered(desired.Spec.Type, &live.Spec.Type),
		// Exact: an extra selector label would select no pod.
		syncExact(desired.Spec.Selector, &live.Spec.Selector),
		syncCovered(desired.Spec.Ports, &live.Spec.Ports),
	)
}

// patchIf is patchLive when any part changed. Its arguments are evaluated
// before it is called, so every part is synced, not just the first.
func patchIf(changed ...bool) syncAction {
	for _, c := range changed {
		if c {
			return patchLive
		}
	}
	return inSync
}

// syncLabels sets desired's labels on live, keeping labels others added.
func syncLabels(desired, live metav1.Object) bool {
	labels := live.GetLabels()
	changed := false
	for k, v := range desired.GetLabels() {
		if got, ok := labels[k]; !ok || got != v {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = v
			changed = true
		}
	}
	live.SetLabels(labels)
	return changed
}

// syncExact replaces *live with desired unless they are equal (nil and
// empty count as equal).
func syncExact[V any](desired V, live *V) bool {
	if equality.Semantic.DeepEqual(desired, *live) {
		return false
	}
	*live = desired
	return true
}

// syncCovered replaces *live with desired unless live covers it.
func syncCovered[V any](desired V, live *V) bool {
	if Covers(desired, *live) {
		return false
	}
	*live = desired
	return true
}

// Covers reports whether live has every value desired sets, comparing the
// two as the API server sees them, in JSON. Fields desired leaves out are
// the server's to default and are not compared; map keys desired does not
// name are someone else's. A list, though, must have desired's length and
// each element must cover desired's: an environment variable added or
// removed by hand is drift, as is a changed one.
func Covers(desired, live any) bool {
	return covers(jsonTree(desired), jsonTree(live))
}

func covers(desired, live any) bool {
	switch d := desired.(type) {
	case nil:
		return true
	case map[string]any:
		if len(d) == 0 {
			return true // an empty map asks for nothing
		}
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, dv := range d {
			if !covers(dv, l[k]) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if (live != nil && !ok) || len(l) != len(d) {
			return false // a nil live list is empty
		}
		for i := range d {
			if !covers(d[i], l[i]) {
				return false
			}
		}
		return true
	default: // string, float64, bool
		return desired == live
	}
}

// jsonTree is v as encoding/json decodes it into an interface.
func jsonTree(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err))
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		panic(fmt.Sprintf("unmarshal %T: %v", v, err))
	}
	return tree
}
