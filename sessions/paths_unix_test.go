//go:build unix

package sessions_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// A --record path that is a character device or a FIFO (--record
// /dev/null, a pipe someone reads), or a link to one, is written as it
// is, with --force or without: it is never removed, nothing is recorded
// beside it, and what is written there reaches its reader. A FIFO no one
// reads is refused with what to type, rather than waited for.
func TestADeviceOrAFIFOAtTheRecordPathIsWrittenAsItIs(t *testing.T) {
	dir := t.TempDir()
	started := time.Date(2026, 11, 29, 18, 42, 0, 0, time.UTC)
	sinks := map[string]string{}
	link := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	sinks[link] = "a link to /dev/null"
	node := filepath.Join(dir, "null")
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o666, int(1<<8|3)); err == nil { // 1,3: the null device
		sinks[node] = "a character device"
	} else {
		t.Logf("no device node of the test's own (%v): the link to /dev/null stands for one", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, what := range sinks {
		for _, overwrite := range []bool{false, true} {
			if err := sessions.CheckRecordPath(path, overwrite); err != nil {
				t.Errorf("%s, overwrite %v: CheckRecordPath refused it: %v", what, overwrite, err)
			}
			f, used, err := sessions.CreateRecording(path, started, func(p string) (*os.File, error) { return sessions.CreateFile(p, overwrite) },
				func(s string) { t.Errorf("%s, overwrite %v: said %q", what, overwrite, s) })
			if err != nil || used != path {
				t.Fatalf("%s, overwrite %v: recorded in %s, %v; want %s itself", what, overwrite, used, err, path)
			}
			if !sessions.IsSink(f) {
				t.Errorf("%s: IsSink says no", what)
			}
			if _, err := f.WriteString(lastLaunch); err != nil {
				t.Errorf("%s: writing it: %v", what, err)
			}
			f.Close()
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link to /dev/null is now %v, %v", fi, err)
	}
	if fi, err := os.Lstat(node); err == nil && fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the device node is now %v", fi.Mode())
	}

	// A FIFO someone reads gets the records. The reader holds a writer's
	// end too, so that it opens at once and sees no end of its own.
	reader, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sessions.CreateFile(fifo, true)
	if err != nil {
		t.Fatalf("a FIFO someone reads: %v", err)
	}
	f.WriteString(lastLaunch)
	f.Close()
	reader.SetReadDeadline(time.Now().Add(time.Second))
	b := make([]byte, 2*len(lastLaunch))
	n, _ := io.ReadAtLeast(reader, b, len(lastLaunch))
	reader.Close()
	if string(b[:n]) != lastLaunch {
		t.Errorf("the FIFO's reader read %q, want %q", b[:n], lastLaunch)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v, %v", fi, err)
	}

	// A FIFO no one reads.
	_, err = sessions.CreateFile(fifo, true)
	if want := "nothing reads the FIFO " + fifo + "; start its reader first (as in: cat " + fifo + " > copy.jsonl &), or give --record a file's path"; err == nil || err.Error() != want {
		t.Errorf("a FIFO no one reads: %v; want %q", err, want)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*-2026*")); len(files) > 0 {
		t.Errorf("recorded beside a sink: %v", files)
	}
}

// --force writes over a regular file that is empty or a session file,
// and nothing else: a file that is no session file, a symbolic link (to
// a file or not), a socket are never removed. Those whose name is only
// taken (the file, the link) make rpctap run record beside them and say
// why; a socket is refused.
func TestForceWritesOverOnlyAnEmptyFileOrASessionFile(t *testing.T) {
	dir := t.TempDir()
	started := time.Date(2026, 11, 29, 18, 42, 0, 123_000_000, time.UTC)
	const notes = "my notes, not a session\n"
	notesPath := filepath.Join(dir, "notes.txt")
	os.WriteFile(notesPath, []byte(notes), 0o644)
	session := filepath.Join(dir, "last.jsonl")
	os.WriteFile(session, []byte(lastLaunch), 0o600)
	linkPath := filepath.Join(dir, "link.jsonl")
	os.Symlink(session, linkPath)
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	for _, c := range []struct {
		path, says, beside string
	}{
		{notesPath, notesPath + " is not a session file (it does not begin with a session header); --force writes over session files only: give --record another name, or remove that file yourself",
			notesPath + " is not a session file (it does not begin with a session header), so this session is recorded in " + filepath.Join(dir, "notes-20261129T184200.123Z.txt") + " (--force writes over session files only; --record another name)"},
		{linkPath, linkPath + " is a symbolic link; rpctap neither writes through a link to a file nor replaces one: give --record the path it points to (" + session + "), or another name",
			linkPath + " is a symbolic link, so this session is recorded in " + filepath.Join(dir, "link-20261129T184200.123Z.jsonl") + " (rpctap neither writes through a link nor replaces one; --record the path it points to, or another name)"},
	} {
		if err := sessions.CheckRecordPath(c.path, true); err == nil || err.Error() != c.says || !errors.Is(err, fs.ErrExist) {
			t.Errorf("CheckRecordPath(%s, --force) = %v; want %q", c.path, err, c.says)
		}
		var said []string
		f, used, err := sessions.CreateRecording(c.path, started, func(p string) (*os.File, error) { return sessions.CreateFile(p, true) }, func(s string) { said = append(said, s) })
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		f.Close()
		if len(said) != 1 || said[0] != c.beside {
			t.Errorf("%s, --force: said %q; want %q", c.path, said, c.beside)
		}
		if used == c.path {
			t.Errorf("%s, --force: recorded in it", c.path)
		}
	}
	if b, _ := os.ReadFile(notesPath); string(b) != notes {
		t.Errorf("the notes now hold %q", b)
	}
	if fi, err := os.Lstat(linkPath); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link is now %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(session); string(b) != lastLaunch {
		t.Errorf("the file the link points to now holds %q", b)
	}
	_, err = sessions.CreateFile(sock, true)
	if err == nil || errors.Is(err, fs.ErrExist) || !strings.HasPrefix(err.Error(), sock+" is a socket; ") {
		t.Errorf("a socket, --force: %v", err)
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		t.Errorf("the socket is now %v, %v", fi, err)
	}

	// An empty file and a session file are written over.
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for _, p := range []string{empty, session} {
		if err := sessions.CheckRecordPath(p, true); err != nil {
			t.Errorf("CheckRecordPath(%s, --force): %v", p, err)
		}
		f, err := sessions.CreateFile(p, true)
		if err != nil {
			t.Fatalf("%s, --force: %v", p, err)
		}
		f.Close()
		if fi, _ := os.Stat(p); fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s written over: size %d, mode %v; want a new, empty file, 0600", p, fi.Size(), fi.Mode().Perm())
		}
	}
}

// The file a command records is never written over while it records it,
// --force or not: the next one goes beside it, and says why. Once the
// command is done with it, --force writes over it.
func TestForceNeverWritesOverAFileACommandStillRecords(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	started := time.Date(2026, 11, 29, 18, 42, 0, 123_000_000, time.UTC)
	live, err := sessions.CreateFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	live.WriteString(lastLaunch)
	says := "an rpctap that is still running records " + path + "; give --record another name"
	if err := sessions.CheckRecordPath(path, true); err == nil || err.Error() != says {
		t.Errorf("CheckRecordPath(--force) on a file being recorded: %v; want %q", err, says)
	}
	var said []string
	f, used, err := sessions.CreateRecording(path, started, func(p string) (*os.File, error) { return sessions.CreateFile(p, true) }, func(s string) { said = append(said, s) })
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if want := "an rpctap that is still running records " + path + ", so this session is recorded in " + used + " (--record another name)"; len(said) != 1 || said[0] != want {
		t.Errorf("said %q; want %q", said, want)
	}
	// The live file is still the one being written.
	live.WriteString(lastLaunch)
	if b, _ := os.ReadFile(path); string(b) != lastLaunch+lastLaunch {
		t.Errorf("the file being recorded holds %q", b)
	}
	live.Close()
	f, err = sessions.CreateFile(path, true)
	if err != nil {
		t.Fatalf("--force once no one records it: %v", err)
	}
	f.Close()
}
