// Command record is a minimal stand-in for rpctap's tap, used only to build
// test recordings: it spawns a command, relays its stdin, stdout and stderr
// with its own, and writes what crossed as a session file (format version 1,
// see the architecture document).
//
//	record -o FILE [-framing ndjson|lsp] [-name NAME] -- CMD ARGS...
//
// Frames: for ndjson, each line without its "\n" (a last line with no "\n" is
// marked "eof":true); for lsp, each body, with the header block (verbatim,
// including the blank line) in "header" when it is anything but
// "Content-Length: N\r\n\r\n". Stderr is recorded line by line as dir "err".
// Bytes that are not valid UTF-8 go in "frame_b64". A frame is recorded just
// before its last chunk is passed on, so the file's order follows causality.
//
// SIGINT, SIGTERM and SIGHUP are passed to the child. When record's stdin
// closes, the child's stdin is closed. When the child exits, record drains
// its stdout and stderr (at most 2 s more, in case a grandchild holds them),
// writes {"event":"exit","code":N} (128+signal when it was killed) and exits
// with the same status.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// session writes the session file; safe for concurrent use.
type session struct {
	mu    sync.Mutex
	f     *os.File
	enc   *json.Encoder
	start time.Time
	err   error
}

type header struct {
	Rpctap  string   `json:"rpctap"`
	Version int      `json:"version"`
	ID      string   `json:"id"`
	Started string   `json:"started"`
	Argv    []string `json:"argv"`
	Name    string   `json:"name"`
	Framing string   `json:"framing"`
	Profile string   `json:"profile"`
}

type frameLine struct {
	T        int64   `json:"t"`
	Dir      string  `json:"dir"`
	Frame    *string `json:"frame,omitempty"`
	FrameB64 string  `json:"frame_b64,omitempty"`
	Header   string  `json:"header,omitempty"`
	EOF      bool    `json:"eof,omitempty"`
}

type exitLine struct {
	T      int64  `json:"t"`
	Event  string `json:"event"`
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

func (s *session) write(v any) {
	if s.err != nil {
		return
	}
	if err := s.enc.Encode(v); err != nil {
		s.err = err
		fmt.Fprintln(os.Stderr, "record: writing session file:", err)
	}
}

// since is the time since start in microseconds (monotonic clock).
func (s *session) since() int64 { return time.Since(s.start).Microseconds() }

func (s *session) frame(dir string, body []byte, hdr string, eof bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := frameLine{T: s.since(), Dir: dir, Header: hdr, EOF: eof}
	if utf8.Valid(body) {
		str := string(body)
		l.Frame = &str
	} else {
		l.FrameB64 = base64.StdEncoding.EncodeToString(body)
	}
	s.write(l)
}

func (s *session) exit(code int, sig string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.write(exitLine{T: s.since(), Event: "exit", Code: code, Signal: sig})
}

// A splitter receives a stream's bytes in chunks and reports whole frames.
type splitter interface {
	feed(chunk []byte)
	end() // the stream ended: report what is left
}

type lineSplitter struct {
	buf  []byte
	emit func(frame []byte, hdr string, eof bool)
}

func (l *lineSplitter) feed(chunk []byte) {
	l.buf = append(l.buf, chunk...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return
		}
		l.emit(l.buf[:i], "", false)
		l.buf = l.buf[i+1:]
	}
}

func (l *lineSplitter) end() {
	if len(l.buf) > 0 {
		l.emit(l.buf, "", true)
		l.buf = nil
	}
}

type lspSplitter struct {
	buf  []byte
	emit func(frame []byte, hdr string, eof bool)
}

// contentLength parses a header block (ending in the blank line).
func contentLength(block []byte) (int, bool) {
	n, found := -1, false
	for _, line := range strings.Split(strings.TrimSuffix(string(block), "\r\n\r\n"), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return 0, false
		}
		if strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			x, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || x < 0 || found {
				return 0, false
			}
			n, found = x, true
		}
	}
	return n, found
}

func (l *lspSplitter) feed(chunk []byte) {
	l.buf = append(l.buf, chunk...)
	for {
		i := bytes.Index(l.buf, []byte("\r\n\r\n"))
		if i < 0 {
			return
		}
		block := l.buf[:i+4]
		n, ok := contentLength(block)
		if !ok {
			// Malformed header block: record it as a frame of its own.
			l.emit(block, "", false)
			l.buf = l.buf[i+4:]
			continue
		}
		if len(l.buf) < len(block)+n {
			return
		}
		hdr := string(block)
		if hdr == fmt.Sprintf("Content-Length: %d\r\n\r\n", n) {
			hdr = ""
		}
		l.emit(l.buf[len(block):len(block)+n], hdr, false)
		l.buf = l.buf[len(block)+n:]
	}
}

func (l *lspSplitter) end() {
	if len(l.buf) == 0 {
		return
	}
	if i := bytes.Index(l.buf, []byte("\r\n\r\n")); i >= 0 {
		l.emit(l.buf[i+4:], string(l.buf[:i+4]), true)
	} else {
		l.emit(l.buf, "", true)
	}
	l.buf = nil
}

func newSplitter(framing string, emit func([]byte, string, bool)) splitter {
	if framing == "lsp" {
		return &lspSplitter{emit: emit}
	}
	return &lineSplitter{emit: emit}
}

// pump copies src to dst chunk by chunk, recording frames (before the chunk
// that completes them is written on). When dst fails, the rest of src is
// drained and not recorded, so the child never blocks on a full pipe.
func pump(dst io.Writer, src io.Reader, sp splitter) error {
	buf := make([]byte, 64*1024)
	var werr error
	for {
		n, err := src.Read(buf)
		if n > 0 && werr == nil {
			sp.feed(buf[:n])
			if _, werr = dst.Write(buf[:n]); werr != nil {
				fmt.Fprintln(os.Stderr, "record:", werr)
			}
		}
		if err != nil {
			if werr == nil {
				sp.end()
			}
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return werr
			}
			return err
		}
	}
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// defaultName is the base name of the command, looking through env(1).
func defaultName(argv []string) string {
	i := 0
	if filepath.Base(argv[0]) == "env" {
		for i = 1; i < len(argv) && (strings.Contains(argv[i], "=") || strings.HasPrefix(argv[i], "-")); i++ {
		}
		if i == len(argv) {
			i = 0
		}
	}
	return filepath.Base(argv[i])
}

func main() {
	out := flag.String("o", "", "session file to write (required)")
	framing := flag.String("framing", "ndjson", "ndjson or lsp")
	name := flag.String("name", "", "session name (default: the command's base name)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: record -o FILE [-framing ndjson|lsp] [-name NAME] -- CMD ARGS...")
		flag.PrintDefaults()
	}
	flag.Parse()
	argv := flag.Args()
	if *out == "" || len(argv) == 0 || (*framing != "ndjson" && *framing != "lsp") {
		flag.Usage()
		os.Exit(2)
	}
	if *name == "" {
		*name = defaultName(argv)
	}

	// Catch signals before the child exists, so none is lost. SIGPIPE is
	// caught (not ignored, which the child would inherit) so that a host that
	// went away makes writes fail instead of killing record.
	sigc := make(chan os.Signal, 8)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(2)
	}
	s := &session{f: f, enc: json.NewEncoder(f), start: time.Now()}
	s.enc.SetEscapeHTML(false)
	s.write(header{
		Rpctap: "session", Version: 1, ID: newID(),
		Started: s.start.UTC().Format("2006-01-02T15:04:05.000000Z"),
		Argv:    argv, Name: *name, Framing: *framing, Profile: "auto",
	})

	inR, inW, err1 := os.Pipe()
	outR, outW, err2 := os.Pipe()
	errR, errW, err3 := os.Pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(2)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		s.exit(127, "")
		f.Close()
		os.Exit(127)
	}
	inR.Close()
	outW.Close()
	errW.Close()

	go func() {
		for sig := range sigc {
			cmd.Process.Signal(sig)
		}
	}()

	frames := func(dir string) func([]byte, string, bool) {
		return func(b []byte, hdr string, eof bool) { s.frame(dir, b, hdr, eof) }
	}
	go func() {
		pump(inW, os.Stdin, newSplitter(*framing, frames("h2s")))
		inW.Close()
	}()
	var drained sync.WaitGroup
	drained.Add(2)
	go func() {
		defer drained.Done()
		pump(os.Stdout, outR, newSplitter(*framing, frames("s2h")))
	}()
	go func() {
		defer drained.Done()
		pump(os.Stderr, errR, &lineSplitter{emit: frames("err")})
	}()

	cmd.Wait()
	done := make(chan struct{})
	go func() { drained.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		fmt.Fprintln(os.Stderr, "record: child exited but its stdout/stderr stayed open; stopping")
	}

	code, sig := cmd.ProcessState.ExitCode(), ""
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code, sig = 128+int(ws.Signal()), unix(ws.Signal())
	}
	s.exit(code, sig)
	if err := f.Close(); err != nil && s.err == nil {
		fmt.Fprintln(os.Stderr, "record: closing session file:", err)
	}
	os.Exit(code)
}

// unix names a signal the way kill -l does (SIGTERM).
func unix(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return "signal " + strconv.Itoa(int(sig))
}
