package pluginruntime

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestZeroServerLimitsTakeTheDefaults(t *testing.T) {
	d := DefaultServerLimits()
	assert.Equal(t, d, ServerLimits{}.withDefaults(), "nothing set: every default")
	assert.Equal(t, d, ServerLimits{ReadTimeout: -time.Second, MaxBodyBytes: -1}.withDefaults(), "a negative limit is no way to switch one off")

	got := ServerLimits{IdleTimeout: time.Second, MaxBodyBytes: 1 << 10}.withDefaults()
	want := d
	want.IdleTimeout, want.MaxBodyBytes = time.Second, 1<<10
	assert.Equal(t, want, got, "a set field overrides only itself")
}

func TestTheServerHasEveryLimit(t *testing.T) {
	l := DefaultServerLimits()
	srv := newHTTPServer(http.NotFoundHandler(), l, slog.New(slog.NewTextHandler(io.Discard, nil)))
	assert.Equal(t, l.ReadHeaderTimeout, srv.ReadHeaderTimeout)
	assert.Equal(t, l.ReadTimeout, srv.ReadTimeout)
	assert.Equal(t, l.WriteTimeout, srv.WriteTimeout)
	assert.Equal(t, l.IdleTimeout, srv.IdleTimeout)
	assert.Equal(t, l.MaxHeaderBytes, srv.MaxHeaderBytes)
}
