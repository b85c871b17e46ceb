package pluginruntime

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"
)

// ServerLimits bound what one client can make the plugin's HTTP server hold:
// connection time, header bytes, body bytes and metadata message bytes.
// The server answers on the plugin's Service, which every pod in the
// cluster can reach, and it reads a request before it can tell whether the
// caller is the platform; without these bounds one pod can keep thousands
// of connections open or make the plugin buffer gigabytes.
//
// A zero (or negative) field takes its default (DefaultServerLimits): a
// limit cannot be switched off.
type ServerLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers, so a client
	// that sends them a byte at a time (slowloris) is cut off.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its response, so a client that never reads holds nothing
	// for long.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that carries no request
	// for this long. It is longer than the platform controller's status
	// poll (30 s), whose connection is then reused rather than reopened.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's header block (net/http adds 4 KiB of
	// slack). A platform token is a few KiB.
	MaxHeaderBytes int
	// MaxBodyBytes caps a request body as sent, compressed or not. A body
	// declared larger is refused before any of it is read; an undeclared
	// (chunked) one is cut off at the cap. Every request the runtime serves
	// is a probe, a console GET or a metadata call whose messages are empty.
	MaxBodyBytes int64
	// MaxReadMessageBytes caps a metadata request message after
	// decompression (connect.WithReadMaxBytes), which bounds what a gzip
	// bomb inflates to in memory.
	MaxReadMessageBytes int
	// MaxSendMessageBytes caps a metadata response message
	// (connect.WithSendMaxBytes); a status message is a sentence or an
	// error chain.
	MaxSendMessageBytes int
}

// DefaultServerLimits returns the limits the runtime serves with unless
// WithServerLimits changes them.
func DefaultServerLimits() ServerLimits {
	return ServerLimits{
		ReadHeaderTimeout:   5 * time.Second,
		ReadTimeout:         10 * time.Second,
		WriteTimeout:        30 * time.Second,
		IdleTimeout:         60 * time.Second,
		MaxHeaderBytes:      64 << 10,
		MaxBodyBytes:        64 << 10,
		MaxReadMessageBytes: 64 << 10,
		MaxSendMessageBytes: 1 << 20,
	}
}

// withDefaults fills the zero fields of l from DefaultServerLimits.
func (l ServerLimits) withDefaults() ServerLimits {
	d := DefaultServerLimits()
	orDefault(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	orDefault(&l.ReadTimeout, d.ReadTimeout)
	orDefault(&l.WriteTimeout, d.WriteTimeout)
	orDefault(&l.IdleTimeout, d.IdleTimeout)
	orDefault(&l.MaxHeaderBytes, d.MaxHeaderBytes)
	orDefault(&l.MaxBodyBytes, d.MaxBodyBytes)
	orDefault(&l.MaxReadMessageBytes, d.MaxReadMessageBytes)
	orDefault(&l.MaxSendMessageBytes, d.MaxSendMessageBytes)
	return l
}

func orDefault[T time.Duration | int | int64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// newHTTPServer is the plugin's one server, bounded by l.
func newHTTPServer(handler http.Handler, l ServerLimits, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// connectOptions are the metadata handler's message caps. They come before
// the plugin's own WithMetadataHandlerOptions, which may override them.
func (l ServerLimits) connectOptions() []connect.HandlerOption {
	return []connect.HandlerOption{
		connect.WithReadMaxBytes(l.MaxReadMessageBytes),
		connect.WithSendMaxBytes(l.MaxSendMessageBytes),
	}
}

// limitBodies caps every request body at max bytes. A body whose declared
// length is over the cap is refused before a byte of it is read, and the
// connection is closed so the rest is never read either; any other body
// reads as an error past the cap (http.MaxBytesReader, which also closes
// the connection). Connect's own reader then answers ResourceExhausted.
func limitBodies(max int64, next http.Handler) http.Handler {
	errorWriter := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close")
			err := connect.NewError(connect.CodeResourceExhausted, errors.New("request body too large"))
			if errorWriter.IsSupported(r) {
				_ = errorWriter.Write(w, r, err)
				return
			}
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}
