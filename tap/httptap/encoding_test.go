package httptap

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func gzipped(t *testing.T, parts ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, p := range parts {
		zw.Write(p)
	}
	zw.Close()
	return buf.Bytes()
}

// rawClient sees the bytes on the wire: it neither asks for nor decodes
// gzip itself.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func TestAnEncodedResponseIsRelayedAsItCameAndItsMessageRecordedDecoded(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`
	for _, tc := range []struct {
		name, encoding string
		body           []byte
		frame, error   string // what the record holds
	}{
		{"gzip", "gzip", gzipped(t, []byte(msg)), msg, ""},
		{"deflate", "deflate", deflated(t, msg), msg, ""},
		{"gzip larger than held, decoded", "gzip", gzipped(t, bytes.Repeat([]byte(" "), maxBody), []byte(msg)), "",
			"the body is larger than rpctap holds to record (16 MiB) once decoded from gzip; it was relayed as it came"},
		{"not gzip", "gzip", []byte("this is plain text, not gzip"), "", "the body's gzip encoding could not be decoded (gzip: invalid header); it was relayed as it came"},
		{"br", "br", []byte("\x0b\x02\x80x"), "", "the body is encoded (br); rpctap relayed it without reading its messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", tc.encoding)
				w.Write(tc.body)
			})
			p := proxyTo(t, target.URL+"/mcp")
			resp, err := rawClient.Get(p.url + "/bad")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, tc.body) || resp.Header.Get("Content-Encoding") != tc.encoding {
				t.Errorf("the host got %d bytes in %q, want the target's %d in %q", len(got), resp.Header.Get("Content-Encoding"), len(tc.body), tc.encoding)
			}
			p.answersNext(t)
			_, evs := p.frames(t)
			evs = lastIs(t, evs)
			if len(evs) != 2 || string(evs[1].Frame) != tc.frame || httpOf(t, evs[1]).Error != tc.error {
				t.Errorf("the answer was recorded as %.80q %s, want %q with error %q", evs[len(evs)-1].Frame, evs[len(evs)-1].HTTP, tc.frame, tc.error)
			}
		})
	}
}

func TestAnEncodedSSEStreamIsRelayedAsItCameAndEachEventRecordedAsItComes(t *testing.T) {
	events := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	}
	next := make(chan struct{})
	var sent bytes.Buffer
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(io.MultiWriter(w, &sent))
		for i, e := range events {
			io.WriteString(zw, "id: "+string(rune('1'+i))+"\ndata: "+e+"\n\n")
			zw.Flush()
			w.(http.Flusher).Flush()
			if i == 0 {
				<-next // the first event is recorded before the second is written
			}
		}
		zw.Close()
	})
	p := proxyTo(t, target.URL+"/mcp")
	resp, err := rawClient.Get(p.url + "/bad")
	if err != nil {
		t.Fatal(err)
	}
	if !waitFor(func() bool { return p.feedHas(t, "notifications/progress") }) {
		t.Error("the first event was not recorded while the stream was open")
	}
	close(next)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, sent.Bytes()) {
		t.Errorf("the host got %d bytes, want the target's %d as they were", len(got), sent.Len())
	}
	p.answersNext(t)
	_, evs := p.frames(t)
	evs = lastIs(t, evs)
	if len(evs) != 3 || string(evs[1].Frame) != events[0] || string(evs[2].Frame) != events[1] || httpOf(t, evs[2]).EventID != "2" {
		t.Fatalf("the stream was recorded as %d frames, want the GET and its two events decoded", len(evs))
	}
}

func TestAnEncodedRequestIsSentAsItCameAndItsMessageRecordedDecoded(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`
	var got []byte
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
	})
	p := proxyTo(t, target.URL+"/mcp")
	body := gzipped(t, []byte(msg))
	req, _ := http.NewRequest("POST", p.url+"/bad", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !bytes.Equal(got, body) {
		t.Errorf("the target got %q, want the host's gzip bytes %q", got, body)
	}
	p.answersNext(t)
	_, evs := p.frames(t)
	evs = lastIs(t, evs)
	if len(evs) != 2 || string(evs[0].Frame) != msg {
		t.Errorf("the request was recorded as %q, want %q", evs[0].Frame, msg)
	}
}

func deflated(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	io.WriteString(zw, s)
	zw.Close()
	return buf.Bytes()
}

// feedHas says whether the session file holds a frame with s in it yet.
func (p *proxied) feedHas(t *testing.T, s string) bool {
	b, _ := os.ReadFile(p.path)
	return strings.Contains(string(b), s)
}

func waitFor(f func() bool) bool {
	for range 200 {
		if f() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
