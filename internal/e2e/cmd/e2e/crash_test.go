package main

import (
	"encoding/json"
	"testing"
)

// A crash as `ceph crash info` prints it reads back as one line naming the
// daemon, the assertion and the innermost frames.
func TestCrashSummary(t *testing.T) {
	cases := []struct {
		name, info, want string
	}{
		{
			name: "assert",
			info: `{"crash_id":"2026-12-04T19:39:17.465127Z_ab","entity_name":"mon.b","timestamp":"2026-12-04T19:39:17.465127Z",
				"assert_condition":"r == 0","assert_msg":"/ceph/src/mon/MonitorDBStore.h: 355: FAILED ceph_assert(r == 0)\nmore",
				"backtrace":["/lib/libc.so.6(+0x3c050)","abort()","ceph_assert_fail()"]}`,
			want: "mon.b crashed at 2026-12-04T19:39:17.465127Z: assert r == 0 (/ceph/src/mon/MonitorDBStore.h: 355: FAILED ceph_assert(r == 0)); backtrace: /lib/libc.so.6(+0x3c050) | abort() | ceph_assert_fail()",
		},
		{
			name: "signal without assertion",
			info: `{"crash_id":"x","entity_name":"osd.3","timestamp":"T","backtrace":["a","b","c","d","e","f","g","h","i","j"]}`,
			want: "osd.3 crashed at T; backtrace: a | b | c | d | e | f | g | h",
		},
		{
			name: "nothing recorded",
			info: `{"crash_id":"x","entity_name":"mgr.a","timestamp":"T"}`,
			want: "mgr.a crashed at T",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c crashReport
			if err := json.Unmarshal([]byte(tc.info), &c); err != nil {
				t.Fatal(err)
			}
			if got := c.summary(); got != tc.want {
				t.Errorf("summary:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
