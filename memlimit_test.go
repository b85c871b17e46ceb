package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseCgroupMemoryLimit(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    int64
	}{
		{"a limit of 256 MiB, in bytes in either version", "268435456\n", 256 << 20},
		{"cgroup v2 without a limit says max", "max\n", 0},
		{"cgroup v1 without a limit is near the int64 maximum", "9223372036854771712\n", 0},
		{"unreadable text is no limit", "lots", 0},
		{"empty is no limit", "", 0},
		{"zero is no limit", "0", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ParseCgroupMemoryLimit(tc.content))
		})
	}
}

func TestMemoryLimitFollowsTheContainer(t *testing.T) {
	tests := []struct {
		name           string
		containerLimit int64
		want           int64
	}{
		{"the rendered pod's 256 MiB limit gives the heap 60 %", 256 << 20, (256 << 20) / 100 * 60},
		{"a 1 GiB limit raised by the operator is followed", 1 << 30, (1 << 30) / 100 * 60},
		{"no container limit falls back to 64 MiB", 0, 64 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MemoryLimit(tc.containerLimit))
		})
	}
}
