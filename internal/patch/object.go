package patch

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetAnnotation sets one annotation on o.
func SetAnnotation(o client.Object, key, value string) {
	annotations := o.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	o.SetAnnotations(annotations)
}

// IfChanged sends the merge patch from base to obj, or nothing when
// the two are equal: an unchanged object costs no write. opts apply to the
// patch sent (an optimistic lock, say), not to the comparison.
func IfChanged(ctx context.Context, c client.Client, base, obj client.Object, opts ...client.MergeFromOption) error {
	data, err := client.MergeFrom(base).Data(obj)
	if err != nil {
		return err
	}
	if string(data) == "{}" {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFromWithOptions(base, opts...))
}

// Merge is a JSON merge patch of fields, built as JSON (a nil value
// removes its field), never by splicing strings into a template.
func Merge(fields map[string]any) client.Patch {
	return client.RawPatch(types.MergePatchType, MustJSON(fields))
}
