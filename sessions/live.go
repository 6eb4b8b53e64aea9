package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// runtimeDir returns /tmp/rpctap-UID/NAME, made private (0700) with its
// parent. It depends on no environment variable, because a host often
// starts a tap with an empty or stripped environment while the user's
// terminal has a full one, and the two must still find each other.
func runtimeDir(name, what string) (string, error) {
	base := filepath.Join("/tmp", "rpctap-"+strconv.Itoa(os.Getuid()))
	dir := filepath.Join(base, name)
	for _, d := range []string{base, dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return "", fmt.Errorf("making the %s directory: %w", what, err)
		}
		if err := checkPrivateDir(d); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// LiveDir is where live taps put their sockets: /tmp/rpctap-UID/live.
func LiveDir() (string, error) { return runtimeDir("live", "live-tap") }

// knownDir holds a symbolic link to every session file a tap of this user
// recorded, wherever its environment put the file: /tmp/rpctap-UID/known.
func knownDir() (string, error) { return runtimeDir("known", "session list") }

// Register makes the session file at path known to every listing of this
// user's sessions (RecentSessions), whatever environment the tap and the
// listing each have: a host that strips the environment makes its taps
// record elsewhere than the user's shell would look.
func Register(path string) error {
	dir, err := knownDir()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	name := filepath.Base(abs)
	for i := 1; ; i++ {
		link := filepath.Join(dir, name)
		err := os.Symlink(abs, link)
		if errors.Is(err, os.ErrExist) && forgotten(link, abs) {
			// A link to a file that is gone (or to this very file) holds
			// the name for nothing: the name is free again.
			if os.Remove(link) == nil {
				err = os.Symlink(abs, link)
			}
		}
		if !errors.Is(err, os.ErrExist) || i == 100 {
			return err
		}
		name = filepath.Base(abs) + "." + strconv.Itoa(i)
	}
}

// forgotten says whether the link in the known directory can give up its
// name to a link to abs: it points to abs already, or to a file that is
// gone (a test's or a removed session's).
func forgotten(link, abs string) bool {
	to, err := os.Readlink(link)
	if err != nil {
		return false
	}
	if to == abs {
		return true
	}
	_, err = os.Stat(link)
	return errors.Is(err, fs.ErrNotExist)
}

// SessionDirs lists the directories session files may be in: this
// environment's state directory, the default one under the user's home
// (from HOME and from the user database, since a host may start a tap
// without XDG_STATE_HOME or HOME), and the one a tap started with an empty
// environment uses.
func SessionDirs() []string {
	var dirs []string
	if d, err := StateDir(); err == nil {
		dirs = append(dirs, d)
	}
	uid := strconv.Itoa(os.Getuid())
	candidates := []string{
		filepath.Join(os.TempDir(), "rpctap-"+uid, "sessions"),
		filepath.Join("/tmp", "rpctap-"+uid, "sessions"),
	}
	if home := os.Getenv("HOME"); home != "" {
		candidates = append(candidates, filepath.Join(home, ".local", "state", "rpctap", "sessions"))
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		candidates = append(candidates, filepath.Join(u.HomeDir, ".local", "state", "rpctap", "sessions"))
	}
	for _, d := range candidates {
		if !slices.Contains(dirs, d) {
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
// n <= 0): those in SessionDirs and those registered by taps (Register).
// A registered file that is gone is forgotten.
func RecentSessions(n int) []SessionFile {
	var out []SessionFile
	seen := map[string]bool{}
	add := func(p string, fi os.FileInfo) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || seen[real] || !fi.Mode().IsRegular() {
			return
		}
		seen[real] = true
		out = append(out, SessionFile{Path: p, Modified: fi.ModTime(), Size: fi.Size()})
	}
	for _, d := range SessionDirs() {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if fi, err := e.Info(); err == nil {
				add(filepath.Join(d, e.Name()), fi)
			}
		}
	}
	if dir, err := knownDir(); err == nil {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			target, err := os.Readlink(link)
			if err != nil {
				continue
			}
			fi, err := os.Stat(target)
			if errors.Is(err, os.ErrNotExist) {
				os.Remove(link)
				continue
			}
			if err == nil {
				add(target, fi)
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
