package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A baseline is kept under the state directory by the server's name,
// read back as it was written, replaced whole by the next accept, and
// gone after a reset; two names that cut to one file name stay apart.
func TestABaselineIsKeptByServerNameUntilReset(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	tools := classify.Definitions{"echo": []byte(`{"name":"echo","description":"Echoes"}`)}
	for _, server := range []string{"a/b", "a b"} {
		if _, err := SaveBaseline(NewBaseline(server, "/s.jsonl", [3]classify.Definitions{classify.DefTool: tools}, time.Unix(1, 0))); err != nil {
			t.Fatal(err)
		}
	}
	b, path, err := LoadBaseline("a/b")
	if err != nil || b.Server != "a/b" || string(b.Tools["echo"]) != string(tools["echo"]) || b.Prompts != nil {
		t.Fatalf("LoadBaseline: %+v, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the baseline directory: %v, %v; want mode 0700", fi, err)
	}
	list, skipped, err := Baselines()
	if err != nil || len(list) != 2 || len(skipped) != 0 || list[0].Server != "a b" {
		t.Errorf("Baselines: %d, %v, %v", len(list), skipped, err)
	}
	if _, err := ResetBaseline("a/b"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadBaseline("a/b"); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("after reset: %v, want ErrNoBaseline", err)
	}
	if _, _, err := LoadBaseline("a b"); err != nil {
		t.Errorf("the other server's baseline went with it: %v", err)
	}
}

// The tracker's lookup reads a server's baseline once, says nothing of a
// server with none (nor of a state directory never made), and warns of a
// damaged file, which then judges nothing.
func TestTheBaselineLookupWarnsOfADamagedFileOnly(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "never-made"))
	var warned []string
	look := BaselineLookup(func(s string) { warned = append(warned, s) })
	if look("s") != nil || len(warned) != 0 {
		t.Fatalf("no state directory: %v", warned)
	}
	if _, err := os.Stat(os.Getenv("XDG_STATE_HOME")); !os.IsNotExist(err) {
		t.Errorf("looking a baseline up made the state directory: %v", err)
	}
	path, err := SaveBaseline(NewBaseline("s", "", [3]classify.Definitions{classify.DefTool: {}}, time.Unix(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if b := BaselineLookup(nil)("s"); b == nil || b.Server != "s" || b.Lists[classify.DefTool] == nil {
		t.Errorf("lookup of a saved baseline: %+v", b)
	}
	if err := os.WriteFile(path, []byte("{cut"), 0o600); err != nil {
		t.Fatal(err)
	}
	look = BaselineLookup(func(s string) { warned = append(warned, s) })
	if look("s") != nil || look("s") != nil || len(warned) != 1 || !strings.Contains(warned[0], "is damaged") || !strings.Contains(warned[0], "rpctap baseline reset") {
		t.Errorf("a damaged baseline: warned %q", warned)
	}
}
