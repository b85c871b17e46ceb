package main

import (
	"encoding/json"
	"fmt"
)

// mustJSON marshals values built from our own types, which always encode.
func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err))
	}
	return data
}
