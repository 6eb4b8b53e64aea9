package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// batchHost plays a host that sends a batch: initialize (revision
// version), notifications/initialized, then one POST whose body is a
// JSON array of a ping (id 2), a tools/list (id 3) and a notification.
// It returns the batch's status and the ids of the answers it got, in
// order, or the body of a refusal.
func batchHost(t *testing.T, url, version string) (status int, ids []string, refusal string) {
	t.Helper()
	var session string
	post := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"batch-host","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session = resp.Header.Get("Mcp-Session-Id")
	resp = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp = post(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"a batch member"}}]`)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(ids) < 2 {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m struct{ ID json.RawMessage }
			json.Unmarshal([]byte(data), &m)
			ids = append(ids, string(m.ID))
		}
	}
	return resp.StatusCode, ids, ""
}

// A POST whose body is a batch: the proxy relays it as it is, the host
// gets what it gets directly, and the session has the batch as one
// frame (its bytes, as on stdio) whose members are each paired with
// their answer. Both servers answer a batch under 2025-03-26, each
// member in an event of its own; under 2025-06-18 (which removed
// batching) the Go SDK refuses it 400 and server-everything answers it
// all the same.
func TestABatchOverHTTPHasEachMemberPairedWithItsAnswer(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	gosdk := needPeer(t, "bin/server")
	bin := rpctapBinary(t)
	port := freePort(t)
	everything := exec.Command(server, "streamableHttp")
	everything.Env = append(os.Environ(), "PORT="+port)
	startLine(t, everything, "listening on port")
	line := startLine(t, exec.Command(gosdk, "-http", "127.0.0.1:0"), "listening on ")
	for _, c := range []struct {
		name, target, version string
		refused               bool
	}{
		{"server-everything", "http://127.0.0.1:" + port + "/mcp", "2025-03-26", false},
		{"server-everything", "http://127.0.0.1:" + port + "/mcp", "2025-06-18", false},
		{"the Go SDK", line[strings.Index(line, "http://"):], "2025-03-26", false},
		{"the Go SDK", line[strings.Index(line, "http://"):], "2025-06-18", true},
	} {
		record := filepath.Join(t.TempDir(), "s.jsonl")
		tp := exec.Command(bin, "http", "--target", c.target, "--record", record, "--no-listen")
		given := startLine(t, tp, "http://")
		dStatus, dIDs, dRefusal := batchHost(t, c.target, c.version)
		status, ids, refusal := batchHost(t, given, c.version)
		tp.Process.Signal(syscall.SIGINT)
		tp.Wait()
		slices.Sort(dIDs)
		slices.Sort(ids)
		if status != dStatus || !slices.Equal(ids, dIDs) || refusal != dRefusal {
			t.Errorf("%s %s: through the proxy the batch got %d %v %q; directly %d %v %q", c.name, c.version, status, ids, refusal, dStatus, dIDs, dRefusal)
		}
		if c.refused != (status == http.StatusBadRequest) || !c.refused && !slices.Equal(ids, []string{"2", "3"}) {
			t.Errorf("%s %s answered the batch %d %v %q", c.name, c.version, status, ids, refusal)
		}

		// The batch is one frame; each of its requests is paired with the
		// answer that came in its own event; a refusal is a frame too.
		h, evs := readFrames(t, record)
		tr := classify.NewTracker(classify.TrackerOptions{Profile: classify.MCP, Timeout: -1})
		var batch int64 // the batch frame's seq
		batches, refusals := 0, 0
		paired := map[string]int64{} // method: the request frame its answer is paired with
		for i, ev := range evs {
			m := h.Classify(ev.Frame, ev.Dir, classify.MCP)
			obs := tr.Observe(int64(i+1), 0, &m)
			if m.Kind == classify.KindBatch {
				batches, batch = batches+1, int64(i+1)
			}
			var x httpObject
			json.Unmarshal(ev.HTTP, &x)
			if m.Kind == classify.KindHTTP && x.Status == http.StatusBadRequest {
				refusals++
			}
			for _, p := range obs.Pairs {
				if p.Method == "ping" || p.Method == "tools/list" {
					paired[p.Method] = p.Request
				}
			}
		}
		if batches != 1 {
			t.Errorf("%s %s: the session holds %d batch frames, want 1", c.name, c.version, batches)
		}
		if c.refused && (refusals != 1 || len(paired) != 0) {
			t.Errorf("%s %s: the session holds %d refusals (400) and answers %v, want 1 and none", c.name, c.version, refusals, paired)
		}
		if !c.refused && (len(paired) != 2 || paired["ping"] != batch || paired["tools/list"] != batch) {
			t.Errorf("%s %s: the answers were paired with frames %v, want ping's and tools/list's with the batch (%d)", c.name, c.version, paired, batch)
		}
	}
}
