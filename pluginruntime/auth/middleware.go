package auth

import (
	"net/http"

	"connectrpc.com/connect"
)

// Middleware rejects HTTP requests without a valid "Authorization: Bearer"
// token before next sees them, and puts the claims of valid ones in the
// request's context (ClaimsFrom). Unlike Interceptor, which Connect runs
// only after it has read and decoded the request message, Middleware
// refuses before a byte of the body is read: an unauthenticated caller
// cannot make the server buffer or inflate anything.
//
// The refusal is connect.CodeUnauthenticated written in the caller's RPC
// protocol (HTTP 401 for Connect, a grpc-status trailer for gRPC), so
// Connect and gRPC clients see the same error Interceptor would give them.
//
//	mux.Handle(path, v.Middleware(handler))
func (v *Validator) Middleware(next http.Handler) http.Handler {
	i := &interceptor{v: v}
	errorWriter := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, err := i.authenticate(r.Context(), r.Header)
		if err != nil {
			// The body is left unread; closing spares the server from
			// draining it to reuse the connection.
			w.Header().Set("Connection", "close")
			_ = errorWriter.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
