package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// StateDir returns the directory that holds past session files, creating
// it (mode 0700) when it is missing:
//
//   - $XDG_STATE_HOME/rpctap/sessions when XDG_STATE_HOME is an absolute path;
//   - else $HOME/.local/state/rpctap/sessions when HOME is set;
//   - else, as when a host starts a server with an empty environment,
//     rpctap-UID/sessions under os.TempDir(), where UID is the user's id.
//     That directory must then be the user's own and closed to others; a
//     directory someone else made there is refused.
func StateDir() (string, error) {
	if xdg := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(xdg) {
		return makeDir(filepath.Join(xdg, "rpctap", "sessions"))
	}
	if home := os.Getenv("HOME"); home != "" {
		return makeDir(filepath.Join(home, ".local", "state", "rpctap", "sessions"))
	}
	base := filepath.Join(os.TempDir(), "rpctap-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("making the session directory: %w", err)
	}
	if err := checkPrivateDir(base); err != nil {
		return "", err
	}
	return makeDir(filepath.Join(base, "sessions"))
}

func makeDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("making the session directory: %w", err)
	}
	return dir, nil
}

// fileTimeLayout is the start time in a session file's name: UTC, to the
// millisecond, with no characters a file system or a shell minds.
const fileTimeLayout = "20060102T150405.000Z"

// maxNameLen bounds the server's name in a file name.
const maxNameLen = 64

// NewFileName returns the name of a session file started at started for
// the server name, such as 20261129T184200.123Z-server-everything.jsonl.
// Names sort by start time. The server name is cut to [A-Za-z0-9._-]: each
// run of other characters becomes one "-", leading and trailing "-" and
// "." are dropped, it is cut to 64 bytes, and an empty result becomes
// "session".
func NewFileName(started time.Time, name string) string {
	var b strings.Builder
	b.WriteString(started.UTC().Format(fileTimeLayout))
	b.WriteByte('-')
	b.WriteString(sanitizeName(name))
	b.WriteString(".jsonl")
	return b.String()
}

// The file a command is asked to record to (--record FILE) may be there
// already: a host that starts "rpctap run --record x.jsonl -- server" at
// each launch finds the last launch's file. A session file is never
// written over unless the user says so (--force), and a session is never
// left unrecorded for it: it goes to a new file beside it, whose name
// says when it started, and the command says which (CreateRecording).
// Commands run at a terminal refuse such a FILE before they start
// anything instead, saying what to type (the command line's check).

// CreateFile creates a session file at path, only the user's to read
// (0600). It fails with fs.ErrExist for a file that is there, unless
// overwrite: that file is then removed first (a new file takes its name:
// one who still writes the old one writes to nothing that is listed). A
// directory is never removed: it is an error that says so.
func CreateFile(path string, overwrite bool) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	} else if err == nil && overwrite {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// CreateRecording creates the session file a command was asked to record
// to, with create, which fails with fs.ErrExist for a file that is there
// (CreateFile does). Such a file is left as it is, and the session goes
// to a new file beside it (NameBeside). It returns the path used.
func CreateRecording[F any](path string, started time.Time, create func(string) (F, error)) (F, string, error) {
	f, err := create(path)
	if !errors.Is(err, fs.ErrExist) {
		return f, path, err
	}
	beside := NameBeside(path, started)
	f, err = create(beside)
	return f, beside, err
}

// NameBeside is the name of the new file a session started at started
// is recorded to when path is taken: path with the start time before its
// extension, as in x-20261129T184200.123Z.jsonl for x.jsonl.
func NameBeside(path string, started time.Time) string {
	ext := filepath.Ext(path)
	if ext == "" || strings.ContainsRune(ext, os.PathSeparator) {
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "-" + started.UTC().Format(fileTimeLayout) + ext
}

// RecordedBeside says that a session asked to go to asked, a file that
// was there, went to used instead, and how to have it otherwise.
func RecordedBeside(asked, used string) string {
	return fmt.Sprintf("%s is there already, so this session is recorded in %s (--force writes over it; --record another name keeps both)",
		classify.EscapeString(asked, 300), classify.EscapeString(used, 300))
}

func sanitizeName(name string) string {
	out := make([]byte, 0, min(len(name), maxNameLen))
	dash := false
	for i := 0; i < len(name) && len(out) < maxNameLen; i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			out = append(out, c)
			dash = c == '-'
			continue
		}
		if !dash {
			out = append(out, '-')
			dash = true
		}
	}
	s := strings.Trim(string(out), "-.")
	if s == "" {
		return "session"
	}
	return s
}
