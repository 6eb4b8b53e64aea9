package replay

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/rpctap/rpctap/sessions"
)

// A sessionFile is a session file replay writes of its own.
type sessionFile struct {
	path string
	sink bool // a device or a FIFO: nothing to read back (sessions.IsSink)
	f    *os.File
	bw   *bufio.Writer
	w    *sessions.Writer
}

// createSessionFile creates a session file at path, or, when path is "",
// a new one in the state directory, and writes its header.
func createSessionFile(path string, h sessions.Header, overwrite bool, warn func(string)) (*sessionFile, error) {
	if h.ID == "" {
		var b [8]byte
		rand.Read(b[:])
		h.ID = hex.EncodeToString(b[:])
	}
	path, auto, err := sessions.Place(path, h.Started, h.Name)
	if err != nil {
		return nil, fmt.Errorf("cannot record the replay: %w; give a file with --record FILE, or --no-record", err)
	}
	// A file that is there is kept, unless overwrite, and the replay
	// recorded beside it, as rpctap run records.
	if warn == nil {
		warn = func(string) {}
	}
	f, path, sink, err := sessions.Create(sessions.NewFile[*os.File]{Path: path, Auto: auto, ID: h.ID, Started: h.Started,
		Replace: overwrite, Open: sessions.CreateFile, Warn: warn})
	if err != nil {
		return nil, fmt.Errorf("cannot record the replay: %w; or give --no-record", err)
	}
	sf := &sessionFile{path: path, sink: sink, f: f, bw: bufio.NewWriterSize(f, 64<<10)}
	if sf.w, err = sessions.NewWriter(sf.bw, h); err != nil {
		f.Close()
		return nil, err
	}
	return sf, nil
}

func (sf *sessionFile) close() error {
	err := sf.bw.Flush()
	if cerr := sf.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the replay's session file %s: %w", sf.path, err)
	}
	return nil
}
