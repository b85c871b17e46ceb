package message

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestClauses(t *testing.T) {
	clauses := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("disk d%d not found", i)
		}
		return out
	}
	tests := []struct {
		name string
		n    int
		want string
	}{
		{name: "none", n: 0, want: ""},
		{name: "one", n: 1, want: "disk d0 not found"},
		{name: "exactly the limit names them all", n: maxListedClauses, want: strings.Join(clauses(maxListedClauses), "; ")},
		{name: "one over counts the rest", n: maxListedClauses + 1, want: strings.Join(clauses(maxListedClauses), "; ") + "; ... and 1 more"},
		{name: "hundreds", n: 500, want: strings.Join(clauses(maxListedClauses), "; ") + "; ... and 480 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clauses(clauses(tt.n)); got != tt.want {
				t.Errorf("Clauses(%d clauses) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
	t.Run("long clauses stop at the byte budget, the first always named", func(t *testing.T) {
		long := strings.Repeat("x", clauseBudget/3)
		got := Clauses([]string{long, long, long, long})
		if want := long + "; " + long + "; ... and 2 more"; got != want {
			t.Errorf("got %d bytes ending %q", len(got), got[len(got)-20:])
		}
		huge := strings.Repeat("y", 2*clauseBudget)
		if got := Clauses([]string{huge, "b"}); got != huge+"; ... and 1 more" {
			t.Errorf("the first clause is named however long (Bound cuts it)")
		}
	})
}

func TestBound(t *testing.T) {
	tests := []struct {
		name     string
		msg      string
		wantSame bool
	}{
		{name: "short", msg: "disk a not found", wantSame: true},
		{name: "exactly the limit", msg: strings.Repeat("a", MaxLength), wantSame: true},
		{name: "one over", msg: strings.Repeat("a", MaxLength+1)},
		{name: "far over", msg: strings.Repeat("x", 40000)},
		{name: "multibyte characters are not split", msg: strings.Repeat("é", MaxLength)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bound(tt.msg)
			if tt.wantSame {
				if got != tt.msg {
					t.Errorf("Bound changed a message within the limit")
				}
				return
			}
			if len(got) > MaxLength {
				t.Errorf("len = %d, want at most %d", len(got), MaxLength)
			}
			if !utf8.ValidString(got) {
				t.Errorf("the cut split a character")
			}
			if !strings.Contains(got, "more bytes)") || !strings.HasPrefix(tt.msg, strings.SplitN(got, " ... (", 2)[0]) {
				t.Errorf("Bound = ...%q, want a prefix of the message and how much was cut", got[len(got)-40:])
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 30: "3.0 GiB", 4000787030016: "3.6 TiB"} {
		assert.Equal(t, want, Bytes(n), "%d", n)
	}
}
