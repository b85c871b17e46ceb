package controllerruntime

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// A leader's ordinary shutdown is not an error in the plugin's log; any
// other error after the stop, and the same message with another error,
// still are.
func TestALeadersShutdownIsNotLoggedAsAnError(t *testing.T) {
	var out bytes.Buffer
	base := logr.FromSlogHandler(slog.NewJSONHandler(&out, nil))
	log := base.WithSink(shutdownSink{base.GetSink()}).WithName("manager").WithValues("plugin", "p")

	log.Error(errors.New("leader election lost"), "error received after stop sequence was engaged")
	log.Error(errors.New("leader election lost"), "something else")
	log.Error(errors.New("etcd is gone"), "error received after stop sequence was engaged")

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %q", out.String())
	}
	for i, want := range []string{`"level":"INFO","msg":"stopped leading: the leader lease was released on shutdown"`, `"level":"ERROR","msg":"something else"`, `"level":"ERROR","msg":"error received after stop sequence was engaged"`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s\nwant it to contain %s", i+1, lines[i], want)
		}
		if !strings.Contains(lines[i], `"plugin":"p"`) {
			t.Errorf("line %d lost the logger's values: %s", i+1, lines[i])
		}
	}
}
