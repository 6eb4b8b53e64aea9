// Command lspdrive is a tiny LSP client for making test recordings. It
// writes a small Go module into -dir (default /tmp/rpctap-gopls-demo, made
// afresh), starts the server command given after "--", and over
// Content-Length framing sends:
//
//	initialize (rootUri = the module)   and waits for its answer
//	initialized
//	textDocument/didOpen main.go        (unless -hover=false)
//	textDocument/hover on a call of Greet, and waits for its answer
//	shutdown                            and waits for its answer
//	exit, then closes the server's stdin and waits for it to exit.
//
// Requests from the server (workspace/configuration, client/registerCapability,
// window/workDoneProgress/create, ...) are answered: workspace/configuration
// with one null per item, the rest with null. It prints the hover text to
// stdout and exits with the server's exit status.
//
//	lspdrive [-dir DIR] [-hover=false] -- CMD ARGS...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

const mainGo = `package main

import "fmt"

// Greet returns a greeting for name.
func Greet(name string) string { return "hello, " + name }

func main() { fmt.Println(Greet("rpctap")) }
`

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

type conn struct {
	mu      sync.Mutex
	w       io.WriteCloser
	pending map[string]chan message
}

func (c *conn) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

// call sends a request and waits for its response.
func (c *conn) call(id int, method string, params any, timeout time.Duration) (message, error) {
	ch := make(chan message, 1)
	c.mu.Lock()
	c.pending[strconv.Itoa(id)] = ch
	c.mu.Unlock()
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if err := c.send(req); err != nil {
		return message{}, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return message{}, fmt.Errorf("%s: server closed its stdout", method)
		}
		if len(m.Error) > 0 {
			return m, fmt.Errorf("%s: error %s", method, m.Error)
		}
		return m, nil
	case <-time.After(timeout):
		return message{}, fmt.Errorf("%s: no answer in %v", method, timeout)
	}
}

func (c *conn) notify(method string, params any) error {
	n := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		n["params"] = params
	}
	return c.send(n)
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			n, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if n < 0 {
		return nil, errors.New("header without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// readLoop routes responses to their callers and answers server requests.
func (c *conn) readLoop(r io.Reader) {
	br := bufio.NewReader(r)
	defer func() {
		c.mu.Lock()
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}()
	for {
		body, err := readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintln(os.Stderr, "lspdrive: read:", err)
			}
			return
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			fmt.Fprintln(os.Stderr, "lspdrive: bad frame:", err)
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // request from the server
			var result any
			if m.Method == "workspace/configuration" {
				var p struct {
					Items []json.RawMessage `json:"items"`
				}
				json.Unmarshal(m.Params, &p)
				result = make([]any, len(p.Items))
			}
			c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		case m.Method == "" && len(m.ID) > 0: // response
			c.mu.Lock()
			ch := c.pending[strings.Trim(string(m.ID), `"`)]
			delete(c.pending, strings.Trim(string(m.ID), `"`))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "lspdrive:", err)
	os.Exit(1)
}

func main() {
	dir := flag.String("dir", "/tmp/rpctap-gopls-demo", "where to write the demo Go module (replaced)")
	hover := flag.Bool("hover", true, "open main.go and ask for a hover")
	timeout := flag.Duration("timeout", 60*time.Second, "time limit per request")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lspdrive [flags] -- CMD ARGS...")
		flag.PrintDefaults()
	}
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		flag.Usage()
		os.Exit(2)
	}

	root, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	if err := os.RemoveAll(root); err != nil {
		fail(err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/demo\n\ngo 1.26\n"), 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(mainGo), 0o644); err != nil {
		fail(err)
	}
	rootURI := "file://" + filepath.ToSlash(root)
	fileURI := rootURI + "/main.go"

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	c := &conn{w: stdin, pending: map[string]chan message{}}
	loopDone := make(chan struct{})
	go func() { c.readLoop(stdout); close(loopDone) }()

	_, err = c.call(1, "initialize", map[string]any{
		"processId":  nil,
		"clientInfo": map[string]any{"name": "rpctap-lspdrive", "version": "0.1.0"},
		"rootUri":    rootURI,
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"hover": map[string]any{"contentFormat": []string{"plaintext"}},
			},
			"workspace": map[string]any{"configuration": true},
			"window":    map[string]any{"workDoneProgress": true},
		},
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": filepath.Base(root)}},
	}, *timeout)
	if err != nil {
		fail(err)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		fail(err)
	}
	id := 2
	if *hover {
		if err := c.notify("textDocument/didOpen", map[string]any{
			"textDocument": map[string]any{"uri": fileURI, "languageId": "go", "version": 1, "text": mainGo},
		}); err != nil {
			fail(err)
		}
		// Hover on the call Greet("rpctap").
		off := strings.Index(mainGo, `Greet("rpctap")`)
		line := strings.Count(mainGo[:off], "\n")
		char := off - (strings.LastIndex(mainGo[:off], "\n") + 1)
		m, err := c.call(id, "textDocument/hover", map[string]any{
			"textDocument": map[string]any{"uri": fileURI},
			"position":     map[string]any{"line": line, "character": char},
		}, *timeout)
		if err != nil {
			fail(err)
		}
		var h struct {
			Contents struct {
				Value string `json:"value"`
			} `json:"contents"`
		}
		json.Unmarshal(m.Result, &h)
		fmt.Println(h.Contents.Value)
		id++
	}
	if _, err := c.call(id, "shutdown", nil, *timeout); err != nil {
		fail(err)
	}
	if err := c.notify("exit", nil); err != nil {
		fail(err)
	}
	stdin.Close()
	<-loopDone
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "lspdrive: server:", err)
			os.Exit(ee.ExitCode())
		}
		fail(err)
	}
}
