package httptap

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
)

// This file holds the one rewrite the proxy makes: the legacy HTTP+SSE
// transport (MCP 2024-11-05) opens with a GET whose event stream's first
// event, "endpoint", gives the URL the host is to POST its messages to.
// An absolute URL at the target would send the host around the proxy, so
// it is rewritten to the proxy's own; a relative one already points at
// the proxy (the host resolves it against the URL it was given).

// holdMax is how much of a GET's event stream the proxy holds to find
// its first event. A first event larger than that is relayed unread.
const holdMax = 64 << 10

// endpointFor says which URL the host is given for the endpoint sent
// by the server, when the host reached the proxy at self: sent itself
// unless it is an absolute URL at the target. other is the server it
// points at when that is neither the target nor the proxy.
func endpointFor(sent string, target *url.URL, self url.URL) (given, other string) {
	u, err := url.Parse(strings.TrimSpace(sent))
	if err != nil || u.Host == "" {
		return sent, "" // a path: the host resolves it against the proxy's URL
	}
	if !sameHost(u.Host, target.Host) || (u.Scheme != "" && !strings.EqualFold(u.Scheme, target.Scheme)) {
		return sent, u.Scheme + "://" + u.Host
	}
	if u.Scheme != "" {
		u.Scheme = self.Scheme
	}
	u.Host = self.Host
	return u.String(), ""
}

// sameHost says whether HOST:PORT a and b name the same server, taking
// localhost and the loopback addresses for one another.
func sameHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	return errA == nil && errB == nil && pa == pb && loopback(ha) && loopback(hb)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// endpointRewriter relays a GET's event stream. It holds the stream's
// bytes until its first event has ended (an SSE host acts on an event
// only at its end, so the host sees no delay), rewrites that event's URL
// if it is an endpoint event that needs it, and from then on passes the
// bytes as they come. It is read by one goroutine, the relay's.
type endpointRewriter struct {
	in     io.ReadCloser
	target *url.URL
	self   url.URL // the proxy, as the host reached it
	held   []byte  // read from the server, not yet given to the host
	out    []byte  // ready to give
	err    error   // the server's read error, given once out has gone
	done   bool    // the first event has gone: bytes pass as they come
	// line is where the first line of held not yet read starts, looked
	// how far it was searched for its end, and field says a line before
	// it was a field: the first event has begun.
	line, looked int
	field        bool
	// sent and given are the endpoint the server sent and the one the
	// host got; other, the server it points at when not the target.
	sent, given, other string
}

func (e *endpointRewriter) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		if e.done {
			return e.in.Read(p)
		}
		e.held = slices.Grow(e.held, 4096)
		n, err := e.in.Read(e.held[len(e.held):cap(e.held)])
		e.held = e.held[:len(e.held)+n]
		e.err = err
		if err != nil || len(e.held) > holdMax {
			e.out, e.held, e.done = e.held, nil, true
		} else if end, ok := e.firstEvent(); ok {
			e.out, e.held, e.done = append(e.rewritten(e.held[:end]), e.held[end:]...), nil, true
		}
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

func (e *endpointRewriter) Close() error { return e.in.Close() }

// firstEvent finds the end of the first event held: the blank line after
// the first line that is not a comment. Each call reads on from where the
// last one stopped.
func (e *endpointRewriter) firstEvent() (end int, ok bool) {
	for {
		i := bytes.IndexAny(e.held[e.looked:], "\r\n")
		if i < 0 {
			e.looked = len(e.held)
			return 0, false
		}
		_, next, ok := cutLine(e.held[e.looked+i:])
		if !ok { // a CR, the last byte held: a CRLF's first half, perhaps
			e.looked += i
			return 0, false
		}
		line := e.held[e.line : e.looked+i]
		e.line = e.looked + i + next
		e.looked = e.line
		switch {
		case len(line) == 0 && e.field:
			return e.line, true
		case len(line) > 0 && line[0] != ':':
			e.field = true
		}
	}
}

// cutLine cuts the first line of b, ended by CR, LF or CRLF; next is
// where the following line starts. A CR at b's end may be the first half
// of a CRLF, so that line is not known to have ended yet.
func cutLine(b []byte) (line []byte, next int, ok bool) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 || (b[i] == '\r' && i+1 == len(b)) {
		return nil, 0, false
	}
	if b[i] == '\r' && b[i+1] == '\n' {
		return b[:i], i + 2, true
	}
	return b[:i], i + 1, true
}

// rewritten is ev, the first event, with its data rewritten when it is an
// endpoint event of one data line whose URL needs it.
func (e *endpointRewriter) rewritten(ev []byte) []byte {
	var typ string
	start, stop, lines := -1, -1, 0
	for i := 0; i < len(ev); {
		line, next, _ := cutLine(ev[i:])
		name, value, _ := bytes.Cut(line, []byte(":"))
		switch string(name) {
		case "event":
			typ = string(bytes.TrimPrefix(value, []byte(" ")))
		case "data":
			lines++
			start = i + len(line) - len(bytes.TrimPrefix(value, []byte(" ")))
			stop = i + len(line)
		}
		i += next
	}
	if typ != "endpoint" || lines != 1 {
		return ev
	}
	e.sent = string(ev[start:stop])
	e.given, e.other = endpointFor(e.sent, e.target, e.self)
	if e.given == e.sent {
		return ev
	}
	return append(append(append([]byte(nil), ev[:start]...), e.given...), ev[stop:]...)
}
