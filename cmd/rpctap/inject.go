package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"github.com/spf13/cobra"
)

// injectOptions are rpctap inject's flags.
type injectOptions struct {
	target, dir, file string
	catalog, method   string
	tool, id          string
	args              []string
	size              int
	capture, json     bool
	forward           bool
	raw, force        bool
	wait              time.Duration
	dirSet            bool // --dir was given
}

func newInjectCmd() *cobra.Command {
	var o injectOptions
	cmd := &cobra.Command{
		Use:   "inject [--tap NAME|PID] [--dir h2s|s2h] [--capture [--json] | --forward] [--raw [--force]] FRAME | --file F|- | --catalog NAME | --method M",
		Short: "Insert a frame into a live session at the next frame boundary",
		Long: `Sends a frame (its body: rpctap adds the framing the stream uses) to the
server (--dir h2s, the default) or to the host (--dir s2h) of a live tap.
The frame is one of:

  FRAME              the frame as given on the command line
  --file F           the frame read from the file F (- for stdin), for a frame
                     too large for the command line; one newline at its end
                     is dropped
  --catalog NAME     an entry of the edge-case catalog (rpctap catalog lists
                     them), sent the way it goes (a server's frame to the
                     host) unless --dir says otherwise; --size N sets the
                     large frame's size, --id ID names the request in
                     flight that an entry is about
  --method M         a request built from what the session showed: for
                     tools/call, --tool T with --arg name=value for each
                     argument, read by the type the tool's inputSchema gives
                     it; prompts/get takes --tool PROMPT, resources/read
                     --tool URI; other methods get the params they last had

With --raw, the frame (FRAME or --file) is read in the composer's raw
syntax and its bytes are written exactly, with no framing added: one
frame a line, \xHH for any byte (\x0a a line feed inside a frame), \c
at the end of a line for no newline (or, on lsp, no header: write your
own). Bytes that would leave the stream inside a frame (a partial frame)
are refused with the reason unless --force is given.

JSON written over several lines (FRAME or --file) is sent compacted to one
line; --raw sends the bytes as they are.

A request gets a fresh id ("rpctap-N") that no id of the side it
impersonates uses, unless --id gives one. Malformed frames are sent as they
are. The answer to an injected request is captured: the tap records it and
keeps it from the side that never sent the request, however late it comes
(--forward lets it go on to that side, an unmatched response on purpose).
With --capture, the frame must be a request with an id, and rpctap inject
waits for its answer and prints it with its latency (--json: one JSON
object per frame, for scripts).

Exit status: 0 when sent (and with --capture, answered with a result); 1
when the answer is an error, none came within --wait, or it is too large
to print (over 1 MiB: the session file holds it, and a sentence says how
to read it); 2 for a usage error, or when the tap cannot be reached or
refuses the frame.`,
		Args: func(cmd *cobra.Command, args []string) error { return o.check(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dirSet = cmd.Flags().Changed("dir")
			return runInject(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "tap", "", "which live tap (name or pid); needed when more than one runs")
	f.StringVar(&o.dir, "dir", "h2s", "h2s: to the server; s2h: to the host")
	f.StringVar(&o.file, "file", "", "read the frame from this file (- for stdin) instead of the command line")
	f.StringVar(&o.catalog, "catalog", "", "send this entry of the edge-case catalog (rpctap catalog lists them)")
	f.IntVar(&o.size, "size", 0, "with --catalog large-frame, the frame's size in bytes")
	f.StringVar(&o.method, "method", "", "build a request for this method from what the session showed")
	f.StringVar(&o.tool, "tool", "", "with --method tools/call, the tool (prompts/get: the prompt; resources/read: the URI); with --catalog bad-tool-arguments, the tool it calls")
	f.StringArrayVar(&o.args, "arg", nil, "with --method, an argument as name=value (repeat for more)")
	f.StringVar(&o.id, "id", "", "the request's id as JSON (\"abc\" or 7); for --catalog, the id of the request in flight an entry names")
	f.BoolVar(&o.raw, "raw", false, "write the frame's bytes exactly, read in the raw syntax (\\xHH, \\c): no framing added")
	f.BoolVar(&o.force, "force", false, "with --raw, send bytes that leave the stream inside a frame (a partial frame)")
	f.BoolVar(&o.capture, "capture", false, "wait for the answer (always kept from the other side) and print it with its latency")
	f.BoolVar(&o.forward, "forward", false, "let the answer go on to the side that never sent the request (an unmatched response, on purpose)")
	f.BoolVar(&o.json, "json", false, "with --capture, print one JSON object per frame")
	f.DurationVar(&o.wait, "wait", 10*time.Second, "with --capture, how long to wait for the answer")
	return cmd
}

// check says what is wrong with the frame and flags inject is given, as
// a usage error, or nil.
func (o *injectOptions) check(args []string) error {
	sources := 0
	for _, set := range []bool{len(args) > 0, o.file != "", o.catalog != "", o.method != ""} {
		if set {
			sources++
		}
	}
	switch {
	case sources > 1:
		return usageError(errors.New("give one frame: FRAME, --file F, --catalog NAME or --method M, not several"))
	case sources == 0:
		return usageError(errors.New("give the frame to inject: rpctap inject FRAME, --file F (- for stdin), --catalog NAME (rpctap catalog lists them) or --method M, as in: rpctap inject --method tools/call --tool echo --arg message=hi"))
	case len(args) > 1 && !looksLikeFrame(args[0]):
		return usageError(fmt.Errorf("%s is not a frame; to name the tap, give --tap, as in: rpctap inject --tap %s '{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"method\":\"ping\"}' (rpctap ls lists the taps)", classify.EscapeString(args[0], 80), shellQuote(args[0])))
	case len(args) > 1:
		return usageError(errors.New("give the frame as one argument (quote it), as in: rpctap inject '{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"method\":\"ping\"}'"))
	case o.json && !o.capture:
		return usageError(errors.New("--json prints the captured answer: add --capture"))
	case o.capture && o.forward:
		return usageError(errors.New("--capture waits for the answer and keeps it from the other side; --forward lets it go on to that side: drop one of them"))
	case o.force && !o.raw:
		return usageError(errors.New("--force sends a partial raw frame: add --raw, as in: rpctap inject --raw --force '{\"jsonrpc\":\"2.0\"\\c'"))
	case o.raw && (o.catalog != "" || o.method != ""):
		return usageError(errors.New("--raw reads FRAME or --file in the raw syntax; --catalog and --method build their frames themselves"))
	case len(o.args) > 0 && o.method == "", o.tool != "" && o.method == "" && o.catalog == "":
		return usageError(errors.New("--tool and --arg fill a template: add --method, as in --method tools/call --tool echo --arg message=hi"))
	case o.tool != "" && o.catalog != "" && !catalogCallsTool(o.catalog):
		return usageError(fmt.Errorf("--tool names the tool a catalog entry calls, and %s calls none (bad-tool-arguments does)", classify.EscapeString(o.catalog, 60)))
	}
	if _, err := classify.ParseDirection(o.dir); err != nil || o.dir == "err" {
		return usageError(errors.New("--dir is h2s (to the server, as if from the host) or s2h (to the host, as if from the server)"))
	}
	return nil
}

func runInject(stdin io.Reader, stdout, stderr io.Writer, args []string, o injectOptions) error {
	if o.catalog != "" {
		if err := catalogDir(stderr, &o); err != nil {
			return err
		}
	}
	dir, _ := classify.ParseDirection(o.dir)
	var info tap.Info
	var frames [][]byte
	var err error
	var raw []inject.Frame
	fromSession := o.fromSession()
	if !fromSession { // frames that need no tap: their faults are said first
		if frames, _, err = injectFrames(stdin, args, o, dir, info); err != nil {
			return err
		}
		if o.raw {
			if raw, err = parseRaw(frames[0]); err != nil {
				return err
			}
		}
	}
	if info, err = tap.FindTap(o.target); err != nil {
		return err
	}
	if fromSession { // built from the tap's session
		var ids *inject.IDs
		if frames, ids, err = injectFrames(stdin, args, o, dir, info); err != nil {
			return err
		}
		if o.method != "" && o.id != "" && ids.Collides(dir, []byte(o.id)) { // a catalog entry's --id names one in flight
			fmt.Fprintf(stderr, "rpctap: the id %s is that of a request in flight from the %s, so the two answers cannot be told apart; sending it as asked\n",
				classify.EscapeString(o.id, 40), inject.Sender(dir))
		}
	}
	if o.raw { // written on the stream's framing
		f, _ := classify.ParseFraming(info.Framing)
		frames = [][]byte{inject.Wire(raw, f)}
	}
	failed := ""
	for _, frame := range frames {
		// The answer to a request is captured unless --forward: with
		// --capture it is waited for here, else the tap keeps it.
		rep, err := tap.SendInjectWith(info.Socket, tap.InjectRequest{Dir: o.dir, Frame: frame, Raw: o.raw, Force: o.force,
			Capture: !o.forward, Keep: !o.capture, Wait: o.wait})
		if err != nil {
			return err
		}
		if !rep.OK {
			return fmt.Errorf("the tap refused the frame: %s", rep.Error)
		}
		if !o.capture {
			continue
		}
		why, err := printCaptured(stdout, rep, o, info.Session)
		if err != nil {
			return err
		}
		if why != "" && failed == "" {
			failed = why
		}
	}
	if failed != "" {
		return exitError{code: 1, msg: failed}
	}
	return nil
}

// catalogDir sets the direction of a catalog entry's frames: the way the
// entry goes when --dir is not given (a server's frame to the host), as
// given otherwise; it says on stderr where a frame goes that is not the
// way of --dir's default, or not the entry's own way.
func catalogDir(stderr io.Writer, o *injectOptions) error {
	e, err := inject.LookupErr(o.catalog)
	if err != nil {
		return usageError(err)
	}
	dir, _ := classify.ParseDirection(o.dir)
	switch {
	case e.Dir == inject.Either || e.Dir == dir:
	case !o.dirSet:
		o.dir = e.Dir.String()
		fmt.Fprintf(stderr, "rpctap: %s is a frame the %s sends: sending it to the %s (--dir %s sends it to the %s)\n",
			e.Name, inject.Sender(e.Dir), inject.Receiver(e.Dir), dir, inject.Receiver(dir))
	default:
		fmt.Fprintf(stderr, "rpctap: %s is a frame the %s sends: sending it to the %s, as --dir %s asks\n",
			e.Name, inject.Sender(e.Dir), inject.Receiver(dir), dir)
	}
	return nil
}

// oneLine compacts JSON written over several lines into one line, so
// that it goes as one frame on a stream of one frame a line; any other
// text is kept as it is.
func oneLine(b []byte) []byte {
	if !bytes.ContainsAny(b, "\r\n") || !json.Valid(b) {
		return b
	}
	var out bytes.Buffer
	json.Compact(&out, b)
	return out.Bytes()
}

// parseRaw reads text in the raw syntax, a frame a line, JSON written
// over several lines too: --raw sends the bytes as they are
// (inject.ParseRawLines).
func parseRaw(text []byte) ([]inject.Frame, error) {
	frames, err := inject.ParseRawLines(string(text))
	if err != nil {
		return nil, usageError(fmt.Errorf("the raw frame: %w", err))
	}
	if len(frames) == 0 {
		return nil, usageError(errors.New("the raw frame is empty: give the bytes to write, as in: rpctap inject --raw '{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\\x0a'"))
	}
	return frames, nil
}

// injectFrames builds the frames to send from the flags; for --method,
// it returns too the ids the tap's session shows.
func injectFrames(stdin io.Reader, args []string, o injectOptions, dir classify.Direction, info tap.Info) ([][]byte, *inject.IDs, error) {
	switch {
	case len(args) == 1 && o.raw:
		return [][]byte{[]byte(args[0])}, nil, nil
	case len(args) == 1:
		return [][]byte{oneLine([]byte(args[0]))}, nil, nil
	case o.file != "":
		b, err := readFrameFile(o.file, stdin)
		if err == nil && !o.raw {
			b = oneLine(b)
		}
		return [][]byte{b}, nil, err
	}
	seen, ids := inject.NewSeen(), inject.NewIDs()
	if o.fromSession() {
		if err := readLiveSession(info.Session, seen, ids); err != nil {
			return nil, nil, err
		}
	}
	if o.catalog != "" {
		e, err := inject.LookupErr(o.catalog)
		if err != nil {
			return nil, nil, usageError(err)
		}
		p := seen.CatalogParams()
		p.ID, p.Size, p.Tool = o.id, o.size, o.tool
		frames, err := e.Frames(p)
		if errors.Is(err, inject.ErrNoTools) && info.Session == "" {
			err = fmt.Errorf("this tap records no session file, so rpctap inject cannot see the tools it listed: %w", err)
		}
		if err != nil {
			return nil, nil, usageError(err)
		}
		return frames, nil, nil
	}
	var kv [][2]string
	for _, a := range o.args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, nil, usageError(fmt.Errorf("--arg takes name=value, as in --arg message=hi, not %s", classify.EscapeString(a, 40)))
		}
		kv = append(kv, [2]string{k, v})
	}
	if o.id != "" && !classify.Valid([]byte(o.id)) {
		return nil, nil, usageError(fmt.Errorf("--id is JSON: a string in quotes or a number, as in --id '\"abc\"' or --id 7, not %s", classify.EscapeString(o.id, 40)))
	}
	b, err := seen.Build(o.method, inject.BuildOptions{Dir: dir, ID: o.id, Tool: o.tool, Args: kv}, ids)
	if err != nil {
		return nil, nil, usageError(err)
	}
	return [][]byte{b}, ids, nil
}

// fromSession says the frames to send are built from what the tap's
// session showed: a --method template, or a catalog entry that is.
func (o *injectOptions) fromSession() bool {
	return o.method != "" || catalogFromSession(o.catalog)
}

// catalogFromSession says the catalog entry name is built from what the
// tap's session showed (inject.Entry.FromSession).
func catalogFromSession(name string) bool {
	e, ok := inject.Lookup(name)
	return ok && e.FromSession()
}

// catalogCallsTool says the catalog entry name calls a tool the session
// listed (inject.Entry.NeedsTools); an unknown name is said elsewhere.
func catalogCallsTool(name string) bool {
	e, ok := inject.Lookup(name)
	return !ok || e.NeedsTools
}

// readLiveSession feeds the frames of a live tap's session file (none
// when it records none) to seen and ids.
func readLiveSession(path string, seen *inject.Seen, ids *inject.IDs) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read the tap's session file for templates: %w", err)
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	hdr, _ := rd.Header()
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading the tap's session file: %w", err)
		}
		if !ev.IsFrame() || ev.Dir == classify.Err {
			continue
		}
		m := hdr.Classify(ev.Frame, ev.Dir, classify.Auto)
		seen.See(&m)
		ids.See(&m)
	}
}

// printCaptured prints a captured answer and says why the command fails
// ("" when the answer is a result). session is the tap's session file
// ("" when it records none), which alone keeps an answer too large to
// print.
func printCaptured(w io.Writer, rep tap.InjectReply, o injectOptions, session string) (string, error) {
	answered := rep.Reply != nil && string(rep.Reply) != "null"
	why := ""
	var code any
	switch {
	case rep.TooLarge:
		why = fmt.Sprintf("the answer came after %s, %.1f MiB: too large to print (rpctap inject prints answers of up to 1 MiB)", rep.Latency.Round(time.Microsecond), float64(rep.Size)/(1<<20))
		if session != "" {
			why += "; the session file records it whole, captured: rpctap tail --json --filter fate:captured " + shellQuote(session)
		} else {
			why += "; this tap records no session file, so it is kept nowhere (a tap started with --record FILE keeps it)"
		}
	case !answered:
		why = rep.Error // "no answer within 10s"
		if why == "" {
			why = "no answer came"
		}
	default:
		m := classify.Classify(rep.Reply, classify.S2H, classify.JSONRPC)
		if m.HasError() {
			why = "the answer is an error"
			if c, ok := m.ErrorCode(); ok {
				why += fmt.Sprintf(" (code %d)", c)
				code = c
			}
		}
	}
	if o.json {
		doc := map[string]any{"answered": answered, "error": answered && why != ""}
		if classify.Valid([]byte(rep.ID)) {
			doc["id"] = json.RawMessage(rep.ID)
		}
		switch {
		case rep.TooLarge:
			doc["answered"], doc["too_large"], doc["size"], doc["reason"] = true, true, rep.Size, why
			doc["latency_ms"] = float64(rep.Latency.Microseconds()) / 1000
		case answered:
			doc["reply"] = rep.Reply
			doc["latency_ms"] = float64(rep.Latency.Microseconds()) / 1000
		default:
			doc["timeout"] = true
			doc["reason"] = rep.Error
		}
		if code != nil {
			doc["error_code"] = code
		}
		return why, sessions.PrintJSON(w, doc, false)
	}
	if !answered {
		return why, nil
	}
	if err := sessions.PrintRawJSON(w, rep.Reply); err != nil {
		return why, err
	}
	_, err := fmt.Fprintf(w, "latency %s\n", rep.Latency.Round(time.Microsecond))
	return why, err
}

// looksLikeFrame says whether an argument reads as a frame given on the
// command line (a JSON object or array, or a raw frame's start) rather
// than a word such as a tap's name.
func looksLikeFrame(arg string) bool {
	arg = strings.TrimLeft(arg, " \t\r\n")
	return strings.HasPrefix(arg, "{") || strings.HasPrefix(arg, "[") || strings.HasPrefix(arg, "Content-Length")
}
