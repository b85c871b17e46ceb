package message

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLength bounds every status message and condition message the
// plugin writes. A condition's message may not exceed 32,768 characters
// (metav1.Condition), and a longer one makes the API server refuse the
// whole status write, so the object shows no phase at all. 4,096 keeps a
// message readable in the console and far from that limit.
const MaxLength = 4096

// A message names at most maxListedClauses per-disk clauses, in at most
// clauseBudget bytes, and then counts the rest ("... and 480 more"), so
// the count survives Bound.
const (
	maxListedClauses = 20
	clauseBudget     = MaxLength / 2
)

// Clauses joins clauses with "; ", naming as many as the limits
// allow (always the first) and counting the rest.
func Clauses(clauses []string) string {
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

// Bound cuts msg to MaxLength bytes, on a character
// boundary, saying how much was cut. Every message and condition the
// plugin writes goes through it, whatever built the message.
func Bound(msg string) string {
	if len(msg) <= MaxLength {
		return msg
	}
	const reserve = 64 // room for the suffix
	cut := Cut(msg, MaxLength-reserve)
	return cut + fmt.Sprintf(" ... (%d more bytes)", len(msg)-len(cut))
}

// Cut is s cut to at most n bytes on a character boundary.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Bytes prints a byte count in binary units, as a person reads it.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func Join(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}

func OrNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}

// Keys names the keys of m, sorted, comma-separated: Ceph's health checks
// by name, say.
func Keys[V any](m map[string]V) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// Printable drops from a string discovery reported what could mislead a
// reader or a terminal: control characters (escape sequences, NULs),
// format characters (bidi overrides, zero-width ones) and line and
// paragraph separators.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if Unsafe(r) {
			return -1
		}
		return r
	}, s)
}

// Unsafe reports whether r is a character no device name or displayed
// text may hold.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}
