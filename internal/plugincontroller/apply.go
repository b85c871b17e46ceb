package plugincontroller

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ConflictError is an object of the installation's name that the
// installation does not control. Deleting or adopting it could destroy
// someone else's work, so the installation stops until a human resolves it.
type ConflictError struct {
	Kind, Namespace, Name string
}

func (e *ConflictError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("%s %s exists and is not controlled by this installation; remove or rename it", e.Kind, name)
}

// applier writes objects of one installation, and nothing else.
type applier struct {
	client client.Client
	// reader bypasses the cache, which only holds objects carrying the
	// controller's label: an object without it (someone removed the label,
	// or it is not ours) is looked up here when creating it collides.
	reader client.Reader
	owner  metav1.Object
}

// apply makes the live object match desired: created when absent, patched
// with only the difference when it drifted, deleted and created again when
// an immutable field differs, and untouched when it matches. It returns the
// live object after the write.
func apply[T client.Object](ctx context.Context, a applier, desired T, sync syncFunc[T]) (T, error) {
	kind := reflect.TypeOf(desired).Elem().Name()
	key := client.ObjectKeyFromObject(desired)
	live := emptyLike(desired)
	err := a.client.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		created := desired.DeepCopyObject().(T)
		err = a.client.Create(ctx, created)
		if err == nil {
			log.FromContext(ctx).Info("created", "kind", kind, "object", key)
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return live, fmt.Errorf("create %s %s: %w", kind, key, err)
		}
		err = a.reader.Get(ctx, key, live)
	}
	if err != nil {
		return live, fmt.Errorf("get %s %s: %w", kind, key, err)
	}
	if !metav1.IsControlledBy(live, a.owner) {
		return live, &ConflictError{Kind: kind, Namespace: key.Namespace, Name: key.Name}
	}

	before := live.DeepCopyObject().(T)
	switch action := sync(desired, live); action {
	case inSync:
		return live, nil
	case patchLive:
		if err := a.client.Patch(ctx, live, client.MergeFrom(before)); err != nil {
			return live, fmt.Errorf("repair %s %s: %w", kind, key, err)
		}
		log.FromContext(ctx).Info("repaired drift", "kind", kind, "object", key)
		return live, nil
	case recreate:
		uid := live.GetUID()
		if err := a.client.Delete(ctx, live, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return live, fmt.Errorf("delete %s %s to recreate it: %w", kind, key, err)
		}
		created := desired.DeepCopyObject().(T)
		if err := a.client.Create(ctx, created); err != nil {
			return live, fmt.Errorf("recreate %s %s: %w", kind, key, err)
		}
		log.FromContext(ctx).Info("recreated to change an immutable field", "kind", kind, "object", key)
		return created, nil
	default:
		panic(fmt.Sprintf("unknown sync action %v", action))
	}
}

// emptyLike is a new, empty object of obj's type: reading into a copy of
// a rendered object could leave rendered values where the live one has
// none.
func emptyLike[T client.Object](obj T) T {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}
