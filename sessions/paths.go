package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
