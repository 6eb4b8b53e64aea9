package tap

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// More than one live tap is told apart by pid, with the command to type,
// never as `2 live taps match ""`.
func TestAmbiguousTapSaysWhichTapsAndWhatToType(t *testing.T) {
	err := &AmbiguousError{Taps: []Info{{Name: "server-everything", PID: 41}, {Name: "gopls\x1b[2J", PID: 42}}}
	msg := err.Error()
	for _, want := range []string{"2 live taps are running", "server-everything with pid 41", `gopls\x1b[2J with pid 42`, "as in: rpctap tail 41", "--tap 41"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, `""`) {
		t.Errorf("%q quotes an empty target", msg)
	}
}

// A socket no tap listens on any more, or one that is not there, is said
// in a sentence with what to run, not as a dial error.
func TestDialSaysWhyATapCannotBeReached(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone.sock")
	ln, err := net.Listen("unix", gone)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	for _, socket := range []string{gone, filepath.Join(dir, "missing.sock")} {
		_, err := Dial(socket)
		if err == nil || !strings.Contains(err.Error(), "no tap listens at "+socket) || !strings.Contains(err.Error(), "rpctap ls") {
			t.Errorf("Dial(%s): %v", socket, err)
		}
	}
}

// refusingSocket makes a socket file at path that refuses connections,
// as one does between its tap making it and listening on it, or after
// its tap died without removing it.
func refusingSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

// Looking for live taps removes the socket of a tap whose process is
// gone, and never that of a live process's tap that refuses a connection
// (it is about to listen: removing its socket made its own view fail to
// attach, "no tap listens … any more").
func TestLookingForTapsRemovesOnlyTheSocketsOfDeadProcesses(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, strconv.Itoa(os.Getpid())+".sock")
	gone := filepath.Join(dir, strconv.Itoa(dead.Process.Pid)+".sock")
	refusingSocket(t, live)
	refusingSocket(t, gone)
	queryAll([]string{live, gone}, time.Second)
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the socket of a live process was removed: %v", err)
	}
	if _, err := os.Stat(gone); err == nil {
		t.Error("the socket of a dead process was kept")
	}
}
