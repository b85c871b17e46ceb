package main

import (
	"context"
	"fmt"
	"strings"
)

// A daemon that crashed once keeps Ceph at HEALTH_WARN (RECENT_CRASH) for
// mgr/crash/warn_recent_interval, two weeks, whatever it does after its
// restart. The e2e reports every crash as a finding, with what Ceph
// recorded of it, and then archives it as an operator does once it has
// been read (`ceph crash archive`), so that HEALTH_OK judges the rest.
// Seen on a cold CI machine: mon.b crashed once during the join while the
// cluster kept quorum and every byte.

// crashReport is the part of `ceph crash info` a finding prints.
type crashReport struct {
	ID        string   `json:"crash_id"`
	Entity    string   `json:"entity_name"`
	Timestamp string   `json:"timestamp"`
	Assert    string   `json:"assert_condition"`
	AssertMsg string   `json:"assert_msg"`
	Backtrace []string `json:"backtrace"`
}

// summary is one line for the phase output: who crashed, when, the failed
// assertion if any, and the innermost frames of the backtrace.
func (c crashReport) summary() string {
	s := fmt.Sprintf("%s crashed at %s", c.Entity, c.Timestamp)
	if c.Assert != "" {
		s += fmt.Sprintf(": assert %s", c.Assert)
	}
	if msg := strings.TrimSpace(c.AssertMsg); msg != "" {
		s += fmt.Sprintf(" (%s)", firstLine(msg))
	}
	if n := min(len(c.Backtrace), 8); n > 0 {
		s += "; backtrace: " + strings.Join(c.Backtrace[:n], " | ")
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// reportCrashes prints every crash Ceph has not archived yet as a finding
// and archives it; it returns how many it reported.
func (r *run) reportCrashes(ctx context.Context) (int, error) {
	var crashes []struct {
		ID string `json:"crash_id"`
	}
	if err := r.cephJSON(ctx, &crashes, "crash", "ls-new"); err != nil {
		return 0, err
	}
	for _, c := range crashes {
		var info crashReport
		if err := r.cephJSON(ctx, &info, "crash", "info", c.ID); err != nil {
			return 0, err
		}
		r.step("FINDING: %s", info.summary())
		r.findings = append(r.findings, info.summary())
		if _, err := r.cephCLI(ctx, "crash", "archive", c.ID); err != nil {
			return 0, err
		}
	}
	return len(crashes), nil
}
