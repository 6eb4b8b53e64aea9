package main

import (
	"bytes"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/charmbracelet/x/term"
	"github.com/rpctap/rpctap/classify"
)

// A view ends when its terminal goes away (the terminal window closed,
// the ssh connection dropped, tmux's server killed), as q would end it:
// the kernel hangs the terminal up, which sends SIGHUP to the session
// and makes every read of the terminal return end of file (or EIO).
// Either one is enough, since a process may have SIGHUP ignored (nohup,
// a shell's trap) and a read may never come (the view released the
// terminal to an editor).

// ttyInput is the view's terminal as Bubble Tea reads it: the same file
// (Bubble Tea still sees a terminal, by its Fd, and puts it in raw
// mode), but a read that fails or finds the end calls gone, once, and
// reads as end of file, so that Bubble Tea's reader ends quietly.
type ttyInput struct {
	*os.File
	once sync.Once
	gone func()
}

func (t *ttyInput) Read(b []byte) (int, error) {
	n, err := t.File.Read(b)
	if err != nil {
		t.once.Do(t.gone)
		return n, io.EOF
	}
	return n, nil
}

// hangup is closed when the process gets SIGHUP. The first call starts
// catching it, which also keeps the default action (death with no
// clean-up) from ending a view whose tap runs in this process: such a
// command calls it before its tap starts. A process started with SIGHUP
// ignored (nohup) keeps it ignored; its view ends on the terminal's
// read.
var hangup = sync.OnceValue(func() <-chan struct{} {
	if signal.Ignored(syscall.SIGHUP) {
		return nil
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	gone := make(chan struct{})
	go func() {
		<-c
		close(gone)
	}()
	return gone
})

// terminalGone reports whether f, a terminal when the command started,
// is one no more: a hung-up terminal fails every request on it.
func terminalGone(f *os.File) bool {
	return !term.IsTerminal(f.Fd())
}

// viewSignals is what a tap that runs in the view's process passes on to
// its server: SIGINT and SIGTERM, caught from now on. SIGHUP is not
// among them: it says the view's terminal went away, which ends the
// view, and the view's end ends the tap as q does.
func viewSignals() <-chan os.Signal {
	c := make(chan os.Signal, 4)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	return c
}

// lineEscaper writes a peer's text to a screen a line at a time, each
// line with its control, escape, bidi and format characters shown
// escaped (classify.AppendEscaped), for text rpctap shows the user that
// no tap passes on: the stderr of a server rpctap is the host of
// (replay --as-host). A line longer than maxEscapedLine is written in
// pieces, cut where a character begins; Close writes a last line that
// had no newline.
type lineEscaper struct {
	w    io.Writer
	line []byte
	out  []byte
}

const maxEscapedLine = 64 << 10

func (e *lineEscaper) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			e.line = append(e.line, rest...)
			for len(e.line) > maxEscapedLine {
				cut := maxEscapedLine
				for k := 0; k < utf8.UTFMax && !utf8.RuneStart(e.line[cut]); k++ {
					cut--
				}
				if err := e.emit(e.line[:cut]); err != nil {
					return 0, err
				}
				e.line = e.line[:copy(e.line, e.line[cut:])]
			}
			break
		}
		e.line = append(e.line, rest[:i]...)
		rest = rest[i+1:]
		if err := e.emit(e.line); err != nil {
			return 0, err
		}
		e.line = e.line[:0]
	}
	return len(p), nil
}

func (e *lineEscaper) emit(line []byte) error {
	e.out = append(classify.AppendEscaped(e.out[:0], line, 0), '\n')
	_, err := e.w.Write(e.out)
	return err
}

// Close writes the last line, if it had no newline.
func (e *lineEscaper) Close() error {
	if len(e.line) == 0 {
		return nil
	}
	err := e.emit(e.line)
	e.line = e.line[:0]
	return err
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
