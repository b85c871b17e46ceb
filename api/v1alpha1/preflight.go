package v1alpha1

import "strings"

// CheckHealth names the check a retirement and an upgrade both make:
// what Ceph's own health says.
const CheckHealth = "Health"

// PreflightChecks is a preflight: the checks made before anything is
// touched, and the one way both features judge them.
//
// +kubebuilder:object:generate=false
type PreflightChecks []PreflightCheck

// Passed reports whether every check passed (an empty preflight passes).
func (c PreflightChecks) Passed() bool {
	for _, check := range c {
		if !check.Passed {
			return false
		}
	}
	return true
}

// Failed says which checks failed and why ("Hosts: ...; Health: ..."),
// "" when none did.
func (c PreflightChecks) Failed() string {
	var failed []string
	for _, check := range c {
		if !check.Passed {
			failed = append(failed, check.Name+": "+check.Message)
		}
	}
	return strings.Join(failed, "; ")
}

// Finished reports whether the phase is a terminal one (Retired, Refused,
// Failed, Cancelled): nothing moves the retirement on.
func (p DiskRetirementPhase) Finished() bool {
	switch p {
	case RetirementRetired, RetirementRefused, RetirementFailed, RetirementCancelled:
		return true
	}
	return false
}
