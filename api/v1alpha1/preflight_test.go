package v1alpha1

import "testing"

func TestPreflightChecks(t *testing.T) {
	pass := PreflightCheck{Name: "Hosts", Passed: true, Message: "3 hosts"}
	fail := func(name, msg string) PreflightCheck { return PreflightCheck{Name: name, Message: msg} }
	tests := []struct {
		name   string
		checks PreflightChecks
		failed string
	}{
		{"an empty preflight passes", nil, ""},
		{"every check passed", PreflightChecks{pass, pass}, ""},
		{"each failed check is named with its message, in order", PreflightChecks{fail("Health", "HEALTH_ERR"), pass, fail("Copies", "2 < 3")}, "Health: HEALTH_ERR; Copies: 2 < 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.checks.Failed(); got != tt.failed {
				t.Errorf("Failed() = %q, want %q", got, tt.failed)
			}
			if got := tt.checks.Passed(); got != (tt.failed == "") {
				t.Errorf("Passed() = %v, want %v", got, tt.failed == "")
			}
		})
	}
}

func TestDiskRetirementPhaseFinished(t *testing.T) {
	finished := map[DiskRetirementPhase]bool{RetirementRetired: true, RetirementRefused: true, RetirementFailed: true, RetirementCancelled: true}
	for _, p := range []DiskRetirementPhase{"", RetirementRetired, RetirementRefused, RetirementFailed, RetirementCancelled, RetirementDraining, RetirementWiping} {
		if p.Finished() != finished[p] {
			t.Errorf("%q.Finished() = %v", p, p.Finished())
		}
	}
}
