package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MustJSON marshals values built from our own types, which always encode.
func MustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err))
	}
	return data
}

// Status is a JSON merge patch that sets the whole status to want,
// whatever the stored status is: every field of want's struct that encodes
// to nothing (omitempty zero values: false, "", 0) is sent as null, which a
// merge patch reads as "remove". A plain {"status": want} would leave such
// fields at their stored values (available: true would never turn false),
// and a diff against a cached object could miss what our own last write
// changed. No resourceVersion: we are the status's only writer.
func Status(want any) client.Patch {
	// Numbers stay as written: read into float64, a byte count over 2^53
	// (a raw capacity of 9 PiB and more) would be rounded, stored rounded,
	// and differ from what the next reconcile computes, rewriting the
	// status on every one.
	fields := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(MustJSON(want)))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		panic(fmt.Sprintf("status of %T is not an object: %v", want, err))
	}
	t := reflect.TypeOf(want)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if _, set := fields[name]; !set {
			fields[name] = nil
		}
	}
	return client.RawPatch(types.MergePatchType, MustJSON(map[string]any{"status": fields}))
}
