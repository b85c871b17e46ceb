package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/fundament-oss/ceph-rook/internal/browser"
)

// stepT is the browser driver's T for a program: a failure is recorded
// and, on Fatalf and FailNow, stops the goroutine running the steps, as
// testing does for a test.
type stepT struct {
	log      func(format string, args ...any)
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (t *stepT) Helper() {}

func (t *stepT) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, fmt.Sprintf(format, args...))
}

func (t *stepT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *stepT) FailNow() {
	t.Errorf("failed")
	runtime.Goexit()
}

func (t *stepT) Logf(format string, args ...any) { t.log(format, args...) }

func (t *stepT) Cleanup(fn func()) { t.cleanups = append(t.cleanups, fn) }

func (t *stepT) TempDir() string {
	dir, err := os.MkdirTemp("", "ceph-rook-e2e-browser-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// inBrowser runs steps in a headless Chromium on the console at
// consoleURL and fails when a step fails or any page violated the CSP,
// threw, logged an error or opened a dialog.
func (r *run) inBrowser(consoleURL string, steps func(b *browser.Browser)) error {
	t := &stepT{log: r.step}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := browser.Start(t, consoleURL)
		steps(b)
		if problems := b.Problems(); len(problems) > 0 {
			t.Errorf("the console's pages: %s", strings.Join(problems, "; "))
		}
	}()
	<-done
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	if len(t.failures) > 0 {
		return fmt.Errorf("in the console: %s", strings.Join(t.failures, "; "))
	}
	return nil
}
