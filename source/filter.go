package source

import (
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
)

// FilterFrame is what a filter sees of an entry: the view's table and
// search and rpctap tail filter with it. payload reads the frame's bytes
// back, called only when a text token needs them.
func FilterFrame(e *sessions.Entry, payload func() []byte) *filter.Frame {
	return &filter.Frame{Dir: e.Dir, Kind: e.Kind, ID: e.ID, Method: e.Method, Codes: FilterCodes(e),
		Worst: e.Worst, Status: FilterStatus(e.Status), Fate: uint32(e.Fate().Set()), Payload: payload}
}

// FilterStatus names an entry's status as the filter language does: a
// request past its timeout, or no longer followed, still waits.
func FilterStatus(st sessions.Status) string {
	switch st {
	case sessions.StatusTimedOut, sessions.StatusUntracked:
		return "pending"
	}
	return st.String()
}

// FilterCodes is the entry's codes, with the record's redaction mark as
// finding redacted.
func FilterCodes(e *sessions.Entry) classify.CodeSet {
	c := e.Codes
	if e.Redacted {
		c = c.With(classify.CodeRedacted)
	}
	return c
}
