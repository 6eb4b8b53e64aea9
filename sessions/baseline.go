package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A BaselineFile is what `rpctap baseline accept` keeps of a server: the
// definitions it listed (tools, prompts, resource templates) that the
// user trusts, in a file of the baseline directory named after the
// server. Sessions of the server are judged against it (tool-drift).
type BaselineFile struct {
	Format   int       `json:"rpctap_baseline"`
	Server   string    `json:"server"`
	Accepted time.Time `json:"accepted"`
	// From is the session file the definitions were taken from.
	From string `json:"from"`
	// Lists hold each kind the session listed (an empty list too); a
	// kind it never listed is null (and not compared).
	Tools             classify.Definitions `json:"tools"`
	Prompts           classify.Definitions `json:"prompts"`
	ResourceTemplates classify.Definitions `json:"resourceTemplates"`
}

// baselineFormat is the format version of baseline files this rpctap
// writes and reads.
const baselineFormat = 1

// Lists are the file's lists by kind, as classify.Baseline holds them.
func (b *BaselineFile) Lists() [3]classify.Definitions {
	return [3]classify.Definitions{classify.DefTool: b.Tools, classify.DefPrompt: b.Prompts, classify.DefTemplate: b.ResourceTemplates}
}

// AcceptedText is when the baseline was accepted, as every output says it.
func (b *BaselineFile) AcceptedText() string { return b.Accepted.UTC().Format("2006-01-02 15:04 UTC") }

// Baseline is the file as the tracker judges by it.
func (b *BaselineFile) Baseline() *classify.Baseline {
	return &classify.Baseline{Server: b.Server, Accepted: b.AcceptedText(), Lists: b.Lists()}
}

// NewBaseline is the baseline of server that lists, the latest lists of
// the session file from, accepts now.
func NewBaseline(server, from string, lists [3]classify.Definitions, now time.Time) *BaselineFile {
	return &BaselineFile{Format: baselineFormat, Server: server, Accepted: now.UTC(), From: from,
		Tools: lists[classify.DefTool], Prompts: lists[classify.DefPrompt], ResourceTemplates: lists[classify.DefTemplate]}
}

// BaselineDir is the directory of the accepted baselines: "baselines"
// beside the session directory (StateDir), closed to others as it is;
// create makes it when it is not there.
func BaselineDir(create bool) (string, error) {
	if !create {
		if root, ok := stateRoot(); ok {
			return filepath.Join(root, "baselines"), nil
		}
		// The fallback under the temporary directory is read only when
		// it is the user's own and closed to others, as StateDir checks.
		base := filepath.Join(os.TempDir(), "rpctap-"+strconv.Itoa(os.Getuid()))
		if err := checkPrivateDir(base); err != nil {
			return "", err
		}
		return filepath.Join(base, "baselines"), nil
	}
	sessions, err := StateDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(sessions), "baselines")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("making the baseline directory: %w", err)
	}
	return dir, nil
}

// baselinePath is where the baseline of server is kept in dir: its name
// cut to what a file name may hold, and a hash of the whole name, so
// that two names cut alike are two files.
func baselinePath(dir, server string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(dir, sanitizeName(server)+"-"+hex.EncodeToString(sum[:4])+".json")
}

// SaveBaseline writes b in the baseline directory, replacing the
// server's earlier baseline whole (a reader sees the old file or the new
// one, never a part), and returns its path.
func SaveBaseline(b *BaselineFile) (string, error) {
	dir, err := BaselineDir(true)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return "", err
	}
	path := baselinePath(dir, b.Server)
	tmp, err := os.CreateTemp(dir, ".accept-*")
	if err != nil {
		return "", fmt.Errorf("cannot write the baseline: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("cannot write the baseline %s: %w", quoted(path), err)
	}
	return path, nil
}

// ErrNoBaseline says no baseline was accepted for a server.
var ErrNoBaseline = errors.New("no baseline")

// LoadBaseline reads the baseline accepted for server; ErrNoBaseline
// when there is none.
func LoadBaseline(server string) (*BaselineFile, string, error) {
	dir, err := BaselineDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", ErrNoBaseline
	}
	if err != nil {
		return nil, "", err
	}
	path := baselinePath(dir, server)
	b, err := readBaseline(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, ErrNoBaseline
	}
	if err == nil && b.Server != server {
		return nil, path, ErrNoBaseline
	}
	return b, path, err
}

func readBaseline(path string) (*BaselineFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b BaselineFile
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("the baseline %s is damaged (%v): remove it with rpctap baseline reset, then accept a session again", quoted(path), err)
	}
	if b.Format != baselineFormat {
		return nil, fmt.Errorf("the baseline %s is of format %d, which this rpctap does not read", quoted(path), b.Format)
	}
	// Definitions are kept indented, to be read; they are compared and
	// shown compact, as a session's are.
	for _, defs := range b.Lists() {
		for name, def := range defs {
			var c bytes.Buffer
			if json.Compact(&c, def) == nil {
				defs[name] = c.Bytes()
			}
		}
	}
	return &b, nil
}

// Baselines are every baseline accepted, in the order of their servers'
// names; a file that cannot be read is skipped and named in skipped.
func Baselines() (list []*BaselineFile, skipped []string, err error) {
	dir, err := BaselineDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	for _, path := range names {
		b, err := readBaseline(path)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		list = append(list, b)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Server < list[j].Server })
	return list, skipped, nil
}

// ResetBaseline removes the baseline accepted for server; ErrNoBaseline
// when there is none.
func ResetBaseline(server string) (string, error) {
	_, path, err := LoadBaseline(server)
	if err != nil {
		return path, err
	}
	if err := os.Remove(path); err != nil {
		return path, fmt.Errorf("cannot remove the baseline %s: %w", quoted(path), err)
	}
	return path, nil
}

// BaselineLookup is the tracker's TrackerOptions.Baseline: the baseline
// accepted for a server, read once per name; a baseline that cannot be
// read is told to warn (when not nil) and judges nothing.
func BaselineLookup(warn func(string)) func(string) *classify.Baseline {
	var mu sync.Mutex
	read := map[string]*classify.Baseline{}
	return func(server string) *classify.Baseline {
		mu.Lock()
		defer mu.Unlock()
		if b, ok := read[server]; ok {
			return b
		}
		f, _, err := LoadBaseline(server)
		var b *classify.Baseline
		switch {
		case err == nil:
			b = f.Baseline()
		case !errors.Is(err, ErrNoBaseline) && warn != nil:
			warn("the session is not judged against the baseline of server " + quoted(server) + ": " + err.Error())
		}
		read[server] = b
		return b
	}
}
