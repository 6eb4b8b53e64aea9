package tap

import (
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A Feed is a tap that moves no bytes itself: its caller relays the
// traffic (the HTTP tap does, request by request) and hands it each frame
// whole, once it crossed. The feed records them, judges them with the
// session's tracker and serves them to live views, as Run does the frames
// it splits from a pipe. Frame may be called from any goroutine; frames
// are recorded in the order of the calls.
type Feed struct {
	t    *Tap
	stop func()
}

// Feed starts the session's recorder (and, with Options.Listen, the live
// socket) for frames handed over whole. A session file that cannot be
// written is said through Options.Warn, and the feed goes on.
func (t *Tap) Feed() *Feed {
	if err := t.startRecorder(t.redact); err != nil {
		t.opts.Warn(err.Error())
	}
	t.setUpHolding()
	return &Feed{t: t, stop: t.serveViews()}
}

// Frame records one frame that crossed in direction dir, with what HTTP
// said of it. body is copied; h must not change after the call.
func (f *Feed) Frame(dir classify.Direction, body []byte, h *sessions.HTTPInfo) {
	f.t.rec.note(item{at: now(), dir: dir, data: body, whole: true, http: h})
}

// Close ends the session: the file gets its last frames and an exit with
// status 0, live views their end, and the socket goes.
func (f *Feed) Close() Result {
	res := Result{Path: f.t.path}
	f.t.intercept.endSession()
	f.t.closeSession(res, f.stop)
	return res
}
