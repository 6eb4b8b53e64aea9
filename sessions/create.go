package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Place is the file a session started at started, of the server name, is
// recorded to: given (--record FILE) when it is not "", or else a new file
// in the state directory (NewFileName), and auto is true.
func Place(given string, started time.Time, name string) (path string, auto bool, err error) {
	if given != "" {
		return given, false, nil
	}
	dir, err := StateDir()
	if err != nil {
		return "", true, err
	}
	return filepath.Join(dir, NewFileName(started, name)), true, nil
}

// A NewFile says how Create makes the file a session is recorded to. F
// is what Open makes: an *os.File (CreateFile), or what a test writes to.
type NewFile[F any] struct {
	// Path and Auto are where the file goes, as Place says.
	Path string
	Auto bool
	// ID and Started are the session's id and start time.
	ID      string
	Started time.Time
	// Replace is --force: the file at a given path is written over. A
	// file of an automatic name never is.
	Replace bool
	// Open creates a new file at a path, in place of one that is there
	// when replace; it fails with fs.ErrExist for a name that is taken
	// (CreateFile does).
	Open func(path string, replace bool) (F, error)
	// Warn is told when a given name is taken and the session goes to a
	// new file beside it (CreateRecording).
	Warn func(string)
	// Unlisted, when not nil, is told when the file cannot be made known
	// to other environments' listings (Register).
	Unlisted func(error)
}

// Create makes the file a session is recorded to. An automatic name that
// is taken (another session of the same server, begun in the same
// millisecond) takes the session id's first six characters before its
// .jsonl; a given name that is taken is left as it is, and the session is
// recorded beside it. It returns the file, its absolute path, and whether
// it is a sink (IsSink: nothing to read back, so it is not registered).
func Create[F any](n NewFile[F]) (f F, path string, sink bool, err error) {
	path = n.Path
	if n.Auto {
		f, err = n.Open(path, false)
		if errors.Is(err, fs.ErrExist) {
			path = strings.TrimSuffix(path, ".jsonl") + "-" + n.ID[:6] + ".jsonl"
			f, err = n.Open(path, false)
		}
	} else {
		open := func(p string) (F, error) { return n.Open(p, n.Replace) }
		f, path, err = CreateRecording(path, n.Started, open, n.Warn)
	}
	if err != nil {
		return f, path, false, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if of, ok := any(f).(*os.File); ok && IsSink(of) {
		return f, path, true, nil
	}
	if err := Register(path); err != nil && n.Unlisted != nil {
		n.Unlisted(err)
	}
	return f, path, false, nil
}
