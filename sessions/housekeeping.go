package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// A SessionInfo is a recorded session as listings show it: its file and
// what the file's header says.
type SessionInfo struct {
	SessionFile
	ID      string
	Name    string
	Started time.Time
	Version int
	// Ended says the file's last record is the server's exit: no tap
	// writes it any more.
	Ended bool
}

// maxHeaderLine bounds what Describe reads of a file's first line.
const maxHeaderLine = 1 << 20

// ErrNotSession is what Describe and Remove return for a file that does
// not begin with a session header.
var ErrNotSession = errors.New("it does not begin with a session header, so it is no session file rpctap recorded")

// Describe reads what f's header says.
func Describe(f SessionFile) (SessionInfo, error) {
	info := SessionInfo{SessionFile: f}
	h, err := readHeader(f.Path)
	if err != nil {
		return info, err
	}
	info.ID, info.Name, info.Started, info.Version = h.ID, h.Name, h.Started, h.Version
	info.Ended = EndsWithExit(f.Path)
	return info, nil
}

// readHeader reads the header of the session file at path: its first
// line, which must be a session header.
func readHeader(path string) (Header, error) {
	file, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer file.Close()
	return headerOf(file)
}

// headerOf reads the session header r begins with.
func headerOf(r io.Reader) (Header, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, maxHeaderLine), 64<<10).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, err
	}
	h, _, ok := parseHeader(bytes.TrimSpace(line))
	if !ok {
		return Header{}, ErrNotSession
	}
	return h, nil
}

// OlderThan returns the files last written before cutoff, oldest first.
func OlderThan(files []SessionFile, cutoff time.Time) []SessionFile {
	var out []SessionFile
	for i := len(files) - 1; i >= 0; i-- { // files are newest first
		if files[i].Modified.Before(cutoff) {
			out = append(out, files[i])
		}
	}
	return out
}

// Remove deletes the session file at path. It refuses a file that does
// not begin with a session header: a mistyped path never deletes
// something else.
func Remove(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("it is not a regular file, so it is no session file rpctap recorded")
	}
	if _, err := readHeader(path); err != nil {
		return err
	}
	return os.Remove(path)
}

// InSessionDir reports whether the file at path lies in one of the
// session directories (SessionDirs), where rpctap chose its name: a file
// recorded elsewhere, with --record, is one the user named and placed (a
// fixture in a project's testdata, say), which housekeeping leaves alone
// unless asked.
func InSessionDir(path string) bool {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for _, d := range SessionDirs() {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		if d == dir {
			return true
		}
	}
	return false
}
