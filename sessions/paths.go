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
	if root, ok := stateRoot(); ok {
		return makeDir(filepath.Join(root, "sessions"))
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

// stateRoot is rpctap's directory of the state directories named by the
// environment (XDG_STATE_HOME, else HOME), not made; false when neither
// names one.
func stateRoot() (string, bool) {
	if xdg := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "rpctap"), true
	}
	if home := os.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "rpctap"), true
	}
	return "", false
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
// anything instead, saying what to type (CheckRecordPath).
//
// What is at FILE decides what is done, for every command alike:
//
//   - nothing: a new session file is made, only the user's to read;
//   - a character device or a FIFO (--record /dev/null, a pipe someone
//     reads), or a symbolic link to one: a sink, written as it is and
//     never removed (IsSink). A terminal is refused: records hold the
//     peers' text as they sent it, escape sequences and all;
//   - a regular file: its name is taken, unless --force; then a file
//     that is empty or a session file, that no running rpctap records,
//     is removed and a new one takes its name. Any other file is kept;
//   - a symbolic link to anything else: its name is taken; the link is
//     neither followed to a file nor removed;
//   - a directory, a socket, a block device: refused.

// A RecordError says why a session cannot be recorded where --record
// says, in words a user can act on, with what to type. It is still the
// error it says: errors.Is finds fs.ErrExist in one for a name that is
// taken (CreateRecording then records beside it), fs.ErrNotExist in one
// for a directory that is not there.
type RecordError struct {
	what   string // what is at the path, as in "x.jsonl is there already"
	todo   string // what to type instead
	beside string // what to type, said once the session went beside it
	err    error
}

func (e *RecordError) Error() string { return e.what + "; " + e.todo }
func (e *RecordError) Unwrap() error { return e.err }

// taken is the RecordError for a name that is taken by what: a command
// with no one to read a refusal records beside it.
func taken(what, todo, beside string) *RecordError {
	return &RecordError{what: what, todo: todo, beside: beside, err: fs.ErrExist}
}

func quoted(path string) string { return classify.EscapeString(path, 200) }

// createError says why a new file at path could not be made.
func createError(path string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	dir := quoted(filepath.Dir(path))
	switch {
	case errno == syscall.ENOENT:
		return &RecordError{what: "there is no directory " + dir, todo: "create it, or give --record a path in one that exists", err: errno}
	case errno == syscall.ENOTDIR:
		return &RecordError{what: dir + " is not a directory", todo: "give --record a path in a directory that exists", err: errno}
	case errno == syscall.EROFS:
		return &RecordError{what: dir + " is on a read-only file system", todo: "give --record a path you may write", err: errno}
	case errors.Is(errno, fs.ErrPermission):
		return &RecordError{what: dir + " may not be written in by this user", todo: "give --record a path you may write", err: errno}
	case errno == syscall.EISDIR:
		return dirError(path)
	}
	return fmt.Errorf("cannot make %s: %w", quoted(path), err)
}

func dirError(path string) error {
	return &RecordError{what: quoted(path) + " is a directory", todo: "give --record a file's path, as in: --record " + quoted(filepath.Join(path, "session.jsonl")), err: syscall.EISDIR}
}

// A recordTarget is what a --record path holds, as examine finds it.
type recordTarget int

const (
	targetNone    recordTarget = iota // nothing: a new file is made there
	targetSink                        // a character device or a FIFO, written as it is
	targetReplace                     // a regular file that --force asks to write over
)

// examine says what is at path and whether a session may be recorded
// there; overwrite is --force.
func examine(path string, overwrite bool) (recordTarget, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return targetNone, nil, nil
	case err != nil:
		return 0, nil, createError(path, err)
	}
	mode := fi.Mode()
	if mode&fs.ModeSymlink != 0 {
		if st, err := os.Stat(path); err == nil && isSinkMode(st.Mode()) {
			return targetSink, st, nil
		}
		to, _ := os.Readlink(path)
		return 0, nil, taken(quoted(path)+" is a symbolic link",
			"rpctap neither writes through a link to a file nor replaces one: give --record the path it points to ("+quoted(to)+"), or another name",
			"rpctap neither writes through a link nor replaces one; --record the path it points to, or another name")
	}
	switch {
	case isSinkMode(mode):
		return targetSink, fi, nil
	case mode.IsDir():
		return 0, nil, dirError(path)
	case !mode.IsRegular():
		kind := "neither a file nor a character device or FIFO"
		switch {
		case mode&fs.ModeSocket != 0:
			kind = "a socket"
		case mode&fs.ModeDevice != 0:
			kind = "a block device"
		}
		return 0, nil, &RecordError{what: quoted(path) + " is " + kind,
			todo: "rpctap records to a file, a FIFO or a character device such as /dev/null: give --record one of those", err: syscall.EINVAL}
	case !overwrite:
		return 0, nil, taken(quoted(path)+" is there already", "give --record another name, or add --force to write over it",
			"--force writes over it; --record another name keeps both")
	}
	return targetReplace, fi, nil
}

// isSinkMode says whether a file of this mode is a sink: what is written
// there cannot be read back.
func isSinkMode(m fs.FileMode) bool { return m&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 }

// IsSink reports whether f, opened by CreateFile, is a sink (a character
// device or a FIFO): what is written there cannot be read back, so a view
// of the session is not sent there to read it, and no listing lists it.
func IsSink(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && isSinkMode(fi.Mode())
}

// overwritable checks that the regular file at path, which Lstat found
// as fi, is one --force may write over: empty, or a session file, and
// not the file of an rpctap that is still recording it (that rpctap
// holds its lock, lockFile). With remove, it then removes it.
func overwritable(path string, fi fs.FileInfo, remove bool) error {
	f, err := openExisting(path)
	if err != nil {
		return createError(path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return &RecordError{what: quoted(path) + " changed while rpctap looked at it", todo: "type the command again", err: fs.ErrExist}
	}
	if fi.Size() > 0 {
		if _, err := headerOf(f); err != nil {
			return taken(quoted(path)+" is not a session file (it does not begin with a session header)",
				"--force writes over session files only: give --record another name, or remove that file yourself",
				"--force writes over session files only; --record another name")
		}
	}
	if lockedElsewhere(f) {
		return taken("an rpctap that is still running records "+quoted(path), "give --record another name", "--record another name")
	}
	if remove {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove %s to write over it: %w", quoted(path), err)
		}
	}
	return nil
}

// CheckRecordPath is what a command run at a terminal does with its
// --record path before it starts anything: it refuses, with what to
// type, a path CreateFile would refuse or record beside.
func CheckRecordPath(path string, overwrite bool) error {
	target, fi, err := examine(path, overwrite)
	switch {
	case err != nil:
		return err
	case target == targetNone:
		dir := filepath.Dir(path)
		if st, err := os.Stat(dir); err != nil {
			return createError(path, err)
		} else if !st.IsDir() {
			return createError(path, syscall.ENOTDIR)
		}
	case target == targetSink && fi.Mode()&fs.ModeCharDevice != 0:
		// Opening a FIFO would tell its reader of an end when it is
		// closed: only a device is opened here, to refuse a terminal.
		f, err := openSink(path, fi.Mode())
		if err != nil {
			return err
		}
		f.Close()
	case target == targetReplace:
		return overwritable(path, fi, false)
	}
	return nil
}

// CreateFile opens the file a session is recorded to, at path, as the
// comment above says: a new file, only the user's to read (0600), that
// holds a lock while it is open, so that no --force of another command
// removes it; or a sink. overwrite is --force. Its errors are
// RecordErrors; one for a name that is taken is fs.ErrExist.
func CreateFile(path string, overwrite bool) (*os.File, error) {
	target, fi, err := examine(path, overwrite)
	switch {
	case err != nil:
		return nil, err
	case target == targetSink:
		return openSink(path, fi.Mode())
	case target == targetReplace:
		// The file goes, and a new file takes its name: one who still
		// reads the old one reads to its end.
		if err := overwritable(path, fi, true); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // made meanwhile
		return nil, taken(quoted(path)+" is there already", "give --record another name, or add --force to write over it",
			"--force writes over it; --record another name keeps both")
	}
	if err != nil {
		return nil, createError(path, err)
	}
	lockFile(f)
	return f, nil
}

// CreateRecording creates the session file a command was asked to record
// to, with create, which fails with fs.ErrExist for a name that is taken
// (CreateFile does). What is there is left as it is, and the session goes
// to a new file beside it (NameBeside), which warn is told of. It returns
// the path used.
func CreateRecording[F any](path string, started time.Time, create func(string) (F, error), warn func(string)) (F, string, error) {
	f, why := create(path)
	if !errors.Is(why, fs.ErrExist) {
		return f, path, why
	}
	beside := NameBeside(path, started)
	f, err := create(beside)
	if err == nil {
		warn(recordedBeside(path, beside, why))
	}
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

// recordedBeside says that a session asked to go to asked, a name taken
// (why), went to used instead, and how to have it otherwise.
func recordedBeside(asked, used string, why error) string {
	what, todo := quoted(asked)+" is there already", "--force writes over it; --record another name keeps both"
	var re *RecordError
	if errors.As(why, &re) && re.beside != "" {
		what, todo = re.what, re.beside
	}
	return fmt.Sprintf("%s, so this session is recorded in %s (%s)", what, classify.EscapeString(used, 300), todo)
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
