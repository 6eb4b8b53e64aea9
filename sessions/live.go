package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LiveDir is where live taps put their sockets: /tmp/rpctap-UID/live. It
// depends on no environment variable, because a host often starts a tap
// with an empty environment while the user's terminal has a full one, and
// the two must still find each other. It is created private (0700).
func LiveDir() (string, error) {
	base := filepath.Join("/tmp", "rpctap-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("making the live-tap directory: %w", err)
	}
	if err := checkPrivateDir(base); err != nil {
		return "", err
	}
	dir := filepath.Join(base, "live")
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("making the live-tap directory: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// SessionDirs lists the directories session files may be in: this
// environment's state directory and the one a tap started with an empty
// environment uses.
func SessionDirs() []string {
	var dirs []string
	if d, err := StateDir(); err == nil {
		dirs = append(dirs, d)
	}
	fallback := filepath.Join(os.TempDir(), "rpctap-"+strconv.Itoa(os.Getuid()), "sessions")
	fixed := filepath.Join("/tmp", "rpctap-"+strconv.Itoa(os.Getuid()), "sessions")
	for _, d := range []string{fallback, fixed} {
		if len(dirs) == 0 || dirs[0] != d {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// A SessionFile is a recorded session on disk.
type SessionFile struct {
	Path     string
	Modified time.Time
	Size     int64
}

// RecentSessions lists session files, newest first, at most n (all when
// n <= 0).
func RecentSessions(n int) []SessionFile {
	var out []SessionFile
	seen := map[string]bool{}
	for _, d := range SessionDirs() {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			p := filepath.Join(d, e.Name())
			if seen[p] {
				continue
			}
			seen[p] = true
			if fi, err := e.Info(); err == nil {
				out = append(out, SessionFile{Path: p, Modified: fi.ModTime(), Size: fi.Size()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// EndsWithExit reports whether the session file's last record is the exit
// event: when it is not, a tap may still be writing the file.
func EndsWithExit(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	const tail = 4096
	off := max(fi.Size()-tail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	buf = bytes.TrimRight(buf, "\n")
	ev, err := NewReader(bytes.NewReader(buf[bytes.LastIndexByte(buf, '\n')+1:])).Next()
	return err == nil && ev.Kind == EventExit
}
