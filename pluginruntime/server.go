package pluginruntime

import (
	"context"
	"errors"
	"net/http"

	"connectrpc.com/connect"

	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

// The probe endpoints. The platform's plugin controller points the pod's
// liveness and readiness probes at them.
const (
	LivenessPath  = "/livez"
	ReadinessPath = "/readyz"
)

// routes is the plugin's one HTTP surface; the platform's Service and
// probes point at it.
func (r *runtime) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LivenessPath, func(w http.ResponseWriter, _ *http.Request) {
		// Alive means the process serves HTTP; a failing plugin is reported
		// through its phase, not by getting restarted.
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET "+ReadinessPath, func(w http.ResponseWriter, _ *http.Request) {
		if !r.board.isReady() {
			writeText(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
	metadataOptions := append(r.limits.connectOptions(), r.opts.metadataOptions...)
	metadataPath, metadata := pluginmetadatav1connect.NewPluginMetadataServiceHandler(&metadataService{r: r}, metadataOptions...)
	if r.auth != nil {
		// Outside Connect, so an unauthenticated call is refused before its
		// body is read and before any interceptor sees it.
		metadata = r.auth.Middleware(metadata)
	}
	mux.Handle(metadataPath, metadata)
	if cp, ok := r.plugin.(ConsoleProvider); ok {
		mux.Handle("GET /console/", http.StripPrefix("/console/", consoleHandler(cp.ConsoleAssets(), r.consoleCSP)))
	}
	return limitBodies(r.limits.MaxBodyBytes, withNosniff(mux))
}

// withNosniff tells browsers to take every response as the type it
// declares, never to guess script out of text.
func withNosniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body + "\n"))
}

// metadataService is the Connect PluginMetadataService the platform's
// controller polls.
type metadataService struct {
	r *runtime
}

var _ pluginmetadatav1connect.PluginMetadataServiceHandler = (*metadataService)(nil)

func (s *metadataService) GetStatus(context.Context, *connect.Request[pluginmetadatav1.GetStatusRequest]) (*connect.Response[pluginmetadatav1.GetStatusResponse], error) {
	status := s.r.board.get()
	phase, message := string(status.Phase), status.Message
	return connect.NewResponse(&pluginmetadatav1.GetStatusResponse{Phase: &phase, Message: &message}), nil
}

func (s *metadataService) RequestUninstall(context.Context, *connect.Request[pluginmetadatav1.RequestUninstallRequest]) (*connect.Response[pluginmetadatav1.RequestUninstallResponse], error) {
	switch err := s.r.requestUninstall(); {
	case err == nil:
		return connect.NewResponse(&pluginmetadatav1.RequestUninstallResponse{}), nil
	case errors.Is(err, errNoInstaller):
		return nil, connect.NewError(connect.CodeUnimplemented, err)
	case errors.Is(err, errStopping):
		return nil, connect.NewError(connect.CodeUnavailable, err)
	default:
		return nil, connect.NewError(connect.CodeFailedPrecondition, err)
	}
}
