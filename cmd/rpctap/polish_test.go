package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/muesli/termenv"
	"github.com/spf13/cobra"
)

func TestEveryCommandsHelpHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden {
			if c.Example == "" {
				t.Errorf("%q has no Example: set its Example field, or add one to examples in examples.go", c.CommandPath())
			} else if !strings.Contains(c.Example, "rpctap") {
				t.Errorf("%q's example does not show rpctap typed: %q", c.CommandPath(), c.Example)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
}

func TestVersionSaysTheModuleVersionAndTheCommitItWasBuiltFrom(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/rpctap/rpctap", Version: "v0.0.0-20261201121917-e23f2cda7ba5+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "e23f2cda7ba5ba66d8363eea456a45d401434182"}, {Key: "vcs.time", Value: "2026-12-01T12:19:17Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "rpctap v0.0.0-20261201121917-e23f2cda7ba5+dirty\nrevision e23f2cda7ba5ba66d8363eea456a45d401434182 (2026-12-01T12:19:17Z), with uncommitted changes\ngo1.26.8 linux/amd64\n"
	if got := buildText(info, "linux/amd64"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	bin := rpctapBinary(t)
	v, _ := exec.Command(bin, "version").Output()
	flag, _ := exec.Command(bin, "--version").Output()
	if !bytes.HasPrefix(v, []byte("rpctap ")) || !bytes.Equal(v, flag) {
		t.Errorf("rpctap version printed %q and --version %q; want the same text", v, flag)
	}
}

func TestManWritesAPageForEveryCommandWithItsExamples(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	out, err := exec.Command(rpctapBinary(t), "man", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("rpctap man: %v\n%s", err, out)
	}
	for _, page := range []string{"rpctap.1", "rpctap-run.1", "rpctap-wrap.1", "rpctap-config-show.1", "rpctap-completion-zsh.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("no page %s: %v", page, err)
			continue
		}
		if !bytes.Contains(b, []byte(".SH EXAMPLE")) || !bytes.Contains(b, []byte(".TH \"RPCTAP\" \"1\"")) {
			t.Errorf("%s has no examples section or no header:\n%.400s", page, b)
		}
	}
}

// A session with two requests answered two seconds later: whether each
// times out shows the timeouts check ran with.
const slowSession = `{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:42:00Z","argv":["s"],"name":"s","framing":"ndjson","profile":"auto"}
{"t":0,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"}
{"t":0,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"}
{"t":2000000,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}
{"t":2000000,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"}
`

func TestTheConfigFileSetsFlagsAndAFlagOnTheCommandLineWins(t *testing.T) {
	dir := t.TempDir()
	session := filepath.Join(dir, "s.jsonl")
	os.WriteFile(session, []byte(slowSession), 0o644)
	cfgDir := filepath.Join(dir, ".config", "rpctap")
	os.MkdirAll(cfgDir, 0o755)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("profile = \"jsonrpc\"\ntimeout = \"1s\"\n\n[method_timeouts]\n\"tools/call\" = \"5s\"\n"), 0o644)
	timedOut := func(args ...string) (string, string) {
		t.Helper()
		out, errs, _ := rpctapIn(t, dir, append([]string{"check", "--json", "--fail-on", "none"}, args...)...)
		var doc struct {
			Profile  string `json:"profile"`
			Findings []struct {
				Code string          `json:"code"`
				ID   json.RawMessage `json:"id"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("check %v: %v\n%s%s", args, err, out, errs)
		}
		var ids []string
		for _, f := range doc.Findings {
			if f.Code == "timeout" {
				ids = append(ids, string(f.ID))
			}
		}
		return doc.Profile, strings.Join(ids, " ")
	}
	if p, ids := timedOut(session); p != "jsonrpc" || ids != "2" {
		t.Errorf("with the config only: profile %q, timed out %q; want jsonrpc and only ping (2): tools/call has 5s", p, ids)
	}
	if p, ids := timedOut("--profile", "mcp", "--timeout", "10s", session); p != "mcp" || ids != "" {
		t.Errorf("with --profile mcp --timeout 10s: profile %q, timed out %q; want mcp and none", p, ids)
	}
	if _, ids := timedOut("--method-timeout", "tools/call=1s", session); ids != "1 2" {
		t.Errorf("with --method-timeout tools/call=1s: timed out %q; want both", ids)
	}
}

func TestABadConfigStopsTheCommandsItSetsWithTheLineToFix(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".config", "rpctap", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("theme = \"dark\"\ntimeout = \"forever\"\n"), 0o644)
	_, errs, code := rpctapIn(t, dir, "check", "nothing.jsonl")
	if want := "rpctap: " + cfg + " line 2: timeout \"forever\" is not a positive duration"; code != 2 || !strings.HasPrefix(errs, want) {
		t.Errorf("check with a bad config: exit %d, said %q; want exit 2 and %q", code, errs, want)
	}
	if _, errs, code := rpctapIn(t, dir, "config", "show"); code != 2 || !strings.Contains(errs, "line 2") {
		t.Errorf("config show: exit %d, said %q", code, errs)
	}
	if out, _, code := rpctapIn(t, dir, "config", "path"); code != 0 || out != cfg+"\n" {
		t.Errorf("config path: exit %d, printed %q; want %s", code, out, cfg)
	}
	if _, _, code := rpctapIn(t, dir, "version"); code != 0 {
		t.Errorf("rpctap version, which no setting concerns, failed (exit %d) on a bad config", code)
	}
	os.WriteFile(cfg, []byte("theme = \"solarized\"\n"), 0o644)
	if _, errs, code := rpctapIn(t, dir, "ui"); code != 2 || !strings.HasPrefix(errs, "rpctap: "+cfg+" line 1: theme must be") {
		t.Errorf("ui with a bad theme: exit %d, said %q", code, errs)
	}
	os.Remove(cfg)
	if out, _, _ := rpctapIn(t, dir, "config", "show"); !strings.Contains(out, "does not exist") || !strings.Contains(out, "[method_timeouts]") {
		t.Errorf("config show without a file printed:\n%s", out)
	}
}

func TestNoColorTurnsTheLiveViewsColourOffWhateverTheTheme(t *testing.T) {
	t.Setenv("CLICOLOR_FORCE", "1")
	t.Setenv("NO_COLOR", "")
	if r := uiRenderer(&bytes.Buffer{}, "light"); r.ColorProfile() == termenv.Ascii || r.HasDarkBackground() {
		t.Errorf("forced colour, light theme: profile %v, dark %v", r.ColorProfile(), r.HasDarkBackground())
	}
	if r := uiRenderer(&bytes.Buffer{}, "dark"); !r.HasDarkBackground() {
		t.Error("the dark theme drew for a light background")
	}
	t.Setenv("NO_COLOR", "1")
	if r := uiRenderer(&bytes.Buffer{}, "light"); r.ColorProfile() != termenv.Ascii {
		t.Errorf("NO_COLOR: profile %v, want plain text", r.ColorProfile())
	}
}

func TestRedactionsInTheConfigFileAreMaskedBesidesThoseOfTheFlag(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".config", "rpctap", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("redact = [\"PLAIN_VALUE\"]\n"), 0o644)
	record := filepath.Join(dir, "s.jsonl")
	cmd := exec.Command(rpctapBinary(t), "run", "--no-listen", "--record", record, "--redact", "OTHER=flag-given-value", "--",
		"sh", "-c", `printf '{"jsonrpc":"2.0","method":"log","params":["%s","%s"]}\n' "$PLAIN_VALUE" flag-given-value`)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "PLAIN_VALUE=from-the-config-file")
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte("from-the-config-file")) {
		t.Fatalf("the server's output should pass unchanged: %v %q", err, out)
	}
	b, _ := os.ReadFile(record)
	if bytes.Contains(b, []byte("from-the-config-file")) || bytes.Contains(b, []byte("flag-given-value")) || !bytes.Contains(b, []byte(`"redacted":true`)) {
		t.Errorf("the session file should mask both values:\n%s", b)
	}
}

// The file "rpctap config show" prints, copied as it is into the config
// file, changes nothing: a server behind rpctap run starts (no redact
// name of a variable this environment lacks stops it) and no frame is
// held (no intercept filter with no view open).
func TestTheConfigShowSampleCopiedAsItIsChangesNothing(t *testing.T) {
	dir := t.TempDir()
	sample, _, code := rpctapIn(t, dir, "config", "show")
	if code != 0 {
		t.Fatalf("config show: exit %d", code)
	}
	cfg := filepath.Join(dir, ".config", "rpctap", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte(sample), 0o644)
	record := filepath.Join(dir, "s.jsonl")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`
	cmd := exec.Command(rpctapBinary(t), "run", "--no-listen", "--record", record, "--hold-timeout", "1s", "--", "sh", "-c", `read line; echo "$line"`)
	cmd.Env = configEnv(dir)
	cmd.Stdin = strings.NewReader(call + "\n")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	out, err := cmd.Output()
	if err != nil || string(out) != call+"\n" {
		t.Fatalf("rpctap run with the sample config: %v, relayed %q; stderr:\n%s", err, out, errs.String())
	}
	if b, _ := os.ReadFile(record); bytes.Contains(b, []byte(`"held"`)) {
		t.Errorf("the sample config held frames:\n%s", b)
	}
}

// A redact name in the config file whose variable this environment does
// not set is said on stderr, and the server runs (--quiet silences it).
func TestARedactNameOfAnUnsetVariableInTheConfigIsAWarning(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".config", "rpctap", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("redact = [\"RPCTAP_NOT_SET_HERE\", \"SET_HERE\"]\n"), 0o644)
	for _, quiet := range []bool{false, true} {
		args := []string{"run", "--no-listen", "--record", filepath.Join(dir, fmt.Sprintf("s-%v.jsonl", quiet))}
		if quiet {
			args = append(args, "--quiet")
		}
		cmd := exec.Command(rpctapBinary(t), append(args, "--", "sh", "-c", `echo "$SET_HERE"`)...)
		cmd.Env = append(configEnv(dir), "SET_HERE=a-value-to-mask")
		var errs bytes.Buffer
		cmd.Stderr = &errs
		out, err := cmd.Output()
		if err != nil || string(out) != "a-value-to-mask\n" {
			t.Fatalf("quiet %v: %v, relayed %q; stderr:\n%s", quiet, err, out, errs.String())
		}
		want := "rpctap: " + cfg + ": redact names RPCTAP_NOT_SET_HERE, which is not set here, so there is nothing to mask for it\n"
		if said := errs.String(); quiet && said != "" || !quiet && said != want {
			t.Errorf("quiet %v: said %q; want %q", quiet, said, want)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("s-%v.jsonl", quiet))); bytes.Contains(b, []byte("a-value-to-mask")) {
			t.Errorf("the name that is set was not masked:\n%s", b)
		}
	}
}

// configEnv is the environment of an rpctap whose home and config are
// under dir, with no variable the sample config names set.
func configEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITHUB_TOKEN=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
}

// An example that pipes a command's --json into jq reads a field the
// command's JSON has: for each such example of a command that runs
// without a tap or a session (ls, sessions ls, catalog), the command is
// run and jq's first step (.[] or .KEY) is looked up in its output.
func TestTheJQOfEveryExampleReadsAFieldTheJSONHas(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "XDG_RUNTIME_DIR=" + dir}
	tried := 0
	for path, text := range examples {
		for _, line := range strings.Split(text, "\n") {
			cmdline, expr, ok := strings.Cut(strings.TrimSpace(line), " | jq ")
			if !ok || !slices.Contains([]string{"rpctap ls", "rpctap sessions ls", "rpctap catalog"}, path) {
				continue
			}
			args := strings.Fields(strings.TrimPrefix(cmdline, "rpctap "))
			out, errb, code := runCmd(t, dir, env, bin, args...)
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s", cmdline, code, errb)
			}
			var doc any
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("%s: not JSON: %v", cmdline, err)
			}
			expr = strings.Trim(strings.Fields(expr)[len(strings.Fields(expr))-1], "'")
			switch step, _, _ := strings.Cut(strings.TrimPrefix(expr, "."), "[]"); {
			case step == "":
				if _, ok := doc.([]any); !ok {
					t.Errorf("%s: jq %s iterates an array; the JSON is %T", path, expr, doc)
				}
			default:
				obj, _ := doc.(map[string]any)
				if _, ok := obj[step]; !ok {
					t.Errorf("%s: jq %s reads the field %q; the JSON has %v", path, expr, step, slices.Sorted(maps.Keys(obj)))
				}
			}
			tried++
		}
	}
	if tried < 3 {
		t.Errorf("%d examples piped into jq were tried; want the three of ls, sessions ls and catalog", tried)
	}
}
