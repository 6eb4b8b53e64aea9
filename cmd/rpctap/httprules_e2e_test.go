package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/demo"
)

// playHTTPDemo plays the demo's HTTP scenario against the tap at url.
func playHTTPDemo(t *testing.T, url string) {
	t.Helper()
	steps, err := demo.Steps("http", false)
	if err != nil {
		t.Fatal(err)
	}
	r := demo.NewRunner(steps, demo.NewHTTPHost(url))
	r.Pace = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// findingTexts gathers the "code: message" of every finding object in
// the JSON v (a finding is an object with a code and a message).
func findingTexts(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		code, ok1 := x["code"].(string)
		msg, ok2 := x["message"].(string)
		if ok1 && ok2 {
			*out = append(*out, code+": "+msg)
		}
		for _, e := range x {
			findingTexts(e, out)
		}
	case []any:
		for _, e := range x {
			findingTexts(e, out)
		}
	}
}

// The transport rules say the same live and in check. One run of the
// demo's HTTP scenario goes through rpctap http with no session file,
// so that what rpctap tail --json shows comes from the tap's own
// tracker; another through rpctap http --record, judged by rpctap check.
// Both give every transport code, with the same text.
func TestTransportFindingsLiveAndInCheckSayTheSame(t *testing.T) {
	bin := rpctapBinary(t)
	srv := httptest.NewServer(demo.HTTPServer())
	defer srv.Close()
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())

	// Live: the tap's tracker, through tail --json.
	live := exec.Command(bin, "http", "--target", srv.URL+"/mcp", "--no-record")
	live.Env = env
	url := startLine(t, live, "http://")
	tail := exec.Command(bin, "tail", "--json", strconv.Itoa(live.Process.Pid))
	tail.Env = env
	out, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer tail.Process.Kill()
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// tail is attached once it shows a frame: a GET, refused 405 (which
	// MCP allows, so it is no finding).
	attached := false
	for i := 0; i < 100 && !attached; i++ {
		http.Get(url)
		select {
		case <-lines:
			attached = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !attached {
		t.Fatal("rpctap tail --json showed nothing of the live tap")
	}
	playHTTPDemo(t, url)
	live.Process.Signal(syscall.SIGINT)
	var liveTexts []string
	for l := range lines {
		var v any
		if json.Unmarshal([]byte(l), &v) == nil {
			findingTexts(v, &liveTexts)
		}
	}

	// Recorded: rpctap check on the session file.
	record := filepath.Join(t.TempDir(), "s.jsonl")
	rec := exec.Command(bin, "http", "--target", srv.URL+"/mcp", "--record", record, "--no-listen")
	rec.Env = env
	playHTTPDemo(t, startLine(t, rec, "http://"))
	rec.Process.Signal(syscall.SIGINT)
	rec.Wait()
	doc, _ := checkJSONOf(t, record, checkOptions{failOn: 3, timeout: 30e9})
	var checkTexts []string
	for _, f := range doc.Findings {
		checkTexts = append(checkTexts, f.Code+": "+f.Message)
	}

	slices.Sort(liveTexts)
	slices.Sort(checkTexts)
	if !slices.Equal(liveTexts, checkTexts) {
		t.Errorf("live and check differ:\n live  %s\n check %s", strings.Join(liveTexts, "\n       "), strings.Join(checkTexts, "\n       "))
	}
	for _, c := range classify.Codes() {
		if c < classify.CodeHTTPStatus {
			continue
		}
		if !slices.ContainsFunc(checkTexts, func(s string) bool { return strings.HasPrefix(s, c.String()+": ") }) {
			t.Errorf("the HTTP demo's session has no %s finding", c)
		}
	}
}

// Several real hosts at once through one rpctap http, against the Go
// SDK's server: Go SDK clients (each its own Mcp-Session-Id, with ids
// from 1) and inspector CLIs. Each conversation is judged on its own: no
// host's handshake, ids or revision is judged against another's, and the
// session has no error or warning.
func TestRealHostsAtOnceThroughOneHTTPTapAreJudgedApart(t *testing.T) {
	server := needPeer(t, "bin/server")
	client := needPeer(t, "bin/client")
	inspector := needPeer(t, "node_modules/.bin/inspector")
	bin := rpctapBinary(t)
	line := startLine(t, exec.Command(server, "-http", "127.0.0.1:0"), "listening on ")
	target := line[strings.Index(line, "http://"):]
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	tp := exec.Command(bin, "http", "--target", target, "--record", record, "--no-listen")
	given := startLine(t, tp, "http://")
	hosts := [][]string{
		{client, "-http", given}, {client, "-http", given}, {client, "-http", given},
		{inspector, "--cli", "--transport", "http", "--server-url", given, "--method", "tools/list"},
		{inspector, "--cli", "--transport", "http", "--server-url", given, "--method", "tools/list"},
	}
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		go func() {
			cmd := exec.Command(h[0], h[1:]...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%s: %v\n%s", filepath.Base(h[0]), err, out)
			}
			errs <- err
		}()
	}
	for range hosts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	tp.Process.Signal(syscall.SIGINT)
	tp.Wait()
	doc := checkSessionHasNoErrors(t, record)
	for _, f := range doc.Findings {
		if f.Severity == "warn" {
			t.Errorf("line %d: %s %s", f.Line, f.Code, f.Message)
		}
	}
	noTransportFindings(t, doc)
	t.Logf("%d frames judged, %d findings", doc.Frames, len(doc.Findings))
	if t.Failed() && os.Getenv("KEEP") != "" {
		b, _ := os.ReadFile(record)
		os.WriteFile(os.Getenv("KEEP"), b, 0o600)
	}
}
