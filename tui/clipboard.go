package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/source"
)

// The selected frame goes to the clipboard as an OSC 52 sequence written
// to the terminal (the bytes are base64: nothing of the peer's reaches
// the terminal raw). Inside tmux the sequence reaches the clipboard only
// when tmux lets programs set it: its set-clipboard option is on. By
// default it is external, and tmux drops the sequence: the view then
// says so, and what to type, instead of saying it copied.

// copyDoneMsg says what became of a copy.
type copyDoneMsg struct {
	session int
	text    string
}

// copyFrame copies the record at index position pos (line seq) of src to
// the clipboard through out, the terminal, unless tmux would drop the
// sequence.
func copyFrame(session int, src *source.Source, pos int, seq int64, out io.Writer) tea.Msg {
	ev, err := src.Record(pos)
	if err != nil {
		return copyDoneMsg{session, "cannot read the frame: " + err.Error()}
	}
	if why := tmuxClipboard(); why != "" {
		return copyDoneMsg{session, fmt.Sprintf("frame #%d not copied: %s", seq, why)}
	}
	osc := "\x1b]52;c;" + base64.StdEncoding.EncodeToString(ev.Frame) + "\x07"
	if _, err := io.WriteString(out, osc); err != nil {
		return copyDoneMsg{session, fmt.Sprintf("frame #%d not copied: %v", seq, err)}
	}
	return copyDoneMsg{session, fmt.Sprintf("copied frame #%d (%d bytes)", seq, len(ev.Frame))}
}

// tmuxClipboard says why tmux drops the clipboard sequence, with what
// to type to let it through; "" outside tmux, or when tmux lets it
// through (or cannot be asked).
func tmuxClipboard() string {
	if os.Getenv("TMUX") == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", "show-options", "-sv", "set-clipboard").Output()
	if v := strings.TrimSpace(string(out)); err != nil || v == "on" || v == "" {
		return ""
	}
	// What to type first: at 80 columns the end is cut.
	return "tmux drops OSC 52; run tmux set -s set-clipboard on (and put it in ~/.tmux.conf)"
}
