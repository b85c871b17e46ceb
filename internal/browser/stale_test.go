package browser

import (
	"errors"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/stretchr/testify/assert"
)

func TestIsStaleNode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&cdproto.Error{Code: -32000, Message: "Node with given id does not belong to the document"}, true},
		{fmt.Errorf("resolve: %w", &cdproto.Error{Code: -32000, Message: "Could not find node with given id"}), true},
		{&cdproto.Error{Code: -32000, Message: "Cannot find context with specified id"}, true},
		{errors.New("context deadline exceeded"), false},
		{errors.New("function() {} on #page-frame html: TypeError: x is not a function"), false},
	} {
		assert.Equal(t, tc.want, isStaleNode(tc.err), "%v", tc.err)
	}
}
