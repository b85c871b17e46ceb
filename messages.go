package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxMessageLength bounds every status message and condition message the
// plugin writes. A condition's message may not exceed 32,768 characters
// (metav1.Condition), and a longer one makes the API server refuse the
// whole status write, so the object shows no phase at all. 4,096 keeps a
// message readable in the console and far from that limit.
const MaxMessageLength = 4096

// A message names at most maxListedClauses per-disk clauses, in at most
// clauseBudget bytes, and then counts the rest ("... and 480 more"), so
// the count survives BoundMessage.
const (
	maxListedClauses = 20
	clauseBudget     = MaxMessageLength / 2
)

// summarizeClauses joins clauses with "; ", naming as many as the limits
// allow (always the first) and counting the rest.
func summarizeClauses(clauses []string) string {
	var b strings.Builder
	named := 0
	for _, c := range clauses {
		if named > 0 && (named == maxListedClauses || b.Len()+len("; ")+len(c) > clauseBudget) {
			break
		}
		if named > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c)
		named++
	}
	if rest := len(clauses) - named; rest > 0 {
		fmt.Fprintf(&b, "; ... and %d more", rest)
	}
	return b.String()
}

// BoundMessage cuts msg to MaxMessageLength bytes, on a character
// boundary, saying how much was cut. Every message and condition the
// plugin writes goes through it, whatever built the message.
func BoundMessage(msg string) string {
	if len(msg) <= MaxMessageLength {
		return msg
	}
	const reserve = 64 // room for the suffix
	cut := MaxMessageLength - reserve
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + fmt.Sprintf(" ... (%d more bytes)", len(msg)-cut)
}
