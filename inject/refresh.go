package inject

import "github.com/rpctap/rpctap/classify"

// RequestID is the id (JSON text) of the request body, sent in dir, and
// whether body is a request with an id, one whose answer can be captured.
func RequestID(body []byte, dir classify.Direction) (string, bool) {
	m := classify.Classify(body, dir, classify.JSONRPC)
	if m.Kind != classify.KindRequest || !m.HasID() {
		return "", false
	}
	return string(m.ID().Raw), true
}

// Refresh gives each request of frames whose id is one the caller gave
// out (given) and which was sent already in dir (see Used) a fresh id
// (Next), which it adds to given. It returns a copy of frames with those
// requests rewritten, and each id it renamed with its new one, in order,
// so that the caller can rename them in its own text.
func (a *IDs) Refresh(frames []Frame, dir classify.Direction, given map[string]bool) (out []Frame, renamed [][2]string) {
	out = append([]Frame(nil), frames...)
	for i, f := range out {
		m := classify.Classify(f.Body, dir, classify.JSONRPC)
		if m.Kind != classify.KindRequest || !m.HasID() {
			continue
		}
		old := string(m.ID().Raw)
		if !given[old] || !a.Used(dir, m.ID().Raw) {
			continue
		}
		id := a.Next(dir)
		body, err := Resend(&m, id)
		if err != nil {
			continue
		}
		out[i].Body = body
		given[id] = true
		renamed = append(renamed, [2]string{old, id})
	}
	return out, renamed
}

// Reused is the id (JSON text) of the first request of frames whose id
// the caller gave out (given) and which was sent already in dir, or ""
// when there is none: Refresh would give it a fresh one.
func (a *IDs) Reused(frames []Frame, dir classify.Direction, given map[string]bool) string {
	for _, f := range frames {
		m := classify.Classify(f.Body, dir, classify.JSONRPC)
		if m.Kind == classify.KindRequest && m.HasID() && given[string(m.ID().Raw)] && a.Used(dir, m.ID().Raw) {
			return string(m.ID().Raw)
		}
	}
	return ""
}
