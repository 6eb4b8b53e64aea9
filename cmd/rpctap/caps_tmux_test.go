package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// In tmux at 80×24, rpctap watch -- server-everything (no host): c shows
// the capabilities pane, with the server's name from its initialize result
// and its capabilities, each from its frame; c closes it again.
func TestWatchCapabilitiesPaneShowsServerEverythingsNameAndCapabilities(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	waitfor, keys, _ := tmuxScreen(t, 80, 24, env[len(env)-3:], rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "prompts/list", "0 pending")
	keys("c")
	waitfor("Capabilities of the session", "Server   mcp-servers/everything", "(initialize result)",
		"Server capabilities (initialize result)", `"tools": {`, `"listChanged": true`, "c/esc close")
	keys("c")
	waitfor("enter open")
	keys("q")
	waitfor("session recorded in")
}

// In tmux at 80×24, rpctap watch --open main.go -- gopls: c shows gopls's
// name and the capabilities of its initialize result, hoverProvider among
// them (a page or more down).
func TestWatchCapabilitiesPaneShowsGoplssHoverProvider(t *testing.T) {
	dir := t.TempDir()
	waitfor, keys, screen := watchGopls(t, dir)
	waitfor("gopls  live")
	waitSession(t, dir, `"method":"textDocument/didOpen"`)
	keys("c")
	waitfor("Capabilities of the session", "profile lsp", "Server   gopls", "Server capabilities (initialize result)")
	// Page down until it shows, each page waited for (the pane says
	// which lines it shows).
	at := regexp.MustCompile(`lines \d+–\d+ of \d+`)
	for i := 0; !strings.Contains(screen(), `"hoverProvider": true`); i++ {
		before := at.FindString(screen())
		if i == 20 || before == "" {
			t.Fatalf("the pane never showed hoverProvider:\n%s", screen())
		}
		keys("PgDn")
		for deadline := time.Now().Add(10 * time.Second); at.FindString(screen()) == before; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("page down did not move the pane:\n%s", screen())
			}
		}
	}
	keys("Escape")
	waitfor("enter open")
	keys("q")
	waitfor("session recorded in")
}
