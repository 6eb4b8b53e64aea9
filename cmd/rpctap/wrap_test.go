package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rpctapIn runs the built binary in dir with HOME there too, so that no
// real host's config is read, and returns stdout, stderr and the exit code.
func rpctapIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(rpctapBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "APPDATA=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func copySample(t *testing.T, name, to string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hostconfig", name))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, b, 0o640); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWrapFindsTheProjectConfigAndUnwrapGivesBackItsBytes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".vscode", "mcp.json")
	orig := copySample(t, "vscode_mcp_crlf.jsonc", path)

	out, errs, code := rpctapIn(t, dir, "wrap", "vscode", "perplexity", "--dry-run", "--rpctap", "/opt/bin/rpctap")
	if code != 0 || !strings.Contains(out, "-         \"command\": \"docker\",\n+         \"command\": \"/opt/bin/rpctap\",") || !strings.Contains(out, "+                  \"--name\",\n") {
		t.Fatalf("--dry-run printed (exit %d, %s):\n%s", code, errs, out)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Fatal("--dry-run changed the file")
	}
	if _, err := os.Stat(path + ".rpctap-backup"); err == nil {
		t.Fatal("--dry-run made a backup")
	}

	out, errs, code = rpctapIn(t, dir, "wrap", "vscode", "perplexity", "--rpctap", "/opt/bin/rpctap")
	if code != 0 || !strings.Contains(out, `VS Code now starts "perplexity" through rpctap`) || !strings.Contains(out, "kept in "+path+".rpctap-backup") {
		t.Fatalf("wrap said (exit %d, %s):\n%s", code, errs, out)
	}
	if b, _ := os.ReadFile(path + ".rpctap-backup"); !bytes.Equal(b, orig) {
		t.Fatal("the backup is not the file as it was")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("the file's mode became %v", st.Mode().Perm())
	}

	out, _, _ = rpctapIn(t, dir, "wrap", "--list")
	if !strings.Contains(out, "VS Code (project) "+path) || !strings.Contains(out, "perplexity  wrapped  docker run -i --rm -e PERPLEXITY_API_KEY mcp/perplexity-ask") || !strings.Contains(out, "remote      remote   https://api.example.com/mcp") {
		t.Errorf("wrap --list printed:\n%s", out)
	}

	rpctapIn(t, dir, "wrap", "vscode", "gopls", "--rpctap", "/opt/bin/rpctap")
	if out, _, _ = rpctapIn(t, dir, "unwrap", "vscode", "gopls"); strings.Contains(out, "kept in") {
		t.Errorf("a second change made another backup:\n%s", out)
	}
	rpctapIn(t, dir, "unwrap", "vscode", "perplexity")
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Fatalf("after unwrap the file is not what it was:\n%q", now)
	}
}

func TestWrapErrorsAreSentencesThatSayWhatToType(t *testing.T) {
	dir := t.TempDir()
	copySample(t, "claude_desktop_config.json", filepath.Join(dir, "cd.json"))
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",, }\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"wrap", "zed", "x"}, 2, `rpctap knows no host "zed"; the hosts are claude-desktop, claude-code, cursor, vscode`},
		{[]string{"wrap", "claude-desktop"}, 2, "rpctap wrap needs a host and one of its servers, as in: rpctap wrap claude-desktop everything"},
		{[]string{"wrap", "cursor", "x"}, 2, "found no Cursor config (looked for " + dir + "/.cursor/mcp.json); if it is elsewhere, give it with --config PATH"},
		{[]string{"wrap", "claude-desktop", "nope", "--config", "cd.json", "--rpctap", "/x/rpctap"}, 2, `cd.json: there is no server "nope"; the servers are "bare", "empty-args", "everything", "filesystem", "github"`},
		{[]string{"wrap", "claude-desktop", "a", "--config", "bad.json", "--rpctap", "/x/rpctap"}, 2, "bad.json is not valid JSON at line 3, column 26: a key in double quotes should be here; fix it, then run the command again"},
		{[]string{"unwrap", "claude-desktop", "github", "--config", "cd.json"}, 2, `cd.json: server "github" does not run through rpctap; there is nothing to unwrap`},
		{[]string{"wrap", "claude-desktop", "github", "--config", "cd.json", "--rpctap", "rpctap"}, 2, "--rpctap must be an absolute path"},
		{[]string{"wrap", "--print", "emacs", "--", "gopls"}, 2, `rpctap has no snippet for "emacs"; it writes them for neovim, helix, vscode-lsp`},
	} {
		_, errs, code := rpctapIn(t, dir, c.args...)
		if code != c.code || !strings.Contains(errs, c.says) || strings.Count(errs, "\n") != 1 {
			t.Errorf("rpctap %s: exit %d, said %q; want exit %d and one line saying %q", strings.Join(c.args, " "), code, errs, c.code, c.says)
		}
	}
}

func TestWrapPrintWritesASnippetThatStartsTheServerThroughRpctap(t *testing.T) {
	dir := t.TempDir()
	for editor, want := range map[string]string{
		"neovim":     `cmd = { '/opt/bin/rpctap', 'run', '--name', 'gopls', '--framing', 'lsp', '--profile', 'lsp', '--', 'gopls', 'serve', 'it\'s' },`,
		"helix":      "[language-server.gopls]\ncommand = \"/opt/bin/rpctap\"\nargs = [\"run\", \"--name\", \"gopls\", \"--framing\", \"lsp\", \"--profile\", \"lsp\", \"--\", \"gopls\", \"serve\", \"it's\"]\n",
		"vscode-lsp": `args: ["run", "--name", "gopls", "--framing", "lsp", "--profile", "lsp", "--", "gopls", "serve", "it's"],`,
	} {
		out, errs, code := rpctapIn(t, dir, "wrap", "--print", editor, "--rpctap", "/opt/bin/rpctap", "--", "gopls", "serve", "it's")
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d (%s), printed:\n%s\nwant it to contain:\n%s", editor, code, errs, out, want)
		}
	}
}

// A config that a real host reads, wrapped by rpctap: the inspector's CLI
// reads a Claude Desktop config and starts the server as the entry says,
// with the host's own bare environment plus the entry's env.
func TestAWrappedClaudeDesktopConfigWorksWhenTheInspectorLaunchesIt(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "claude_desktop_config.json")
	orig, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": server, "args": []string{"stdio"}, "env": map[string]string{"WRAP_TEST_SECRET": "s3cr3t-in-the-entry"}},
	}}, "", "  ")
	os.WriteFile(cfg, orig, 0o600)
	if out, err := exec.Command(bin, "wrap", "claude-desktop", "everything", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("wrap: %v\n%s", err, out)
	}

	host := exec.Command(inspector, "--cli", "--config", cfg, "--server", "everything", "--method", "tools/call", "--tool-name", "get-env")
	host.Dir = dir
	host.Env = append(os.Environ(), "HOME="+dir, "WRAP_TEST_NOT_PASSED=from-the-shell")
	var stdout, stderr bytes.Buffer
	host.Stdout, host.Stderr = &stdout, &stderr
	if err := host.Run(); err != nil {
		t.Fatalf("the inspector through the wrapped entry: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	if got := stdout.String(); !strings.Contains(got, "s3cr3t-in-the-entry") || strings.Contains(got, "from-the-shell") {
		t.Fatalf("the server's environment should be the host's bare one plus the entry's env; get-env says:\n%s", got)
	}
	recorded, _ := filepath.Glob(filepath.Join(dir, ".local", "state", "rpctap", "sessions", "*-everything.jsonl"))
	if len(recorded) != 1 {
		t.Fatalf("sessions recorded: %q, want one named after the entry", recorded)
	}
	if doc := checkSessionHasNoErrors(t, recorded[0]); doc.Frames < 6 {
		t.Errorf("the session holds %d frames; initialize, initialized, tools/call and their answers are more", doc.Frames)
	}
	if b, _ := os.ReadFile(recorded[0]); bytes.Contains(b, []byte("s3cr3t-in-the-entry")) {
		t.Error("the entry's secret-looking env value is in the session file unmasked")
	}

	if out, err := exec.Command(bin, "unwrap", "claude-desktop", "everything", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("unwrap: %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(cfg); !bytes.Equal(now, orig) {
		t.Fatalf("unwrap did not give back the file:\n%s", now)
	}
}

func TestWrapFindsAClaudeCodeServerOfTheLocalScopeUnderTheProjectsPath(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, ".claude.json")
	orig := []byte(`{"numStartups":3,"projects":{"` + dir + `":{"allowedTools":[],"mcpServers":{"mine":{"type":"stdio","command":"my-server","args":["--stdio"],"env":{}}}}},"mcpServers":{"shared":{"type":"stdio","command":"npx","args":["-y","shared-server"]}}}` + "\n")
	os.WriteFile(user, orig, 0o600)
	out, errs, code := rpctapIn(t, dir, "wrap", "claude-code", "mine", "--rpctap", "/opt/bin/rpctap")
	if code != 0 {
		t.Fatalf("wrap: exit %d: %s", code, errs)
	}
	now, _ := os.ReadFile(user)
	if !bytes.Contains(now, []byte(`"mine":{"type":"stdio","command":"/opt/bin/rpctap","args":["run","--name","mine","--","my-server","--stdio"]`)) || !bytes.Contains(now, []byte(`"shared":{"type":"stdio","command":"npx"`)) {
		t.Fatalf("wrap said %q and made:\n%s", out, now)
	}
	if out, _, _ = rpctapIn(t, dir, "wrap", "--list", "claude-code"); !strings.Contains(out, "Claude Code (local) "+user+"\n  mine  wrapped  my-server --stdio\n\nClaude Code (user) "+user+"\n  shared  direct   npx -y shared-server\n") {
		t.Errorf("wrap --list printed:\n%s", out)
	}
	rpctapIn(t, dir, "unwrap", "claude-code", "mine")
	if now, _ := os.ReadFile(user); !bytes.Equal(now, orig) {
		t.Fatalf("unwrap did not give back the file:\n%s", now)
	}
}

func TestShellCompletionOffersHostsThenTheServersOfTheHostsConfig(t *testing.T) {
	dir := t.TempDir()
	copySample(t, "cursor_mcp.json", filepath.Join(dir, ".cursor", "mcp.json"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "wrap", ""}, "claude-desktop\nclaude-code\ncursor\nvscode\n:4\n"},
		{[]string{"__complete", "wrap", "cursor", ""}, "everything\nmemory\nonly\n:4\n"},
		{[]string{"__complete", "unwrap", "cursor", ""}, "everything\nmemory\nonly\n:4\n"},
		{[]string{"__complete", "wrap", "--print", ""}, "neovim\nhelix\nvscode-lsp\n:4\n"},
	} {
		if out, errs, _ := rpctapIn(t, dir, c.args...); out != c.want {
			t.Errorf("rpctap %s printed %q (%s), want %q", strings.Join(c.args, " "), out, errs, c.want)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if out, errs, code := rpctapIn(t, dir, "completion", shell); code != 0 || !strings.Contains(out, "rpctap") {
			t.Errorf("rpctap completion %s: exit %d, %s", shell, code, errs)
		}
	}
}
