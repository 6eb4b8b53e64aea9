package tap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// LiveTaps asks every socket in the live directory for its tap's Info,
// all at once. Sockets whose tap is gone are removed. A tap that does not
// answer within a couple of seconds (busy, or the machine is) is left out;
// FindTap waits longer for those.
func LiveTaps() ([]Info, error) {
	taps, _, err := liveTaps(infoWait)
	return taps, err
}

// infoWait is how long LiveTaps waits for each tap's Info; slowInfoWait is
// how long FindTap waits again for the taps that had not answered.
var (
	infoWait     = 2 * time.Second
	slowInfoWait = 10 * time.Second
)

// liveTaps is LiveTaps, also giving the sockets whose tap did not answer
// within wait.
func liveTaps(wait time.Duration) (taps []Info, slow []string, err error) {
	dir, err := sessions.LiveDir()
	if err != nil {
		return nil, nil, err
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	taps, slow = queryAll(paths, wait)
	return taps, slow, nil
}

// queryAll asks each socket for its Info at once, removing the sockets
// whose tap is gone, and gives the Infos newest first and the sockets
// that did not answer within wait.
func queryAll(paths []string, wait time.Duration) (taps []Info, slow []string) {
	infos := make([]Info, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { infos[i], errs[i] = queryInfo(p, wait) })
	}
	wg.Wait()
	for i, err := range errs {
		var ne net.Error
		switch {
		case err == nil:
			taps = append(taps, infos[i])
		case (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist)) && !ownerAlive(paths[i]):
			os.Remove(paths[i]) // its tap died without cleaning up
		case errors.As(err, &ne) && ne.Timeout():
			slow = append(slow, paths[i])
		}
	}
	sort.Slice(taps, func(i, j int) bool { return taps[i].Started.After(taps[j].Started) })
	return taps, slow
}

// ownerAlive says the process a live socket is named after (PID.sock)
// still runs: a tap of a live process that refuses a connection is one
// between making its socket and listening on it (or one that makes it
// again), whose socket must not be taken for a dead tap's and removed.
func ownerAlive(socket string) bool {
	pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(socket), ".sock"))
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// The request lines of the socket protocol that a client sends as they
// are (see request): written literally, not marshalled from a request,
// which would add every other field.
const (
	infoLine       = `{"op":"info"}` + "\n"
	attachLine     = `{"op":"attach"}` + "\n"
	followFileLine = `{"op":"attach","follow":true}` + "\n"
)

// Attach connects to the tap of info and asks for its session: the
// header, every record so far, then each record as it comes (see the
// socket protocol). Follow is the way to follow a tap that records a
// file.
func Attach(info Info) (net.Conn, error) {
	c, err := Dial(info.Socket)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(attachLine)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// QueryInfo asks the tap listening on socket for its Info.
func QueryInfo(socket string) (Info, error) {
	return queryInfo(socket, slowInfoWait)
}

func queryInfo(socket string, wait time.Duration) (Info, error) {
	c, err := Dial(socket)
	if err != nil {
		return Info{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte(infoLine)); err != nil {
		return Info{}, err
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return Info{}, err
	}
	var info Info
	if err := json.Unmarshal(line, &info); err != nil {
		return Info{}, fmt.Errorf("the tap at %s answered with something that is not its info", socket)
	}
	return info, nil
}

// FindTap picks a live tap by name, pid or socket path; with an empty
// target, the only live tap.
func FindTap(target string) (Info, error) {
	if strings.HasSuffix(target, ".sock") {
		return QueryInfo(target)
	}
	taps, slow, err := liveTaps(infoWait)
	if err != nil {
		return Info{}, err
	}
	matching := func(taps []Info) (match []Info) {
		for _, t := range taps {
			if target == "" || t.Name == target || fmt.Sprint(t.PID) == target {
				match = append(match, t)
			}
		}
		return match
	}
	match := matching(taps)
	if len(slow) > 0 && (len(match) == 0 || target == "") {
		// A tap busy with its traffic, or on a loaded machine, may take
		// longer to answer; the one asked for may be among them.
		late, stillSlow := queryAll(slow, slowInfoWait)
		match = append(match, matching(late)...)
		slow = stillSlow
	}
	switch {
	case len(match) == 0 && len(slow) > 0:
		what := fmt.Sprintf("no live tap that answered is named %q", target)
		if target == "" {
			what = "no live tap answered"
		}
		return Info{}, fmt.Errorf("%s, and %d did not answer within %s (%s); try again, or name the tap by its socket path", what, len(slow), slowInfoWait, strings.Join(slow, ", "))
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0 && target == "":
		return Info{}, errors.New("no live tap is running; start one with: rpctap run -- SERVER")
	case len(match) == 0:
		return Info{}, fmt.Errorf("no live tap is named %q; rpctap ls lists them", target)
	}
	return Info{}, &AmbiguousError{Target: target, Taps: match}
}

// AmbiguousError says that more than one live tap answers to a target.
type AmbiguousError struct {
	Target string
	Taps   []Info
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s; name one by its pid, as in: rpctap tail %d (for inject: --tap %d)", e.Listing(), e.Taps[0].PID, e.Taps[0].PID)
}

// Listing says how many taps answer to the target, and their names and
// pids.
func (e *AmbiguousError) Listing() string {
	var b strings.Builder
	if e.Target == "" {
		fmt.Fprintf(&b, "%d live taps are running", len(e.Taps))
	} else {
		fmt.Fprintf(&b, "%d live taps are named %s", len(e.Taps), classify.EscapeString(e.Target, 40))
	}
	b.WriteString(" (")
	for i, t := range e.Taps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s with pid %d", classify.EscapeString(t.Name, 40), t.PID)
	}
	b.WriteString(")")
	return b.String()
}

// readInjectReply reads the tap's first answer to an injection.
func readInjectReply(c net.Conn) (InjectReply, error) {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var rep InjectReply
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return rep, err
	}
	err = json.Unmarshal(line, &rep)
	return rep, err
}

// InjectReply is what a tap answered to an injection.
type InjectReply struct {
	OK    bool            `json:"ok"`
	Error string          `json:"error"`
	ID    string          `json:"id"`
	Reply json.RawMessage `json:"reply"`
	// Latency is how long the captured answer took, from the tap's write
	// of the frame to its read of the answer.
	Latency time.Duration `json:"-"`
	// TooLarge says the answer came but was larger than the tap hands
	// over (Reply is null); Size is its length.
	TooLarge bool  `json:"-"`
	Size     int64 `json:"-"`
}

// SendInject asks the tap at socket to inject a frame; with capture it
// waits up to wait for the answer.
func SendInject(socket, dir string, frame []byte, capture bool, wait time.Duration) (InjectReply, error) {
	return SendInjectWith(socket, InjectRequest{Dir: dir, Frame: frame, Capture: capture, Wait: wait})
}

// An InjectRequest is a frame for SendInjectWith and how to inject it
// (see InjectOptions).
type InjectRequest struct {
	Dir   string // h2s or s2h
	Frame []byte
	// Raw, Force, Capture and Keep are as in InjectOptions: with Keep, the
	// reply comes at once and the answer goes to the session file only.
	Raw, Force, Capture, Keep bool
	Wait                      time.Duration // with Capture (not Keep), how long to wait for the answer
}

// SendInjectWith asks the tap at socket to inject a frame as ir says;
// with capture (and not keep) it waits up to ir.Wait for the answer.
func SendInjectWith(socket string, ir InjectRequest) (InjectReply, error) {
	dir, frame, capture, wait := ir.Dir, ir.Frame, ir.Capture, ir.Wait
	c, err := Dial(socket)
	if err != nil {
		return InjectReply{}, err
	}
	defer c.Close()
	// The frame follows the request line as it is, so that a frame of any
	// size keeps the line short.
	size := int64(len(frame))
	req, _ := json.Marshal(request{Op: "inject", Dir: dir, Size: &size, Capture: capture, WaitMs: int(wait / time.Millisecond),
		Raw: ir.Raw, Force: ir.Force, Keep: capture && ir.Keep})
	if size > maxInjectFrame {
		return InjectReply{}, fmt.Errorf("the frame is %d bytes; a tap injects frames of up to %d MiB", size, maxInjectFrame>>20)
	}
	if _, err := c.Write(append(req, '\n')); err != nil {
		return InjectReply{}, err
	}
	if _, err := c.Write(frame); err != nil {
		// The tap may have refused the frame and closed: its answer says why.
		if rep, rerr := readInjectReply(c); rerr == nil && !rep.OK {
			return rep, nil
		}
		return InjectReply{}, fmt.Errorf("cannot send the frame to the tap: %w", err)
	}
	c.SetReadDeadline(time.Now().Add(wait + 5*time.Second))
	r := bufio.NewReader(c)
	var rep InjectReply
	line, err := r.ReadBytes('\n')
	if err != nil {
		return rep, fmt.Errorf("the tap did not answer: %w", err)
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return rep, err
	}
	if !rep.OK || !capture || ir.Keep {
		return rep, nil
	}
	line, err = r.ReadBytes('\n')
	if err != nil {
		return rep, fmt.Errorf("the tap did not send the answer: %w", err)
	}
	var ans struct {
		Reply     json.RawMessage `json:"reply"`
		Error     string          `json:"error"`
		LatencyUs int64           `json:"latency_us"`
		TooLarge  bool            `json:"too_large"`
		Size      int64           `json:"size"`
	}
	if err := json.Unmarshal(line, &ans); err != nil {
		return rep, err
	}
	rep.Reply, rep.Error, rep.Latency = ans.Reply, ans.Error, time.Duration(ans.LatencyUs)*time.Microsecond
	rep.TooLarge, rep.Size = ans.TooLarge, ans.Size
	return rep, nil
}

// Dial connects to the tap listening on socket. Its errors say why in a
// sentence: a socket of another user's tap, one that no tap listens on any
// more, one that is not there.
func Dial(socket string) (net.Conn, error) {
	c, err := net.DialTimeout("unix", socket, time.Second)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("cannot reach the tap at %s: only the user who started a tap can attach to it or inject into it", socket)
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		return nil, &goneError{socket: socket, err: err}
	}
	return nil, fmt.Errorf("cannot reach the tap at %s: %w", socket, err)
}

// A HoldClient is a view's intercept connection to a tap (see the top of
// socket.go). Next reads what the tap tells; the actions write one line
// each, and their answers come through Next. The actions may be called
// from any goroutine; Next from one at a time.
type HoldClient struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

// OpenHold opens an intercept connection to the tap at socket; with h2s or
// s2h not nil, it sets that direction's filter ("" holds nothing).
func OpenHold(socket string, h2s, s2h *string) (*HoldClient, error) {
	c, err := Dial(socket)
	if err != nil {
		return nil, err
	}
	req, _ := json.Marshal(request{Op: "intercept", H2S: h2s, S2H: s2h})
	if _, err := c.Write(append(req, '\n')); err != nil {
		c.Close()
		return nil, err
	}
	return &HoldClient{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Next reads the tap's next line.
func (h *HoldClient) Next() (HoldEvent, error) {
	line, err := h.r.ReadBytes('\n')
	if err != nil {
		return HoldEvent{}, err
	}
	var ev HoldEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return HoldEvent{}, fmt.Errorf("the tap sent a line that is not an intercept event: %w", err)
	}
	return ev, nil
}

func (h *HoldClient) send(a holdAction, body []byte) error {
	if body != nil {
		n := int64(len(body))
		a.Size = &n
	}
	line, _ := json.Marshal(a)
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.c.SetWriteDeadline(time.Now().Add(requestTimeout))
	if _, err := h.c.Write(append(line, '\n')); err != nil {
		return err
	}
	if body != nil {
		if _, err := h.c.Write(body); err != nil {
			return err
		}
	}
	return nil
}

// SetFilters sets what each direction holds from now on ("" nothing).
func (h *HoldClient) SetFilters(h2s, s2h string) error {
	return h.send(holdAction{Act: "filter", H2S: &h2s, S2H: &s2h}, nil)
}

// Forward lets held frame n go on as it is.
func (h *HoldClient) Forward(n int64) error { return h.send(holdAction{Act: "forward", N: n}, nil) }

// ForwardAll lets every held frame go on as it is.
func (h *HoldClient) ForwardAll() error { return h.send(holdAction{Act: "forward", All: true}, nil) }

// Drop drops held frame n: its receiver never reads it.
func (h *HoldClient) Drop(n int64) error { return h.send(holdAction{Act: "drop", N: n}, nil) }

// Edit sends body (framing added by the tap) in place of held frame n.
func (h *HoldClient) Edit(n int64, body []byte) error {
	return h.send(holdAction{Act: "edit", N: n}, nonNil(body))
}

// Reply answers held request n in its receiver's place with body: the
// receiver never reads the request, and its sender reads the reply.
func (h *HoldClient) Reply(n int64, body []byte) error {
	return h.send(holdAction{Act: "reply", N: n}, nonNil(body))
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Close ends the connection: when this view set the filters and no other
// view that did is attached, every held frame goes on as it was.
func (h *HoldClient) Close() error { return h.c.Close() }

// goneError says no tap listens at a socket any more; it unwraps to the
// dial's error, so that LiveTaps can tell a dead socket from a slow tap.
type goneError struct {
	socket string
	err    error
}

func (e *goneError) Error() string {
	return fmt.Sprintf("no tap listens at %s any more (it ended?); rpctap ls lists the live taps", e.socket)
}

func (e *goneError) Unwrap() error { return e.err }
