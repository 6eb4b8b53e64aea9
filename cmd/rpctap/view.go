package main

import (
	"fmt"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"
)

// runUI runs the program on the terminal device: keys come from it, never
// from a protocol pipe.
func runUI(srcs []*source.Source, opts ...tui.Option) error { return runUIUntil(nil, srcs, opts...) }

// runUIUntil is runUI that also ends, as q ends it, when quit closes.
func runUIUntil(quit <-chan struct{}, srcs []*source.Source, opts ...tui.Option) error {
	c, err := loadUserConfig() // its theme
	if err != nil {
		return usageError(err)
	}
	tty, err := openTerminal()
	if err != nil {
		return fmt.Errorf("the live view needs a terminal: %w (use rpctap tail or rpctap check instead)", err)
	}
	defer tty.Close()
	r := uiRenderer(tty, c.Theme)
	m := tui.New(r, srcs, append(opts, tui.WithTerminal(tty))...)
	// The view ends as q ends it when its terminal goes away (see
	// ttyInput): SIGHUP, or a read that finds the terminal hung up.
	gone := make(chan struct{})
	in := &ttyInput{File: tty, gone: func() { close(gone) }}
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(tty), tea.WithAltScreen(), tea.WithMouseCellMotion())
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-gone:
		case <-hangup():
		case <-quit:
		case <-ended:
			return
		}
		p.Quit()
	}()
	_, err = p.Run()
	for _, s := range srcs {
		s.Close()
	}
	return err
}

// openTerminal opens the terminal the live view draws on and reads keys
// from: the process's controlling terminal, whatever stdio is.
func openTerminal() (*os.File, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }

// endHere ends a tap that runs in this process: it waits up to 5 s for
// its session to end, then says on stderr what the tap warned about and
// where its session is. It reports whether the session ended.
func endHere(run *tap.Running) bool {
	if !run.WaitFor(5 * time.Second) {
		return false // the tap still runs: its warnings are not said yet
	}
	for _, w := range run.Warnings() {
		fmt.Fprintln(os.Stderr, "rpctap:", w)
	}
	if p := run.Path(); p != "" {
		fmt.Fprintln(os.Stderr, "rpctap: session recorded in", p)
	}
	return true
}
