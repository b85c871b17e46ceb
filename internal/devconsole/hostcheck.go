package devconsole

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The console acts with the developer's kubeconfig, so whoever can talk to
// it can act with those credentials (within allowedResources). Binding to
// loopback keeps other machines out, but not other web pages: a page the
// developer visits can point a name it controls at 127.0.0.1 (DNS
// rebinding) and then be same-origin with the console, read a token from
// /host/config.json and drive the kube-api-proxy. The browser still sends
// that name in Host, so each listener answers only requests addressed to
// it by a name no web page can point elsewhere.

// allowedHosts are the names one listener answers to: the loopback names
// (on any port, since an SSH tunnel or port mapping changes the port a
// browser sees) and the exact host the operator bound it to when that is
// not loopback.
type allowedHosts struct {
	configured []string
}

// newAllowedHosts reads the operator's own host from the configured listen
// address and from the address actually bound (a name the operator gave
// resolves to the IP the console then prints). A wildcard bind (0.0.0.0,
// [::]) names no host, so only loopback names are answered then.
func newAllowedHosts(configuredAddr string, bound net.Addr) allowedHosts {
	var a allowedHosts
	for _, addr := range []string{configuredAddr, bound.String()} {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || host == "" || isLoopbackHost(host) {
			continue
		}
		if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
			continue
		}
		a.configured = append(a.configured, strings.ToLower(host))
	}
	return a
}

// allows reports whether a request's Host header addresses this console.
func (a allowedHosts) allows(hostHeader string) bool {
	host := hostOf(hostHeader)
	if host == "" {
		return false
	}
	if isLoopbackHost(host) {
		return true
	}
	for _, c := range a.configured {
		if strings.EqualFold(host, c) {
			return true
		}
	}
	return false
}

// hostOf is the host of a Host header, without port or IPv6 brackets.
func hostOf(hostHeader string) string {
	if host, _, err := net.SplitHostPort(hostHeader); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostHeader, "["), "]")
}

// isLoopbackHost accepts "localhost" and loopback IP literals only. Not
// "localhost." or "*.localhost": whether those reach loopback is up to a
// resolver, and a name a resolver decides is a name it can rebind.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// isLoopbackAddr reports whether a listener is reachable from this machine
// only.
func isLoopbackAddr(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// guardHost answers 403 to any request whose Host this listener does not
// answer to, before anything else sees it.
func guardHost(hosts allowedHosts, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.allows(r.Host) {
			log.Warn("devconsole: refused a request for a host name it does not answer to (DNS rebinding?)", "host", r.Host, "path", r.URL.Path)
			http.Error(w, "devconsole: this console answers only to localhost, 127.0.0.0/8, [::1] and the address it was bound to, not to "+r.Host, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fromOwnPage reports whether a request for a token comes from the
// console's own page (or from no page at all: the developer typing the URL,
// curl). A token's response is unreadable cross-origin anyway; refusing
// the request keeps that from resting on CORS alone. Sec-Fetch-Site is the
// browser's own verdict; without it, Origin (which browsers send on every
// cross-origin fetch and on every POST) must be the console's.
func fromOwnPage(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
		origin := r.Header.Get("Origin")
		return origin == "" || strings.EqualFold(origin, "http://"+r.Host)
	default: // same-site (the plugin origin is one) or cross-site
		return false
	}
}

// ownPageOnly wraps the token endpoints with fromOwnPage.
func ownPageOnly(log *slog.Logger, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !fromOwnPage(r) {
			log.Warn("devconsole: refused a token request from another origin", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "secFetchSite", r.Header.Get("Sec-Fetch-Site"))
			http.Error(w, "devconsole: tokens are handed only to the console's own page", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}
