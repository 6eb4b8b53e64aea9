package playhost

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// A header block the tap reads as malformed (bad-header) is passed over
// by rpctap's host as the tap reads it, and the frames after it still
// reach the requests that wait for them.
func TestHostReadsOnPastAMalformedHeaderBlock(t *testing.T) {
	toHost, serverOut := io.Pipe()
	c := newConn(io.Discard, toHost, true, classify.LSP, inject.Host{})
	ch, err := c.ask("initialize", "{}")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":"rpctap-host-1","result":{}}`
	go func() {
		io.WriteString(serverOut, "X-Note: no length here\r\n\r\n")
		io.WriteString(serverOut, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, ok := c.wait(ctx, ch)
	if !ok {
		t.Fatal("the answer after a header block with no Content-Length never reached its request")
	}
	if string(m.Result()) != "{}" {
		t.Fatalf("result %q, want {}", m.Result())
	}
	serverOut.Close()
}
