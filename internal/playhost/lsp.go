package playhost

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// An LSP host: Run sends initialize (rootUri Root) and initialized, opens
// the document Open, and answers the server's requests until ctx ends;
// then it sends shutdown and, once answered (or after ShutdownWait),
// exit, and closes W, as an editor does when it quits.
type LSP struct {
	W    io.WriteCloser // the server's input (the tap's host side)
	R    io.Reader      // the server's output
	Root string         // the workspace folder (absolute)
	Open string         // a file to open, or ""
	Name string         // clientInfo.name
	// ShutdownWait bounds the wait for shutdown's answer (0: 5 s).
	ShutdownWait time.Duration
	// Warn receives what went wrong (one sentence each).
	Warn func(string)
}

// Run plays the host until ctx is done (then ends the server's session)
// or the server's output ends.
func (h *LSP) Run(ctx context.Context) error {
	if h.Warn == nil {
		h.Warn = func(string) {}
	}
	defer h.W.Close()
	host := inject.Host{Root: h.Root}
	c := newConn(h.W, h.R, true, classify.LSP, host)
	name := h.Name
	if name == "" {
		name = "rpctap"
	}
	init, err := c.ask("initialize", `{"processId":`+fmt.Sprint(os.Getpid())+`,"clientInfo":{"name":`+inject.Quote(name)+`},"rootUri":`+inject.Quote(inject.FileURI(h.Root))+
		`,"workspaceFolders":`+host.Folders()+
		`,"capabilities":{"workspace":{"configuration":true,"workspaceFolders":true},"window":{"workDoneProgress":true},`+
		`"textDocument":{"synchronization":{"dynamicRegistration":true},"hover":{"contentFormat":["markdown","plaintext"]},"definition":{},"references":{},"completion":{},"documentSymbol":{},"publishDiagnostics":{}}}}`)
	if err != nil {
		return err
	}
	m, ok := c.wait(ctx, init)
	if !ok {
		return h.end(c)
	}
	if m.HasError() {
		h.Warn("the server refused initialize: " + classify.EscapeString(string(m.Error()), 200))
		return h.end(c)
	}
	if err := c.notify("initialized", "{}"); err != nil {
		return err
	}
	if h.Open != "" {
		text, err := os.ReadFile(h.Open)
		if err != nil {
			h.Warn(fmt.Sprintf("cannot open %s for the server: %v", classify.EscapeString(h.Open, 200), err))
		} else {
			abs, _ := filepath.Abs(h.Open)
			if err := c.notify("textDocument/didOpen", `{"textDocument":{"uri":`+inject.Quote(inject.FileURI(abs))+`,"languageId":`+inject.Quote(LanguageID(abs))+`,"version":1,"text":`+inject.Quote(string(text))+`}}`); err != nil {
				return err
			}
		}
	}
	select {
	case <-ctx.Done():
		return h.end(c)
	case err := <-c.done:
		return err
	}
}

// end sends shutdown, waits for its answer, then exit.
func (h *LSP) end(c *conn) error {
	wait := h.ShutdownWait
	if wait == 0 {
		wait = 5 * time.Second
	}
	ch, err := c.ask("shutdown", "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, ok := c.wait(ctx, ch); !ok {
		h.Warn(fmt.Sprintf("the server did not answer shutdown within %s; rpctap sent exit anyway", wait))
	}
	return c.notify("exit", "")
}

// LanguageID is the LSP languageId of a file, from its extension.
func LanguageID(path string) string {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "":
		return "plaintext"
	case "js":
		return "javascript"
	case "ts":
		return "typescript"
	case "py":
		return "python"
	case "rs":
		return "rust"
	case "rb":
		return "ruby"
	case "md":
		return "markdown"
	case "sh":
		return "shellscript"
	case "h", "c":
		return "c"
	case "cc", "cpp", "hpp", "cxx":
		return "cpp"
	case "yml":
		return "yaml"
	}
	if filepath.Base(path) == "go.mod" {
		return "go.mod"
	}
	return ext
}
