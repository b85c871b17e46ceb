package plugincontroller

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
)

// Reasons of the Ready condition besides the definition's (definition.go)
// and the plugin's own phase (Plugin<Phase>, such as PluginDegraded).
const (
	ReasonDefinitionUnavailable = "DefinitionUnavailable"
	ReasonObjectConflict        = "ObjectConflict"
	ReasonApplyFailed           = "ApplyFailed"
	ReasonPluginUnreachable     = "PluginUnreachable"
	ReasonPluginPhaseUnknown    = "PluginPhaseUnknown"
	ReasonUninstalling          = "Uninstalling"
)

// Problem is why a reconcile could not deploy or observe the plugin.
type Problem struct {
	Reason  string
	Message string
	// Permanent problems fail the installation: nothing retrying the same
	// thing can fix. Others are retried and leave the last phase as it was.
	Permanent bool
	// Refetch marks a Permanent problem in what the source served, which
	// the source may still correct (a registry serving other bytes than
	// the approved hash): the installation is failed, and the definition
	// is fetched again every poll interval instead of never.
	Refetch bool
}

// Observation is what one reconcile learned.
type Observation struct {
	Generation int64
	// Namespace is set once the plugin's objects are applied.
	Namespace string
	// Problem is the first thing that went wrong, if anything did.
	Problem *Problem
	// Plugin is the plugin's own answer, when it gave one.
	Plugin *PluginReport
}

// knownPhases are the phases the CRD accepts; anything else a plugin says
// would make the status write fail.
var knownPhases = map[pluginsv1.Phase]bool{
	pluginsv1.PhaseInstalling: true, pluginsv1.PhaseRunning: true, pluginsv1.PhaseDegraded: true,
	pluginsv1.PhaseFailed: true, pluginsv1.PhaseUninstalling: true,
}

// ComputeStatus is the installation's status after an observation. The
// plugin's word is copied as it is, up to maxMessageBytes; the
// controller's own problems come first, because a plugin that should not
// run says nothing that matters.
func ComputeStatus(prev pluginsv1.PluginInstallationStatus, obs Observation, now metav1.Time) pluginsv1.PluginInstallationStatus {
	next := pluginsv1.PluginInstallationStatus{
		Phase:              prev.Phase,
		Namespace:          prev.Namespace,
		ObservedGeneration: obs.Generation,
		Conditions:         append([]metav1.Condition(nil), prev.Conditions...),
	}
	if obs.Namespace != "" {
		next.Namespace = obs.Namespace
	}
	problem := obs.Problem
	if problem == nil && obs.Plugin != nil && !knownPhases[pluginsv1.Phase(obs.Plugin.Phase)] {
		problem = &Problem{Reason: ReasonPluginPhaseUnknown, Message: fmt.Sprintf("the plugin reports the unknown phase %q: %s", obs.Plugin.Phase, obs.Plugin.Message)}
	}
	reason := ""
	switch {
	case problem != nil && problem.Permanent:
		next.Phase, next.Message, reason = pluginsv1.PhaseFailed, problem.Message, problem.Reason
	case problem != nil:
		// The plugin may well still be doing what it last said; until it
		// says otherwise the phase stands. Before it ever said anything,
		// the installation is still being installed.
		if next.Phase == "" {
			next.Phase = pluginsv1.PhaseInstalling
		}
		next.Message, reason = problem.Message, problem.Reason
	case obs.Plugin != nil:
		next.Phase = pluginsv1.Phase(obs.Plugin.Phase)
		next.Message = obs.Plugin.Message
		if next.Message == "" {
			next.Message = "the plugin reports " + obs.Plugin.Phase
		}
		reason = "Plugin" + capitalize(obs.Plugin.Phase)
	default:
		panic("ComputeStatus: an observation has a problem or a plugin report")
	}
	next.Message = truncateMessage(next.Message, maxMessageBytes)
	next.Ready = problem == nil && next.Phase == pluginsv1.PhaseRunning
	setReady(&next, obs.Generation, reason, next.Message, now)
	return next
}

// setReady sets the Ready condition from status.Ready. An unchanged
// condition keeps its lastTransitionTime, so a converged poll writes
// nothing.
func setReady(status *pluginsv1.PluginInstallationStatus, generation int64, reason, message string, now metav1.Time) {
	ready := metav1.ConditionFalse
	if status.Ready {
		ready = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               pluginsv1.ConditionReady,
		Status:             ready,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
		LastTransitionTime: now,
	})
}

// maxMessageBytes bounds status.message and the Ready condition's message,
// which carry the plugin's words (or an error quoting them). A status is
// read at every poll and shown by kubectl; beyond the condition's own
// limit (32768 characters) the whole status write fails, and beyond the
// object's (about 1.5 MB in etcd) every write of the installation.
const maxMessageBytes = 4096

// truncateMessage returns s if it fits in limit bytes, and otherwise its
// beginning, cut at a character boundary, and a marker saying how much
// was left out, within limit bytes together.
func truncateMessage(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	marker := func(omitted int) string { return fmt.Sprintf("… (%d more bytes)", omitted) }
	// The marker for all of s is the longest any cut needs.
	cut := max(limit-len(marker(len(s))), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker(len(s)-cut)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
