package pluginruntime

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// The origins the console pages' Content-Security-Policy names. The page
// itself is served by the platform's plugin proxy, so that origin is
// 'self' and needs no variable; these two are the platform's to know.
const (
	// EnvConsoleOrigin is the Fundament console's origin, the only one
	// allowed to frame the pages (frame-ancestors).
	EnvConsoleOrigin = "FUNDAMENT_CONSOLE_ORIGIN"
	// EnvKubeAPIProxyOrigin is the kube-api-proxy's origin, which the pages
	// call and post forms to (connect-src, form-action).
	EnvKubeAPIProxyOrigin = "FUNDAMENT_KUBE_API_PROXY_ORIGIN"
)

// consoleOrigins are the parsed EnvConsoleOrigin and EnvKubeAPIProxyOrigin;
// an empty one was not set.
type consoleOrigins struct {
	console, kubeAPIProxy string
}

// hostPattern is what an origin's host may be made of: a name, an IPv4
// address or a bracketed IPv6 one, with a port. Anything else — a space,
// a ';' — could smuggle a directive into the policy.
var hostPattern = regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]+)?$|^\[[0-9A-Fa-f:.]+\](:[0-9]+)?$`)

func consoleOriginsFromEnviron(vars map[string]string) (consoleOrigins, error) {
	var o consoleOrigins
	var problems []string
	for _, v := range []struct {
		name string
		dst  *string
	}{{EnvConsoleOrigin, &o.console}, {EnvKubeAPIProxyOrigin, &o.kubeAPIProxy}} {
		raw := strings.TrimSpace(vars[v.name])
		if raw == "" {
			continue
		}
		origin, err := parseOrigin(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s=%q %v", v.name, raw, err))
			continue
		}
		*v.dst = origin
	}
	if len(problems) > 0 {
		return consoleOrigins{}, fmt.Errorf("invalid console origins: %s", strings.Join(problems, "; "))
	}
	return o, nil
}

// parseOrigin accepts scheme://host[:port] and nothing more.
func parseOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !hostPattern.MatchString(u.Host) ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("is not an origin (scheme://host[:port], http or https)")
	}
	return u.Scheme + "://" + u.Host, nil
}

// csp is the policy of console-host.md. An origin the platform did not give
// is left unrestricted ("*") rather than guessed: a wrong guess breaks
// every page, and the directives that stop injected script and style do not
// depend on it.
func (o consoleOrigins) csp() string {
	console, kube := o.console, o.kubeAPIProxy
	if console == "" {
		console = "*"
	}
	if kube == "" {
		kube = "*"
	}
	return strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"connect-src " + kube + " 'self'",
		"form-action " + kube + " 'self'",
		"frame-ancestors " + console,
		"base-uri 'none'",
		"object-src 'none'",
	}, "; ")
}

// consoleHandler serves the files of fsys under the console CSP, with
// nosniff so a browser runs a file only as the type its name gives. It
// serves regular files only: a directory is its index.html or 404, never a
// listing of what the plugin ships.
func consoleHandler(fsys http.FileSystem, csp string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		name := path.Clean("/" + r.URL.Path)
		f, err := fsys.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		info, err := f.Stat()
		if err == nil && info.IsDir() {
			_ = f.Close()
			if f, err = fsys.Open(path.Join(name, "index.html")); err != nil {
				http.NotFound(w, r)
				return
			}
			info, err = f.Stat()
		}
		defer f.Close()
		if err != nil || !info.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, info.Name(), info.ModTime(), f)
	})
}
