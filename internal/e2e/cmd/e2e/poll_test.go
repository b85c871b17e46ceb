package main

import (
	"strings"
	"testing"
	"time"
)

func TestPollGap(t *testing.T) {
	for _, tc := range []struct {
		took, want time.Duration
	}{
		{0, minPollGap},
		{50 * time.Millisecond, minPollGap},
		{minPollGap / pollShare, minPollGap},
		{4 * time.Second, 8 * time.Second},
	} {
		if got := pollGap(tc.took); got != tc.want {
			t.Errorf("pollGap(%s) = %s, want %s", tc.took, got, tc.want)
		}
	}
}

func TestDNSLabel(t *testing.T) {
	for in, want := range map[string]string{
		"s3-payload-verify-after Rook's upgrade":                "s3-payload-verify-after-rook-s-upgrade",
		"s3-payload-verify-after the Ceph step":                 "s3-payload-verify-after-the-ceph-step",
		"s3-payload-verify-after node_b joined":                 "s3-payload-verify-after-node-b-joined",
		strings.Repeat("a", 70):                                 strings.Repeat("a", 63),
		"s3-payload-verify-" + strings.Repeat("x", 45) + " end": "s3-payload-verify-" + strings.Repeat("x", 45),
	} {
		if got := dnsLabel(in); got != want {
			t.Errorf("dnsLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
