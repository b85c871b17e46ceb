package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// requestCounter counts requests by kind as classify names them ("PATCH
// disks/status", "WATCH configmaps").
type requestCounter interface {
	requests() (map[string]int, error)
}

func (p *countingProxy) requests() (map[string]int, error) { return p.snapshot(), nil }

// apiServerCounter reads the API server's own request counts
// (apiserver_request_total on /metrics): how a plugin with nothing in
// front of it is counted. The API server counts every client, the
// benchmark's too: a caller takes off what it sent itself.
type apiServerCounter struct {
	metrics rest.Interface
}

func newAPIServerCounter(cfg *rest.Config) (*apiServerCounter, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &apiServerCounter{metrics: cs.CoreV1().RESTClient()}, nil
}

func (a *apiServerCounter) requests() (map[string]int, error) {
	raw, err := a.metrics.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		return nil, fmt.Errorf("read the API server's metrics: %w", err)
	}
	return ParseRequestCounts(raw)
}

var metricLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)

// ParseRequestCounts sums apiserver_request_total by request kind, named as
// classify names what the proxy sees: the verb (LIST and GET both GET, as
// on the wire; APPLY is a PATCH), the resource and "/" its subresource.
func ParseRequestCounts(metrics []byte) (map[string]int, error) {
	counts := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			return nil, fmt.Errorf("unreadable metric line %q", line)
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("unreadable metric line %q: %w", line, err)
		}
		l := map[string]string{}
		for _, m := range metricLabel.FindAllStringSubmatch(labels, -1) {
			l[m[1]] = m[2]
		}
		verb := l["verb"]
		switch verb {
		case "LIST":
			verb = "GET"
		case "APPLY":
			verb = "PATCH"
		}
		resource := l["resource"]
		if l["subresource"] != "" {
			resource += "/" + l["subresource"]
		}
		counts[verb+" "+resource] += int(n)
	}
	return counts, sc.Err()
}
