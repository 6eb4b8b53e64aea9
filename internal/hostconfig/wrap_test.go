package hostconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// samples are the configs in testdata/hostconfig and the key of their
// servers object.
var samples = []struct {
	file   string
	key    []string
	strict bool // the host wants strict JSON
}{
	{"claude_desktop_config.json", []string{"mcpServers"}, true},
	{"mcp.json", []string{"mcpServers"}, true},
	{"claude.json", []string{"mcpServers"}, true},
	{"cursor_mcp.json", []string{"mcpServers"}, true},
	{"vscode_mcp.jsonc", []string{"servers"}, false},
	{"vscode_mcp_crlf.jsonc", []string{"servers"}, false},
}

const rpctap = "/opt/rpctap/bin/rpctap"

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hostconfig", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUnwrapAfterWrapGivesBackEverySampleByteForByte(t *testing.T) {
	for _, s := range samples {
		t.Run(s.file, func(t *testing.T) {
			orig := readSample(t, s.file)
			servers, err := List(orig, s.key)
			if err != nil {
				t.Fatal(err)
			}
			wrapped := 0
			for _, srv := range servers {
				if srv.URL != "" {
					if _, err := Wrap(orig, s.key, srv.Name, rpctap); err == nil || !strings.Contains(err.Error(), "remote server") {
						t.Errorf("wrapping the remote server %q: got %v, want a refusal naming it remote", srv.Name, err)
					}
					continue
				}
				w, err := Wrap(orig, s.key, srv.Name, rpctap)
				if err != nil {
					t.Fatalf("wrap %q: %v", srv.Name, err)
				}
				wrapped++
				if s.strict && !json.Valid(w) {
					t.Fatalf("wrap %q made a file that is not strict JSON:\n%s", srv.Name, w)
				}
				if crlf := bytes.Contains(orig, []byte("\r\n")); crlf && bytes.Count(w, []byte("\r\n")) != bytes.Count(w, []byte("\n")) || !crlf && bytes.Contains(w, []byte("\r")) {
					t.Errorf("wrap %q mixed line ends:\n%q", srv.Name, w)
				}
				u, err := Unwrap(w, s.key, srv.Name)
				if err != nil {
					t.Fatalf("unwrap %q: %v", srv.Name, err)
				}
				if !bytes.Equal(u, orig) {
					t.Fatalf("unwrap %q after wrap changed the file:\n--- before\n%s\n--- after\n%s", srv.Name, orig, u)
				}
			}
			if wrapped == 0 {
				t.Fatal("the sample has no server to wrap")
			}
		})
	}
}

func TestWrappingEveryServerThenUnwrappingInReverseOrderGivesBackTheFile(t *testing.T) {
	for _, s := range samples {
		t.Run(s.file, func(t *testing.T) {
			orig := readSample(t, s.file)
			servers, _ := List(orig, s.key)
			cur := orig
			var names []string
			for _, srv := range servers {
				if srv.URL == "" {
					var err error
					if cur, err = Wrap(cur, s.key, srv.Name, rpctap); err != nil {
						t.Fatal(err)
					}
					names = append(names, srv.Name)
				}
			}
			after, _ := List(cur, s.key)
			for _, srv := range after {
				if srv.URL == "" && (!srv.Wrapped || srv.Command != rpctap) {
					t.Errorf("server %q is not listed as wrapped: %+v", srv.Name, srv)
				}
			}
			slices.Reverse(names)
			for _, n := range names[1:] {
				cur, _ = Unwrap(cur, s.key, n)
			}
			cur, _ = Unwrap(cur, s.key, names[0])
			if !bytes.Equal(cur, orig) {
				t.Fatalf("the file changed:\n%s", cur)
			}
		})
	}
}

func TestAWrappedEntryRunsTheServersOwnCommandLineThroughRpctapRun(t *testing.T) {
	orig := readSample(t, "claude_desktop_config.json")
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"everything", []string{"run", "--name", "everything", "--", "npx", "-y", "@modelcontextprotocol/server-everything", "stdio"}},
		{"filesystem", []string{"run", "--name", "filesystem", "--", `C:\Program Files\nodejs\node.exe`, `C:\Users\ana\mcp\fs.js`, "C:\\Users\\ana\\Documents \u00e9t\u00e9"}},
		{"bare", []string{"run", "--name=bare", "--", "/usr/local/bin/my-server"}},
		{"empty-args", []string{"run", "--name", "empty-args", "--", "uvx"}},
	} {
		w, err := Wrap(orig, []string{"mcpServers"}, tc.name, rpctap)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			MCPServers map[string]struct {
				Command string
				Args    []string
				Env     map[string]string
			}
		}
		if err := json.Unmarshal(w, &cfg); err != nil {
			t.Fatal(err)
		}
		e := cfg.MCPServers[tc.name]
		if e.Command != rpctap || !slices.Equal(e.Args, tc.want) {
			t.Errorf("%s: command %q args %q, want %q %q", tc.name, e.Command, e.Args, rpctap, tc.want)
		}
		if tc.name == "empty-args" && e.Env["DEBUG"] != "1" {
			t.Errorf("%s lost its env: %v", tc.name, e.Env)
		}
	}
}

func TestWrapKeepsTheArraysOwnLayout(t *testing.T) {
	orig := readSample(t, "claude_desktop_config.json")
	w, _ := Wrap(orig, []string{"mcpServers"}, "everything", rpctap)
	want := "\"command\": \"/opt/rpctap/bin/rpctap\",\n      \"args\": [\n        \"run\",\n        \"--name\",\n        \"everything\",\n        \"--\",\n        \"npx\",\n        \"-y\","
	if !bytes.Contains(w, []byte(want)) {
		t.Errorf("the multi-line args array lost its layout:\n%s", w)
	}
	w, _ = Wrap(orig, []string{"mcpServers"}, "github", rpctap)
	if !bytes.Contains(w, []byte(`"args": ["run", "--name", "github", "--", "docker", "run", "-i",`)) {
		t.Errorf("the one-line args array lost its layout:\n%s", w)
	}
	w, _ = Wrap(orig, []string{"mcpServers"}, "bare", rpctap)
	if !bytes.Contains(w, []byte("\"command\": \"/opt/rpctap/bin/rpctap\",\n      \"args\": [\"run\", \"--name=bare\", \"--\", \"/usr/local/bin/my-server\"]\n    }")) {
		t.Errorf("the args added to an entry without any are not laid out like its other members:\n%s", w)
	}
}

func TestWrapRefusesWhatItCannotWrapInASentence(t *testing.T) {
	orig := readSample(t, "claude_desktop_config.json")
	w, _ := Wrap(orig, []string{"mcpServers"}, "everything", rpctap)
	for _, tc := range []struct {
		src  []byte
		name string
		fn   func([]byte, []string, string) ([]byte, error)
		want string
	}{
		{w, "everything", func(b []byte, k []string, n string) ([]byte, error) { return Wrap(b, k, n, rpctap) }, `server "everything" already runs through rpctap`},
		{orig, "everything", Unwrap, `server "everything" does not run through rpctap`},
		{orig, "nope", Unwrap, `there is no server "nope"; the servers are "bare", "empty-args", "everything", "filesystem", "github"`},
		{[]byte(`{"mcpServers": {"a": {"command": "x",}`), "a", Unwrap, "line 1, column 39: the file ends inside an object"},
		{[]byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\" \"args\": []}}}"), "a", Unwrap, "line 3, column 26: a comma or } is missing"},
		{[]byte(`{"theme": "dark"}`), "a", Unwrap, `there is no server "a": the file has no servers under "mcpServers"`},
	} {
		_, err := tc.fn(tc.src, []string{"mcpServers"}, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestListShowsTheServersOwnCommandOfAWrappedEntry(t *testing.T) {
	orig := readSample(t, "vscode_mcp.jsonc")
	w, err := Wrap(orig, []string{"servers"}, "perplexity", rpctap)
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := List(w, []string{"servers"})
	var got []string
	for _, s := range servers {
		got = append(got, s.Name)
		if s.Name == "perplexity" && (!s.Wrapped || !slices.Equal(s.Inner, []string{"docker", "run", "-i", "--rm", "-e", "PERPLEXITY_API_KEY", "mcp/perplexity-ask"})) {
			t.Errorf("perplexity listed as %+v", s)
		}
	}
	if !slices.Equal(got, []string{"everything", "perplexity", "gopls", "remote"}) {
		t.Errorf("servers listed %q, want file order", got)
	}
	if !bytes.Contains(w, []byte(`"${input:perplexity-key}"`)) || !bytes.Contains(w, []byte("// The reference server.")) {
		t.Error("the entry's env input or a comment went missing")
	}
}

func TestWrapKeepsMinifiedJSONMinified(t *testing.T) {
	orig := readSample(t, "claude.json")
	w, err := Wrap(orig, []string{"mcpServers"}, "local", rpctap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(w, []byte(`"local":{"type":"stdio","command":"/opt/rpctap/bin/rpctap","args":["run","--name","local","--","/opt/srv/bin/server"]}`)) {
		t.Errorf("the minified file got spaces:\n%s", w)
	}
	src := []byte(`{"mcpServers":{"a":{"command":"x","env":{}}}}`)
	w, _ = Wrap(src, []string{"mcpServers"}, "a", rpctap)
	if want := `{"mcpServers":{"a":{"command":"/opt/rpctap/bin/rpctap","args":["run","--name=a","--","x"],"env":{}}}}`; string(w) != want {
		t.Errorf("got  %s\nwant %s", w, want)
	}
	if u, _ := Unwrap(w, []string{"mcpServers"}, "a"); !bytes.Equal(u, src) {
		t.Errorf("unwrap gave %s", u)
	}
}
