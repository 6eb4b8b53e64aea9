package httptap

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// closedAfterEOF is a request body as the host's server gives it: once
// read to its end it is closed when the response's headers are written,
// and a Read after that fails.
type closedAfterEOF struct {
	r      io.Reader
	closed bool
}

func (c *closedAfterEOF) Read(p []byte) (int, error) {
	if c.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := c.r.Read(p)
	if err == io.EOF {
		c.closed = true
	}
	return n, err
}

func (c *closedAfterEOF) Close() error { return nil }

// A request body stays at its end once it has reached it: the transport
// reads past the Content-Length once more, and when the proxy has begun
// relaying the answer by then, the host's server has closed the body.
// Before, that Read failed and the transport closed the connection to
// the target in mid-answer: under load, a tools/call's event stream
// broke right after the server's elicitation/create.
func TestARequestBodyThatEndedStaysEndedWhenReadAgain(t *testing.T) {
	b := &requestBody{x: &exchange{p: &Proxy{}}, in: &closedAfterEOF{r: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}}
	b.once.Do(func() {}) // not recorded: there is no feed here
	got, err := io.ReadAll(b)
	if err != nil || string(got) != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Fatalf("the body read %q, %v", got, err)
	}
	for range 2 {
		if n, err := b.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Errorf("a Read after the end gave %d, %v; want 0, EOF", n, err)
		}
	}
}

// A target may begin its answer before it has read the host's whole
// body (an event stream whose headers and first event go at once): the
// proxy goes on relaying the body while it relays the answer, as the
// host and the target would without it. Before, the host's server took
// the rest of the body for itself once the answer's headers went, and
// the target got a body cut short.
func TestATargetThatAnswersBeforeReadingTheWholeBodyGetsAllOfIt(t *testing.T) {
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"reading\"}}\n\n")
		http.NewResponseController(w).Flush()
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"read\":%d,\"error\":%q}}\n\n", n, fmt.Sprint(err))
	})
	p := proxyTo(t, target.URL+"/mcp")

	// The host sends a large body slowly, the second half once the first
	// event of the answer has come.
	const half = 512 << 10
	pad := bytes.Repeat([]byte("x"), 2*half)
	body := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"data":"`), pad...), `"}}}`...)
	pr, pw := io.Pipe()
	firstEvent := make(chan struct{})
	go func() {
		pw.Write(body[:half])
		select {
		case <-firstEvent:
		case <-time.After(10 * time.Second):
		}
		pw.Write(body[half:])
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, p.url+"/bad", pr)
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	close(firstEvent)
	got, err := io.ReadAll(resp.Body)
	want := `"result":{"read":` + strconv.Itoa(len(body)) + `,"error":"<nil>"}`
	if err != nil || !bytes.Contains(got, []byte(want)) {
		t.Errorf("the target's answer through the proxy: %v\n%.400s\nwant it to say it read the whole body: %s", err, got, want)
	}
	p.answersNext(t)
}
