// Package pluginerrors classifies plugin errors so the runtime knows whether
// retrying can help.
//
// A transient error (a CRD not yet established, an API server hiccup, a
// Helm release locked by another operation) leaves the plugin "degraded" and
// the runtime retries with backoff. A permanent error (invalid
// configuration, a resource the plugin must not touch) puts the plugin in
// "failed": retrying cannot fix it, a human has to.
//
//	if !crdReady {
//		return pluginerrors.NewTransient(fmt.Errorf("CRDs not yet ready: %w", err))
//	}
//	if cfg.Replicas < 1 {
//		return pluginerrors.NewPermanent(fmt.Errorf("invalid configuration: replicas %d < 1", cfg.Replicas))
//	}
//
// Both wrappers keep the cause visible to errors.Is and errors.As, and the
// classification survives further wrapping with fmt.Errorf("...: %w", err).
package pluginerrors

import "errors"

// Class is how an error affects the plugin's lifecycle.
type Class int

const (
	// Unclassified errors carry no classification. The runtime treats them
	// as transient: an unknown failure is more often a blip than a verdict.
	Unclassified Class = iota
	// Transient errors are retried with backoff; the plugin is degraded
	// meanwhile.
	Transient
	// Permanent errors are not retried; the plugin is failed until a human
	// intervenes (a new configuration, a restart).
	Permanent
)

// String returns the class in lower case, as logged.
func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	default:
		return "unclassified"
	}
}

type classified struct {
	class Class
	err   error
}

func (e *classified) Error() string { return e.err.Error() }
func (e *classified) Unwrap() error { return e.err }

// NewTransient marks err as retryable. It returns nil for a nil err, so it
// can wrap a call's result directly.
func NewTransient(err error) error { return wrap(Transient, err) }

// NewPermanent marks err as not retryable. It returns nil for a nil err.
func NewPermanent(err error) error { return wrap(Permanent, err) }

func wrap(class Class, err error) error {
	if err == nil {
		return nil
	}
	return &classified{class: class, err: err}
}

// ClassOf returns the classification closest to the top of err's chain: an
// error re-wrapped as permanent is permanent even if a transient error hides
// inside it.
func ClassOf(err error) Class {
	var c *classified
	if errors.As(err, &c) {
		return c.class
	}
	return Unclassified
}

// IsTransient reports whether err is classified as transient.
func IsTransient(err error) bool { return ClassOf(err) == Transient }

// IsPermanent reports whether err is classified as permanent.
func IsPermanent(err error) bool { return ClassOf(err) == Permanent }
