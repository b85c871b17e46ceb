package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// ChromiumPath is Debian's chromium (apt-get install chromium).
const ChromiumPath = "/usr/bin/chromium"

// Frames of the host page.
const (
	PageFrame  = "#page-frame"
	SheetFrame = "#sheet-frame"
)

// How long a wait lasts and how often it looks.
const (
	DefaultWait = 15 * time.Second
	PollEvery   = 100 * time.Millisecond
)

// T is what the driver needs of testing.TB.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// watchScript runs in every frame before its own scripts and turns what the
// DevTools protocol does not report as such into console errors the
// recorder can see: CSP violations and unhandled promise rejections.
const watchScript = `
window.addEventListener('securitypolicyviolation', (e) => {
  console.error('CSP-VIOLATION ' + e.violatedDirective + ' blocked ' + e.blockedURI + ' at ' + e.sourceFile + ':' + e.lineNumber);
});
window.addEventListener('unhandledrejection', (e) => {
  console.error('UNHANDLED-REJECTION ' + String((e.reason && e.reason.stack) || e.reason));
});
`

// problems collects what must never happen on any page: CSP violations,
// uncaught errors, console errors and dialogs (an alert means injected code
// ran).
type problems struct {
	mu   sync.Mutex
	list []string
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// Browser is one Chromium tab on the console. T may be replaced between
// steps (a test's subtests each set their own).
type Browser struct {
	T           T
	ctx         context.Context
	consoleURL  string
	problems    *problems
	screenshots string
}

// Start opens a tab on the console at consoleURL; Chromium stops at T's
// cleanup.
func Start(t T, consoleURL string) *Browser {
	t.Helper()
	_, err := os.Stat(ChromiumPath)
	require.NoError(t, err, "Chromium is needed for the console tests: apt-get install -y chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })

	b := &Browser{T: t, ctx: ctx, consoleURL: consoleURL, problems: &problems{}, screenshots: screenshotDir(t)}
	// Open the tab first so the listener sees everything from its start.
	require.NoError(t, chromedp.Do(ctx))
	require.NoError(t, chromedp.Listen(ctx, b.record))
	_, err = chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchScript})
	require.NoError(t, err)
	return b
}

// Problems are the CSP violations, uncaught errors, console errors and
// dialogs seen so far, on any page.
func (b *Browser) Problems() []string { return b.problems.all() }

func (b *Browser) record(ev any) {
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		b.problems.add("uncaught exception: %s", exceptionText(e.ExceptionDetails))
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			b.problems.add("console.%s: %s", e.Type, consoleArgs(e.Args))
		}
	case *cdplog.EventEntryAdded:
		// Failed requests (a 403 or 422 the page handles) are the network's
		// business; security entries are CSP refusals.
		if e.Entry.Source == cdplog.EntrySourceSecurity || strings.Contains(e.Entry.Text, "Content Security Policy") {
			b.problems.add("CSP: %s", e.Entry.Text)
		}
	case *page.EventJavascriptDialogOpening:
		b.problems.add("a %s dialog opened: %q", e.Type, e.Message)
		// A dialog blocks the page; close it from outside the event loop.
		go func() {
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return ""
	}
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", d.Text, d.URL, d.LineNumber)
}

func consoleArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if len(a.Value) > 0 {
			var s string
			if json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
				continue
			}
			parts = append(parts, string(a.Value))
		} else {
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

func screenshotDir(t T) string {
	base := os.Getenv("ARTIFACTS")
	if base == "" {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "ceph-rook-console-screenshots")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Logf("console screenshots are written to %s", dir)
	return dir
}

// Open loads a host route, e.g. /view/disks.ceph.fundament.io.
func (b *Browser) Open(route string) {
	b.T.Helper()
	require.NoError(b.T, chromedp.Do(b.ctx, chromedp.Navigate(b.consoleURL+route)))
}

// Screenshot saves the whole host page (the iframes sized to their pages).
func (b *Browser) Screenshot(name string) {
	b.T.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	require.NoError(b.T, err)
	path := filepath.Join(b.screenshots, name+".png")
	require.NoError(b.T, os.WriteFile(path, png, 0o644))
	b.T.Logf("screenshot %s", path)
}

// Call runs fn (a JavaScript function, this = the element) on the first
// element matching sel inside the frame, in the frame's own context, and
// returns its JSON result. found is false when the frame or element is not
// there (yet).
func (b *Browser) Call(frame, sel, fn string, args ...any) (result json.RawMessage, found bool, err error) {
	callArgs := make([]*runtime.CallArgument, 0, len(args))
	for _, a := range args {
		raw, err := json.Marshal(a)
		if err != nil {
			return nil, false, err
		}
		callArgs = append(callArgs, &runtime.CallArgument{Value: raw})
	}
	found, err = b.onNode(frame, sel, func(nodeID cdp.NodeID) error {
		resolved, err := chromedp.Call(b.ctx, dom.ResolveNode, dom.ResolveNodeParams{NodeID: nodeID})
		if err != nil {
			return err
		}
		res, err := chromedp.Call(b.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn,
			ObjectID:            resolved.Object.ObjectID,
			Arguments:           callArgs,
			ReturnByValue:       new(true),
			AwaitPromise:        new(true),
		})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("%s on %s %s: %s", fn, frame, sel, exceptionText(res.ExceptionDetails))
		}
		result = json.RawMessage(res.Result.Value)
		return nil
	})
	return result, found, err
}

// onNode runs use on the node of the first element matching sel in frame;
// found is false when the frame or element is not there (yet).
//
// Finding the element and using its node are separate DevTools calls, so a
// page that renders again in between (a list refreshed by a watch, a frame
// navigated) leaves the node found gone from the document: the element is
// then looked up again, and an element replaced every time is reported as
// not there yet, as it is for anyone looking.
func (b *Browser) onNode(frame, sel string, use func(cdp.NodeID) error) (found bool, err error) {
	for range staleNodeRetries {
		nodeID, found, err := queryInFrame(b.ctx, frame, sel)
		if err != nil || !found {
			return false, err
		}
		if err := use(nodeID); !isStaleNode(err) {
			return true, err
		}
	}
	return false, nil
}

// staleNodeRetries bounds how often onNode looks an element up again after
// the document replaced it.
const staleNodeRetries = 5

// staleNodeErrors are the DevTools protocol's words for a node (or the
// frame context it was found in) that left the document after it was found.
var staleNodeErrors = []string{
	"does not belong to the document",
	"Could not find node with given id",
	"No node with given id found",
	"Node is detached from document",
	"Cannot find context with specified id",
	"Cannot find object with id",
}

func isStaleNode(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return slices.ContainsFunc(staleNodeErrors, func(s string) bool { return strings.Contains(msg, s) })
}

// queryInFrame finds sel in the document of the iframe matching frame. The
// plugin origin is same-site with the console (both 127.0.0.1), so Chromium
// keeps the frame in the page's process and its document in the page's DOM.
func queryInFrame(ctx context.Context, frame, sel string) (cdp.NodeID, bool, error) {
	doc, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{Depth: new(int64(-1)), Pierce: new(true)})
	if err != nil {
		return 0, false, err
	}
	frameNode, err := chromedp.Call(ctx, dom.QuerySelector, dom.QuerySelectorParams{NodeID: doc.Root.NodeID, Selector: frame})
	if err != nil || frameNode.NodeID == 0 {
		return 0, false, nil
	}
	iframe := findNode(doc.Root, frameNode.NodeID)
	if iframe == nil || iframe.ContentDocument == nil {
		return 0, false, nil
	}
	found, err := chromedp.Call(ctx, dom.QuerySelector, dom.QuerySelectorParams{NodeID: iframe.ContentDocument.NodeID, Selector: sel})
	if err != nil || found.NodeID == 0 {
		return 0, false, nil
	}
	return found.NodeID, true, nil
}

func findNode(n *cdp.Node, id cdp.NodeID) *cdp.Node {
	if n.NodeID == id {
		return n
	}
	for _, c := range n.Children {
		if found := findNode(c, id); found != nil {
			return found
		}
	}
	if n.ContentDocument != nil {
		return findNode(n.ContentDocument, id)
	}
	return nil
}

// WaitFor polls until sel exists in the frame and fn (default: true)
// returns true on it.
func (b *Browser) WaitFor(frame, sel string, fn ...string) {
	b.T.Helper()
	b.WaitForWithin(DefaultWait, frame, sel, fn...)
}

// WaitForWithin is WaitFor with its own deadline, for what a real system
// takes longer to do than a page to render.
func (b *Browser) WaitForWithin(wait time.Duration, frame, sel string, fn ...string) {
	b.T.Helper()
	check := "function() { return true; }"
	if len(fn) > 0 {
		check = fn[0]
	}
	deadline := time.Now().Add(wait)
	var lastErr error
	for time.Now().Before(deadline) {
		res, found, err := b.Call(frame, sel, check)
		lastErr = err
		if err == nil && found && string(res) == "true" {
			return
		}
		time.Sleep(PollEvery)
	}
	text, _ := b.FrameText(frame)
	b.T.Fatalf("waiting for %s in %s: not there after %s (last error: %v); the frame shows:\n%s\nproblems so far: %v", sel, frame, wait, lastErr, text, b.problems.all())
}

// WaitText waits until the element's text contains want.
func (b *Browser) WaitText(frame, sel, want string) {
	b.T.Helper()
	b.WaitFor(frame, sel, TextContains(want))
}

// TextContains is a WaitFor check: the element's text contains want.
func TextContains(want string) string {
	return fmt.Sprintf("function() { return this.textContent.includes(%s); }", jsString(want))
}

func jsString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// Text returns an element's textContent.
func (b *Browser) Text(frame, sel string) string {
	b.T.Helper()
	b.WaitFor(frame, sel)
	res, found, err := b.Call(frame, sel, "function() { return this.textContent; }")
	require.NoError(b.T, err)
	require.True(b.T, found, "%s in %s went away", sel, frame)
	var s string
	require.NoError(b.T, json.Unmarshal(res, &s))
	return s
}

// FrameText is the frame's visible text ("" when the frame is not there).
func (b *Browser) FrameText(frame string) (string, error) {
	res, found, err := b.Call(frame, "body", "function() { return this.innerText; }")
	if err != nil || !found {
		return "", err
	}
	var s string
	err = json.Unmarshal(res, &s)
	return s, err
}

// Count is the number of elements matching sel in the frame (0 if the
// frame is not there).
func (b *Browser) Count(frame, sel string) int {
	b.T.Helper()
	res, found, err := b.Call(frame, "html", "function(sel) { return this.querySelectorAll(sel).length; }", sel)
	require.NoError(b.T, err)
	if !found {
		return 0
	}
	var n int
	require.NoError(b.T, json.Unmarshal(res, &n))
	return n
}

// Click clicks an element in a frame, as the DOM does for a user's click.
func (b *Browser) Click(frame, sel string) {
	b.T.Helper()
	b.WaitFor(frame, sel)
	_, found, err := b.Call(frame, sel, "function() { this.click(); }")
	require.NoError(b.T, err)
	require.True(b.T, found, "%s in %s went away before the click", sel, frame)
}

// Fill sets a control's value and fires input and change, as typing does.
func (b *Browser) Fill(frame, sel, value string) {
	b.T.Helper()
	b.WaitFor(frame, sel)
	_, found, err := b.Call(frame, sel, `function(v) {
  this.value = v;
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
}`, value)
	require.NoError(b.T, err)
	require.True(b.T, found, "%s in %s went away before it was filled", sel, frame)
}

// HostPath is the host page's current path and query.
func (b *Browser) HostPath() string {
	b.T.Helper()
	path, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
	require.NoError(b.T, err)
	return path
}

// WaitHostPath waits for the host to be on a route.
func (b *Browser) WaitHostPath(want string) {
	b.T.Helper()
	deadline := time.Now().Add(DefaultWait)
	for time.Now().Before(deadline) {
		if b.HostPath() == want {
			return
		}
		time.Sleep(PollEvery)
	}
	b.T.Fatalf("the console is on %s, want %s", b.HostPath(), want)
}

// SheetOpen reports whether the host shows a sheet.
func (b *Browser) SheetOpen() bool {
	b.T.Helper()
	hidden, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.getElementById('sheet').hidden`))
	require.NoError(b.T, err)
	return !hidden
}
