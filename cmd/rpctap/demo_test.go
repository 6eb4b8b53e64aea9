package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// demoRun records one rpctap demo --no-ui run and returns its session file
// and what it printed.
func demoRun(t *testing.T, args ...string) (path string, out []byte) {
	t.Helper()
	bin := rpctapBinary(t)
	path = filepath.Join(t.TempDir(), "demo.jsonl")
	cmd := exec.Command(bin, append([]string{"demo", "--no-ui", "--speed", "40", "--record", path}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_RUNTIME_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rpctap demo %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return path, out
}

// checkCodes is every finding code rpctap check reports on a session file.
func checkCodes(t *testing.T, path string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(rpctapBinary(t), "check", "--json", path).Output()
	var rep struct {
		Findings []struct {
			Code string `json:"code"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check --json on %s printed no report: %v\n%s", path, err, out)
	}
	codes := map[string]bool{}
	for _, f := range rep.Findings {
		codes[f.Code] = true
	}
	return codes
}

// The demo walks through every rule of the envelope: between the strict
// server, the lenient one, the LSP runs and the HTTP one, check finds every finding code
// classify knows at least once (but oversize, which would take a 16 MiB
// frame, untracked, which takes 10,000 requests in flight, and
// frames-missing, which takes a session file with no room left). A code
// added to classify without a demo step fails here.
func TestDemoRunsShowEveryFindingCode(t *testing.T) {
	runs := map[string][]string{"strict": {"--server", "strict"}, "lenient": {"--server", "lenient"}, "lsp": {"--lsp"},
		"lsp-exit": {"--lsp", "--scenario", "exit-without-shutdown"}, "revision-2026": {"--scenario", "revision-2026"},
		"http": {"--scenario", "http"}}
	found := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, args := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, _ := demoRun(t, args...)
			for c := range checkCodes(t, path) {
				mu.Lock()
				found[c] = append(found[c], name)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var missing []string
	for _, c := range classify.Codes() {
		if c == classify.CodeOversize || c == classify.CodeUntracked || c == classify.CodeFramesMissing {
			continue
		}
		if len(found[c.String()]) == 0 {
			missing = append(missing, c.String())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no demo run shows %s; add a step that does", strings.Join(missing, ", "))
	}
	// The difference the two servers make: only the lenient one leaves
	// invalid frames unanswered.
	if got := strings.Join(found["unanswered-invalid"], " "); got != "lenient" {
		t.Errorf("unanswered-invalid is found in the %q runs; want the lenient run only", got)
	}
}

// The strict demo server answers every frame that owes a strict answer
// with exactly the answer classify computes for it, in order; the lenient
// one sends none of them.
func TestDemoStrictServerSendsClassifysStrictAnswers(t *testing.T) {
	for _, mode := range []string{"strict", "lenient"} {
		t.Run(mode, func(t *testing.T) {
			path, _ := demoRun(t, "--server", mode, "--scenario", "edge-cases")
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rd := sessions.NewReader(f)
			var owed [][]byte // strict answers not yet seen, in order
			owedAll, sent := 0, 0
			answers := map[string]bool{}
			for {
				ev, err := rd.Next()
				if err != nil {
					break
				}
				if !ev.IsFrame() {
					continue
				}
				switch ev.Dir {
				case classify.H2S:
					m := classify.Classify(ev.Frame, classify.H2S, classify.MCP)
					if m.Answer != nil {
						owed = append(owed, m.Answer.JSON())
						answers[string(m.Answer.JSON())] = true
						owedAll++
					}
				case classify.S2H:
					if len(owed) > 0 && bytes.Equal(ev.Frame, owed[0]) {
						owed, sent = owed[1:], sent+1
					} else if answers[string(ev.Frame)] {
						t.Errorf("a strict answer came out of order: %s", ev.Frame)
					}
				}
			}
			if owedAll < 12 {
				t.Fatalf("the edge cases sent only %d frames that owe a strict answer", owedAll)
			}
			switch mode {
			case "strict":
				if len(owed) > 0 {
					t.Errorf("the strict server did not send %d of %d strict answers; the first missing: %s", len(owed), owedAll, owed[0])
				}
			case "lenient":
				if sent > 0 {
					t.Errorf("the lenient server sent %d strict answers; it ignores what it cannot read", sent)
				}
			}
		})
	}
}

// rpctap demo --no-ui prints the frames as tail does, with each step's
// caption as a note, and a peer's own backslashes told apart (doubled).
func TestDemoNoUIPrintsCaptionsAsNotesAndPeerTextEscaped(t *testing.T) {
	_, out := demoRun(t, "--scenario", "unsafe-text")
	for _, want := range []string{"# handshake: ", "# unsafe-text: ", `\\u001b[31m`, "→ request      id=1 initialize"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	if bytes.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("the demo printed a raw control or bidi character:\n%q", out)
	}
}

func TestDemoListsScenariosAndRefusesUnknownOnes(t *testing.T) {
	bin := rpctapBinary(t)
	out, err := exec.Command(bin, "demo", "--list").Output()
	if err != nil || !bytes.Contains(out, []byte("edge-cases")) || !bytes.Contains(out, []byte("leaky-error")) {
		t.Errorf("demo --list: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "demo", "--no-ui", "--scenario", "no-such").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("rpctap demo --list")) {
		t.Errorf("an unknown scenario: %v\n%s", err, out)
	}
}
