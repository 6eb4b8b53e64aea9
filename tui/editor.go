package tui

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// The composer's text goes to $VISUAL or $EDITOR (vi when neither is
// set) in a file of its own (0600: a frame may hold secrets), and comes
// back when the editor exits. Each step is a command: writing the file,
// running the editor (tea.ExecProcess releases the terminal to it),
// reading the file back.
//
// The editor gets the terminal itself as its stdin, stdout and stderr
// (see WithTerminal). Given the program's own input instead, a reader
// that is not a file, os/exec would feed the editor through a pipe: vim
// warns its input is not from a terminal, and once it exits the copy
// into that pipe still waits for a key, which the view never gets.

// editorReadyMsg says the file to edit is written.
type editorReadyMsg struct {
	session int
	path    string
	err     error
}

// editorExitedMsg says the editor exited.
type editorExitedMsg struct {
	session int
	path    string
	err     error
}

// editorDoneMsg is the text the editor left, read back.
type editorDoneMsg struct {
	session int
	text    string
	err     error
}

// writeEditorFile writes text to a new temporary file for the editor.
func writeEditorFile(session int, text string) tea.Cmd {
	return func() tea.Msg {
		f, err := os.CreateTemp("", "rpctap-frame-*.json") // 0600
		if err != nil {
			return editorReadyMsg{session: session, err: fmt.Errorf("cannot write the frame for the editor: %w", err)}
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return editorReadyMsg{session: session, err: fmt.Errorf("cannot write the frame for the editor: %w", err)}
		}
		return editorReadyMsg{session: session, path: f.Name()}
	}
}

// runEditor runs the user's editor on path, with the terminal tty (nil:
// the program's own input and output).
func runEditor(session int, path string, tty *os.File) tea.Cmd {
	argv := strings.Fields(os.Getenv("VISUAL"))
	if len(argv) == 0 {
		argv = strings.Fields(os.Getenv("EDITOR"))
	}
	if len(argv) == 0 {
		argv = []string{"vi"}
	}
	c := exec.Command(argv[0], append(argv[1:], path)...)
	if tty != nil {
		c.Stdin, c.Stdout, c.Stderr = tty, tty, tty
	}
	return tea.ExecProcess(c, func(err error) tea.Msg { return editorExitedMsg{session: session, path: path, err: err} })
}

// readEditorFile reads back what the editor left, and removes the file.
func readEditorFile(msg editorExitedMsg) tea.Cmd {
	return func() tea.Msg {
		defer os.Remove(msg.path)
		if msg.err != nil {
			var exit *exec.ExitError
			if errors.As(msg.err, &exit) {
				return editorDoneMsg{session: msg.session, err: fmt.Errorf("the editor exited with status %d; the frame is as it was", exit.ExitCode())}
			}
			return editorDoneMsg{session: msg.session, err: fmt.Errorf("cannot run the editor (set $EDITOR, as in EDITOR=nano): %w", msg.err)}
		}
		b, err := os.ReadFile(msg.path)
		if err != nil {
			return editorDoneMsg{session: msg.session, err: fmt.Errorf("cannot read back the frame the editor wrote: %w", err)}
		}
		return editorDoneMsg{session: msg.session, text: string(b)}
	}
}
