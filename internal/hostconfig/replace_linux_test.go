package hostconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The command a refused replacement gives to put a saved file back works
// as typed in a shell, whatever the paths hold: spaces, quotes, $.
func TestThePutBackCommandRunsInAShellAsShown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `it's "my" $HOME dir`)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, path := filepath.Join(dir, ".config.json.rpctap-1`x`"), filepath.Join(dir, "config \\n.json")
	if err := os.WriteFile(tmp, []byte("saved"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := putBack(tmp, path)
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "saved" {
		t.Errorf("after %s the file reads %q (%v)", cmd, b, err)
	}
}
