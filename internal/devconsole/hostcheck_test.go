package devconsole

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAllowedHosts(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8090}
	lan := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8090}
	wildcard := &net.TCPAddr{IP: net.IPv4zero, Port: 8090}
	tests := []struct {
		name       string
		configured string
		bound      net.Addr
		host       string
		want       bool
	}{
		{"localhost with a port", "127.0.0.1:8090", loopback, "localhost:8090", true},
		{"localhost in capitals", "127.0.0.1:8090", loopback, "LOCALHOST:8090", true},
		{"localhost on another port (a tunnel)", "127.0.0.1:8090", loopback, "localhost:9000", true},
		{"localhost without a port", "127.0.0.1:8090", loopback, "localhost", true},
		{"127.0.0.1", "127.0.0.1:8090", loopback, "127.0.0.1:8090", true},
		{"anywhere in 127.0.0.0/8", "127.0.0.1:8090", loopback, "127.45.6.7:8090", true},
		{"[::1] with a port", "127.0.0.1:8090", loopback, "[::1]:8090", true},
		{"[::1] without a port", "127.0.0.1:8090", loopback, "[::1]", true},
		{"a rebinding name", "127.0.0.1:8090", loopback, "evil.example:8090", false},
		{"a name that starts like localhost", "127.0.0.1:8090", loopback, "localhost.evil.example:8090", false},
		{"a subdomain of localhost is a resolver's to decide", "127.0.0.1:8090", loopback, "app.localhost:8090", false},
		{"localhost with a trailing dot is a resolver's to decide", "127.0.0.1:8090", loopback, "localhost.:8090", false},
		{"the wildcard address is no name", "127.0.0.1:8090", loopback, "0.0.0.0:8090", false},
		{"another machine's address", "127.0.0.1:8090", loopback, "192.0.2.10:8090", false},
		{"no Host at all", "127.0.0.1:8090", loopback, "", false},
		{"the address the operator bound to", "192.0.2.10:8090", lan, "192.0.2.10:8090", true},
		{"a name the operator bound to", "devbox.example:8090", lan, "DevBox.example:8090", true},
		{"the address that name resolved to", "devbox.example:8090", lan, "192.0.2.10:8090", true},
		{"loopback still, when bound elsewhere", "192.0.2.10:8090", lan, "localhost:8090", true},
		{"a neighbour of the bound address", "192.0.2.10:8090", lan, "192.0.2.11:8090", false},
		{"bound to every interface, only loopback names", "0.0.0.0:8090", wildcard, "192.0.2.10:8090", false},
		{"bound to every interface, loopback works", ":8090", wildcard, "127.0.0.1:8090", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, newAllowedHosts(tc.configured, tc.bound).allows(tc.host))
		})
	}
}

func TestFromOwnPage(t *testing.T) {
	tests := []struct {
		name, secFetchSite, origin string
		want                       bool
	}{
		{"the host page's own fetch", "same-origin", "http://127.0.0.1:8090", true},
		{"the developer typing the URL", "none", "", true},
		{"a client that is no browser", "", "", true},
		{"an older browser, same origin", "", "http://127.0.0.1:8090", true},
		{"another site", "cross-site", "http://evil.example", false},
		{"the plugin origin, same site but not same origin", "same-site", "http://127.0.0.1:8091", false},
		{"an older browser, another origin", "", "http://evil.example", false},
		{"an older browser, the plugin origin", "", "http://127.0.0.1:8091", false},
		{"a sandboxed or opaque origin", "", "null", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8090/host/token", nil)
			if tc.secFetchSite != "" {
				r.Header.Set("Sec-Fetch-Site", tc.secFetchSite)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			assert.Equal(t, tc.want, fromOwnPage(r))
		})
	}
}
