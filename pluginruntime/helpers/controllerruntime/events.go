package controllerruntime

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// NoteLimit is the longest Event note the API server accepts: it refuses
// a longer one (k8s.io/kubernetes pkg/apis/core/validation, events.go,
// NoteLengthLimit), and the recorder drops the Event.
const NoteLimit = 1024

// noteCut ends a note that was cut to fit.
const noteCut = " …"

// BoundedRecorder records through r with every note cut to NoteLimit, so
// that a long message (a retirement's manual steps, a parse error) arrives
// shortened instead of not at all.
func BoundedRecorder(r events.EventRecorder) events.EventRecorder {
	return boundedRecorder{r}
}

type boundedRecorder struct{ events.EventRecorder }

func (b boundedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	b.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", BoundNote(fmt.Sprintf(note, args...)))
}

// BoundNote cuts note to at most NoteLimit bytes on a character boundary,
// marking the cut.
func BoundNote(note string) string {
	if len(note) <= NoteLimit {
		return note
	}
	end := NoteLimit - len(noteCut)
	for end > 0 && !utf8.RuneStart(note[end]) {
		end--
	}
	return note[:end] + noteCut
}
