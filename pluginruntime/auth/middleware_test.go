package auth_test

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

// The middleware refuses in each RPC protocol's own form, so every client
// sees Unauthenticated, and hands the handler the verified claims.
func TestMiddleware(t *testing.T) {
	key, rotated := newKey(t), newKey(t)
	validator, err := auth.NewValidator(auth.Config{
		Issuer:   issuer,
		Audience: audience,
		Keys:     auth.StaticKeySet(&key.PublicKey, &rotated.PublicKey),
		Now:      func() time.Time { return now },
	})
	require.NoError(t, err)
	path, handler := pluginmetadatav1connect.NewPluginMetadataServiceHandler(whoAmI{})
	mux := http.NewServeMux()
	mux.Handle(path, validator.Middleware(handler))
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true // gRPC needs it
	srv.StartTLS()
	t.Cleanup(srv.Close)

	protocols := map[string][]connect.ClientOption{
		"connect":  nil,
		"grpc":     {connect.WithGRPC()},
		"grpc-web": {connect.WithGRPCWeb()},
	}
	for name, opts := range protocols {
		t.Run(name, func(t *testing.T) {
			client := pluginmetadatav1connect.NewPluginMetadataServiceClient(srv.Client(), srv.URL, opts...)
			call := func(token string) (*connect.Response[pluginmetadatav1.GetStatusResponse], error) {
				req := connect.NewRequest(&pluginmetadatav1.GetStatusRequest{})
				if token != "" {
					req.Header().Set("Authorization", "Bearer "+token)
				}
				return client.GetStatus(context.Background(), req)
			}
			_, err := call("")
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "no token: %v", err)
			_, err = call(sign(t, newKey(t), validClaims()))
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "another key: %v", err)
			for keyName, signer := range map[string]*ecdsa.PrivateKey{"first key": key, "rotated key": rotated} {
				res, err := call(sign(t, signer, validClaims()))
				require.NoError(t, err, keyName)
				assert.Equal(t, "user-42@org-1", res.Msg.GetMessage(), "the handler sees the verified claims")
			}
		})
	}
}
