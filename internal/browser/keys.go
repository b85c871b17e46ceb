package browser

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Keys to type with PressKeys (chromedp's kb names them all).
const (
	KeyTab   = "\t"
	KeyEnter = "\r"
	KeySpace = " "
)

// PressKeys types keys into whatever has the keyboard focus, as a person
// does: real key events from the browser's input layer, so the page's
// default actions run (Tab moves the focus, Space toggles a checkbox,
// Enter presses a button) and a test proves a control works without a
// mouse.
func (b *Browser) PressKeys(keys string) {
	b.T.Helper()
	require.NoError(b.T, chromedp.Do(b.ctx, chromedp.KeyEvent(keys)))
}

// FocusOn puts the keyboard focus on the element sel in frame, as a click
// or a Tab to it would, and waits for it first.
func (b *Browser) FocusOn(frame, sel string) {
	b.T.Helper()
	b.WaitFor(frame, sel)
	found, err := b.onNode(frame, sel, func(nodeID cdp.NodeID) error {
		_, err := chromedp.Call(b.ctx, dom.Focus, dom.FocusParams{NodeID: nodeID})
		return err
	})
	require.NoError(b.T, err)
	require.True(b.T, found, "%s in %s went away before it was focused", sel, frame)
}
