package tui

import (
	"time"

	"github.com/rpctap/rpctap/inject"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// common is what every pane shares: styles, keys, the highlighter.
type common struct {
	styles  Styles
	keys    KeyMap
	hl      *highlighter
	profile termenv.Profile
	now     func() time.Time // the program's clock (see WithClock)
}

func newCommon(r *lipgloss.Renderer) *common {
	return &common{styles: DefaultStyles(r), keys: DefaultKeyMap(), hl: newHighlighter(r.ColorProfile(), r.HasDarkBackground()), profile: r.ColorProfile(), now: time.Now}
}

// intentKind is what a pane asks the root to do.
type intentKind int

const (
	intentNone intentKind = iota
	intentFocusDetail
	intentJumpPair
	intentJumpSeq
	intentNextMatch
	intentRefilter
	intentCopy
	intentOpen   // open a session from the picker
	intentReply  // open the composer on a reply to the selected frame
	intentResend // open the composer on a copy of it with a fresh id
	// The held pane's: seq is the held frame's number.
	intentHoldForward
	intentHoldForwardAll
	intentHoldDrop
	intentHoldEdit  // open the composer on the frame, to send in its place
	intentHoldReply // open the composer on an answer to it, in its receiver's place
	// The tools pane's.
	intentCallTool // open the composer on a tools/call of tool (built in a command)
	intentTemplate // open the composer on template
	// A view's, for what its messages change outside it.
	intentStatus      // text on the status line
	intentKeepTicking // ticks again: held frames count down
	// The composer's.
	intentQuit          // ctrl+c: no text holds it
	intentHelp          // ? over a list: its keys
	intentCloseComposer // close the composer
	intentPick          // fill the composer with the catalog entry pick
	intentTemplates     // list the session's templates (built in a command)
	intentEdit          // open the text in $EDITOR
	intentSend          // send the frames of send through the live tap
	intentHoldSend      // the text goes in place of a held frame, or answers it (hold)
)

// An intent is a plain value a pane returns; the root turns it into
// state changes and commands.
type intent struct {
	kind   intentKind
	step   int
	seq    int64
	target string // for intentOpen: a file path or a socket
	text   string // for intentStatus
	// The composer's: what to fill it with, the frames to send, the
	// frame for a held one.
	pick *inject.Entry
	send *injectRequest
	hold *holdSend
	// The tools pane's: the tool to call, the template to open.
	tool     *inject.Tool
	template *inject.Template
}
