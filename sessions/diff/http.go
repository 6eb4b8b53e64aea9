package diff

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// DiffHTTPStatus is a difference in the HTTP statuses that answered the
// same kind of exchange (sessions the HTTP tap recorded).
const DiffHTTPStatus = "http status changed"

// httpStatuses is what diff keeps of an HTTP session's exchanges: the
// statuses that answered each kind of exchange. An exchange's kind is
// its HTTP method and what its request carried ("POST tools/call echo",
// "POST notifications/initialized", "GET"), never its number, session
// id or time, which differ from run to run.
type httpStatuses struct {
	open map[int64]string // exchange → its kind, until its status comes
	// by kind: each status, and the line of the first frame it answered
	// with.
	by map[string]map[int]int64
}

// maxOpenExchanges bounds the exchanges awaiting their status (a host
// may open many that never see one); past it, new ones are left out.
const maxOpenExchanges = 4096

// frame takes in a frame of line, classified as m, with the http object
// raw: a request's frame names its exchange's kind, the first frame of
// the response with a status gives the exchange's status.
func (h *httpStatuses) frame(line int64, dir classify.Direction, m *classify.Message, raw []byte, name string, intern func(string) string) {
	info, ok := sessions.ParseHTTP(raw)
	if !ok {
		return
	}
	if h.open == nil {
		h.open, h.by = map[int64]string{}, map[string]map[int]int64{}
	}
	switch {
	case dir == classify.H2S && info.Status == 0:
		if _, seen := h.open[info.Exchange]; seen || len(h.open) >= maxOpenExchanges {
			return
		}
		what := ""
		switch m.Kind {
		case classify.KindRequest:
			what = name
		case classify.KindNotification:
			what = m.Method()
		case classify.KindHTTP:
		default:
			what = m.Kind.String()
		}
		h.open[info.Exchange] = intern(strings.TrimSpace(info.Method + " " + what))
	case dir == classify.S2H && info.Status != 0:
		kind, ok := h.open[info.Exchange]
		if !ok {
			return
		}
		delete(h.open, info.Exchange)
		st := h.by[kind]
		if st == nil {
			st = map[int]int64{}
			h.by[kind] = st
		}
		if _, seen := st[info.Status]; !seen {
			st[info.Status] = line
		}
	}
}

// compareHTTP finds the kinds of exchange both sessions made that were
// answered with other statuses. A status of 400 or more that B has and
// A has not is a regression.
func compareHTTP(a, b *summary) []Difference {
	var out []Difference
	for _, kind := range sessions.SortedKeys(a.http.by, b.http.by) {
		sa, inA := a.http.by[kind]
		sb, inB := b.http.by[kind]
		if !inA || !inB || maps.Equal(keySet(sa), keySet(sb)) {
			continue
		}
		d := Difference{Kind: DiffHTTPStatus, Name: kind, Detail: "answered " + statusList(sa) + " in A, " + statusList(sb) + " in B"}
		for _, st := range slices.Sorted(maps.Keys(sb)) {
			if _, old := sa[st]; !old {
				d.Regression = d.Regression || st >= 400
				if d.LineB == 0 {
					d.LineB = sb[st]
				}
			}
		}
		for _, st := range slices.Sorted(maps.Keys(sa)) {
			if _, kept := sb[st]; !kept && d.LineA == 0 {
				d.LineA = sa[st]
			}
		}
		out = append(out, d)
	}
	return out
}

func keySet(m map[int]int64) map[int]bool {
	s := make(map[int]bool, len(m))
	for k := range m {
		s[k] = true
	}
	return s
}

// statusList is "200", "200 and 500", "200, 404 and 500".
func statusList(m map[int]int64) string {
	var words []string
	for _, st := range slices.Sorted(maps.Keys(m)) {
		words = append(words, strconv.Itoa(st))
	}
	if len(words) == 1 {
		return words[0]
	}
	return fmt.Sprintf("%s and %s", strings.Join(words[:len(words)-1], ", "), words[len(words)-1])
}
