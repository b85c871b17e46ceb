package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSymmetricDifference(t *testing.T) {
	cases := []struct {
		name string
		a, b []string
		want []string
	}{
		{"nothing changed", []string{"x", "y"}, []string{"y", "x"}, nil},
		{"one added", []string{"x"}, []string{"x", "y"}, []string{"y"}},
		{"one removed", []string{"x", "y"}, []string{"x"}, []string{"y"}},
		{"replaced", []string{"x"}, []string{"y"}, []string{"y", "x"}},
		{"from nothing", nil, []string{"x"}, []string{"x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, symmetricDifference(tc.a, tc.b))
		})
	}
}
