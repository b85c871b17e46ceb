package browser

import (
	"encoding/json"
	"fmt"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Press types keys (chromedp/kb's kb.Tab, kb.Escape, kb.Enter, or text) to
// whatever has focus, as a keyboard does: the browser moves focus on Tab
// and activates a focused button on Enter itself, which a script's
// synthetic events never make it do.
func (b *Browser) Press(keys string, modifiers ...chromedp.Modifier) {
	b.T.Helper()
	b.emulateFocus()
	require.NoError(b.T, chromedp.Do(b.ctx, chromedp.KeyEvent(keys, chromedp.KeyModifiers(modifiers...))))
}

// Focused describes the element that has focus in the frame's document
// (tag, name or data-action, data-link), or "" when that document does not
// have focus: a way to follow focus through frames.
func (b *Browser) Focused(frame string) string {
	b.T.Helper()
	b.emulateFocus()
	res, found, err := b.Call(frame, "html", `function() {
  if (!document.hasFocus()) return '';
  const el = document.activeElement;
  if (!el || el === document.body) return 'body';
  const key = el.getAttribute('name') || el.getAttribute('data-action') || el.getAttribute('data-link') || el.id || el.textContent.trim();
  return el.tagName.toLowerCase() + '[' + key + ']';
}`)
	require.NoError(b.T, err)
	if !found {
		return ""
	}
	var s string
	require.NoError(b.T, json.Unmarshal(res, &s))
	return s
}

// Host runs fn (a JavaScript function, this = the element) on the first
// element matching sel in the host page itself and returns its JSON result.
func (b *Browser) Host(sel, fn string) (json.RawMessage, error) {
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) throw new Error('no ' + %s + ' in the host page'); return (%s).call(el); })()`,
		jsString(sel), jsString(sel), fn)
	return chromedp.Run(b.ctx, chromedp.Evaluate[json.RawMessage](expr))
}

// emulateFocus tells the tab it has focus, as a headless window otherwise
// does not: without it no document reports focus.
func (b *Browser) emulateFocus() {
	b.T.Helper()
	_, err := chromedp.Call(b.ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
	require.NoError(b.T, err)
}
