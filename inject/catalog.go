package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// An Entry is one edge case of the catalog: a frame (or a few) that tests
// how a peer reads the JSON-RPC envelope, the direction it makes sense in,
// and what a strict receiver must do with it, in one line taken from the
// envelope rules.
type Entry struct {
	Name string
	// Dir is where the frame makes sense: H2S (to the server, as if from
	// the host), S2H (to the host, as if from the server), or Either.
	// Any entry may be sent either way.
	Dir classify.Direction
	// Rule says what a strict receiver must do with the frame.
	Rule string
	// Codes are the findings rpctap raises on the frame (and, for
	// entries about a request in flight, on the session), read under the
	// MCP profile by a receiver in Dir (the server, for Either).
	Codes []classify.Code
	// Revision is the MCP revision whose rule the entry tests ("" for
	// the envelope's rules, which hold in every revision). Its frames
	// take the session's revision (Params.Meta); Codes are what they
	// raise in a session of that revision, OlderCodes what they raise in
	// a session of an older one, and Rule says what they do there.
	Revision   string
	OlderCodes []classify.Code
	// NeedsID says the frame names a request in flight: Params.ID.
	NeedsID bool
	// NeedsTools says the frame calls a tool the session listed:
	// Params.Tools.
	NeedsTools bool
	// Sized says Params.Size sets the frame's size in bytes.
	Sized bool

	build func(p Params) ([][]byte, error)
}

// FromSession says the entry's frames are built from what the session
// showed (its revision's _meta, its tools): Params.Meta and
// Params.Tools, as Seen.CatalogParams gives them.
func (e Entry) FromSession() bool { return e.Revision != "" || e.NeedsTools }

// Params fill the entries that need them.
type Params struct {
	// ID is the JSON text of the id of a request in flight (for
	// cancellation, progress and id-reused), as in `"rpctap-3"` or `7`.
	ID string
	// Size is the large frame's size in bytes (DefaultSize when 0).
	Size int
	// Meta is the _meta the host's requests carry in a session of a
	// revision with no handshake (2026-07-28: the protocol version and
	// the client's capabilities), nil in a session of an older revision
	// or one that showed no request yet.
	Meta []byte
	// Tools are the tools the session's last tools/list listed; Tool,
	// when set, names the one an entry calls.
	Tools []Tool
	Tool  string
}

// DefaultSize is the large frame's size when Params.Size is 0.
const DefaultSize = 1 << 20

// MaxSize is the largest frame the large-frame entry builds: the most a
// tap takes in one injection.
const MaxSize = 64 << 20

// Frames builds the entry's frames (bodies, without framing). Most
// entries are one frame.
func (e Entry) Frames(p Params) ([][]byte, error) {
	if e.NeedsID {
		if p.ID == "" {
			return nil, fmt.Errorf("the catalog entry %s names a request in flight: give its id, as in --id 3 or --id '\"abc\"' (the traffic view shows the ids in flight)", e.Name)
		}
		id := classify.RawID([]byte(p.ID))
		if !id.IsString() && !id.IsNumber() || !classify.Valid([]byte(p.ID)) {
			return nil, fmt.Errorf("the id of a request in flight is a JSON string or number, as in 3 or '\"abc\"', not %s", classify.EscapeString(p.ID, 40))
		}
	}
	if e.Sized {
		if p.Size == 0 {
			p.Size = DefaultSize
		}
		if p.Size < minLarge || p.Size > MaxSize {
			return nil, fmt.Errorf("the large frame's size is from %d bytes to %d MiB; give it with --size, as in --size 1048576", minLarge, MaxSize>>20)
		}
	}
	return e.build(p)
}

// Catalog lists the entries, in a stable order.
func Catalog() []Entry { return catalog }

// Lookup finds an entry by name.
func Lookup(name string) (Entry, bool) {
	for _, e := range catalog {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// ErrUnknownEntry is wrapped by LookupErr for a name the catalog lacks.
var ErrUnknownEntry = errors.New("no such catalog entry")

// LookupErr is Lookup with a sentence that says what to type.
func LookupErr(name string) (Entry, error) {
	if e, ok := Lookup(name); ok {
		return e, nil
	}
	return Entry{}, fmt.Errorf("%w: %s; rpctap catalog lists them (as in --catalog null-id-request)", ErrUnknownEntry, classify.EscapeString(name, 60))
}

// one makes a build func of a fixed frame.
func one(frame string) func(Params) ([][]byte, error) {
	return func(Params) ([][]byte, error) { return [][]byte{[]byte(frame)}, nil }
}

// withID makes a build func of a frame that names the id in flight: %s.
func withID(format string) func(Params) ([][]byte, error) {
	return func(p Params) ([][]byte, error) { return [][]byte{[]byte(fmt.Sprintf(format, p.ID))}, nil }
}

// largeHead and largeTail surround the large frame's padding.
const (
	largeHead = `{"jsonrpc":"2.0","id":"rpctap-large","method":"ping","params":{"_meta":{"rpctap/padding":"`
	largeTail = `"}}}`
	minLarge  = len(largeHead) + len(largeTail)
)

func large(p Params) ([][]byte, error) {
	b := make([]byte, 0, p.Size)
	b = append(b, largeHead...)
	b = append(b, strings.Repeat("x", p.Size-minLarge)...)
	return [][]byte{append(b, largeTail...)}, nil
}

// Rules common to several entries.
const (
	ruleRefuse       = "A strict server answers -32600 Invalid Request"
	ruleHostIgnores  = "a host ignores it (a server's stdout may carry other output)"
	ruleNeverAnswer  = "A response is never answered"
	ruleNotification = "A notification is never answered"
)

// catalog is every entry: the envelope's, then those above it.
var catalog = slices.Concat(envelopeEntries, revisionEntries)

// envelopeEntries test the JSON-RPC envelope, the same in every MCP
// revision.
var envelopeEntries = []Entry{
	{Name: "null-id-request", Dir: Either, build: one(`{"jsonrpc":"2.0","id":null,"method":"ping"}`),
		Rule:  `A request id must not be null in MCP, and JSON-RPC discourages it: an answer with "id": null also means "I could not read your message", so the receiver should refuse it (MCP) or answer with "id": null.`,
		Codes: []classify.Code{classify.CodeNullID}},
	{Name: "object-id", Dir: Either, build: one(`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`),
		Rule:  ruleRefuse + `, with "id": null (JSON-RPC) or no id (MCP): an id is a string, a number or null.`,
		Codes: []classify.Code{classify.CodeBadID}},
	{Name: "array-id", Dir: Either, build: one(`{"jsonrpc":"2.0","id":[1],"method":"ping"}`),
		Rule:  ruleRefuse + `, with "id": null (JSON-RPC) or no id (MCP): an id is a string, a number or null.`,
		Codes: []classify.Code{classify.CodeBadID}},
	{Name: "boolean-id", Dir: Either, build: one(`{"jsonrpc":"2.0","id":true,"method":"ping"}`),
		Rule:  ruleRefuse + `, with "id": null (JSON-RPC) or no id (MCP): an id is a string, a number or null.`,
		Codes: []classify.Code{classify.CodeBadID}},
	{Name: "number-method", Dir: Either, build: one(`{"jsonrpc":"2.0","id":"rpctap-method","method":42}`),
		Rule:  ruleRefuse + ` with the frame's id: the method must be a string.`,
		Codes: []classify.Code{classify.CodeBadMethod}},
	{Name: "jsonrpc-spec-invalid", Dir: classify.H2S, build: one(`{"jsonrpc": "2.0", "method": 1, "params": "bar"}`),
		Rule:  `JSON-RPC's own example: the receiver answers -32600 Invalid Request with a null id (no id in MCP), though it has no id.`,
		Codes: []classify.Code{classify.CodeBadMethod, classify.CodeBadParams}},
	{Name: "batch", Dir: classify.H2S, build: one(`[{"jsonrpc":"2.0","id":"rpctap-batch","method":"ping"},{"jsonrpc":"2.0","method":"notifications/rpctap"}]`),
		Rule:  `JSON-RPC answers a batch with an array of its requests' answers; MCP removed batching in 2025-06-18, so a strict MCP peer of that revision or later refuses it.`,
		Codes: []classify.Code{classify.CodeBatch}},
	{Name: "empty-batch", Dir: Either, build: one(`[]`),
		Rule:  `The receiver answers one -32600 Invalid Request error, with "id": null (no id in MCP).`,
		Codes: []classify.Code{classify.CodeEmptyBatch}},
	{Name: "scalar-null", Dir: classify.H2S, build: one(`null`),
		Rule: ruleRefuse + ` (a message is a JSON object); ` + ruleHostIgnores + `.`, Codes: []classify.Code{classify.CodeNonObject}},
	{Name: "scalar-number", Dir: classify.H2S, build: one(`42`),
		Rule: ruleRefuse + ` (a message is a JSON object); ` + ruleHostIgnores + `.`, Codes: []classify.Code{classify.CodeNonObject}},
	{Name: "scalar-string", Dir: classify.H2S, build: one(`"hi"`),
		Rule: ruleRefuse + ` (a message is a JSON object); ` + ruleHostIgnores + `.`, Codes: []classify.Code{classify.CodeNonObject}},
	{Name: "scalar-true", Dir: classify.H2S, build: one(`true`),
		Rule: ruleRefuse + ` (a message is a JSON object); ` + ruleHostIgnores + `.`, Codes: []classify.Code{classify.CodeNonObject}},
	{Name: "not-json", Dir: Either, build: one(`rpctap: this line is not JSON`),
		Rule:  `A strict server answers -32700 Parse error; ` + ruleHostIgnores + ` (MCP allows only MCP messages on stdout: logs belong on stderr).`,
		Codes: []classify.Code{classify.CodeNotJSON}},
	{Name: "error-null-id", Dir: classify.S2H, build: one(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`),
		Rule:  ruleNeverAnswer + `; an error that names no request has "id": null in JSON-RPC, while MCP leaves the id out, and spec-strict MCP clients throw on a null id.`,
		Codes: []classify.Code{classify.CodeNullIDError, classify.CodeErrorNamesNoRequest}},
	{Name: "error-no-id", Dir: classify.S2H, build: one(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}`),
		Rule:  ruleNeverAnswer + `; an error that names no request has no id in MCP, while JSON-RPC wants "id": null.`,
		Codes: []classify.Code{classify.CodeErrorNamesNoRequest}},
	{Name: "result-null-id", Dir: classify.S2H, build: one(`{"jsonrpc":"2.0","id":null,"result":{}}`),
		Rule:  ruleNeverAnswer + `; a result with a null id pairs with no request, and the receiver drops it.`,
		Codes: []classify.Code{classify.CodeResultWithoutID}},
	{Name: "result-and-error", Dir: classify.S2H, build: one(`{"jsonrpc":"2.0","id":"rpctap-both","result":{},"error":{"code":-32603,"message":"both"}}`),
		Rule:  ruleNeverAnswer + `; a response has exactly one of result and error, and the receiver cannot tell which one holds.`,
		Codes: []classify.Code{classify.CodeResultAndError}},
	{Name: "stdout-log-null-id", Dir: classify.S2H, build: one(`{"level":"info","msg":"rpctap: a log line on stdout","id":null}`),
		Rule:  `An object with an id and no method reads as a response (so two peers never trade errors forever): the receiver answers nothing; logs belong on stderr.`,
		Codes: []classify.Code{classify.CodeNoResultOrError}},
	{Name: "empty-object", Dir: Either, build: one(`{}`),
		Rule:  `A strict server answers -32600 "a message needs a method or an id"; on a server's stdout it is a stray line a host ignores.`,
		Codes: []classify.Code{classify.CodeStrayObject}},
	{Name: "initialized-request", Dir: classify.H2S, build: one(`{"jsonrpc":"2.0","id":"rpctap-initialized","method":"initialized"}`),
		Rule:  `initialized names a notification, sent here with an id: the receiver may never answer it (LSP's initialized, and MCP's notifications/initialized, have no id).`,
		Codes: []classify.Code{classify.CodeNotificationAsRequest}},
	{Name: "notification-with-id", Dir: Either, build: one(`{"jsonrpc":"2.0","id":"rpctap-notification","method":"notifications/roots/list_changed"}`),
		Rule:  `A method that names a notification, sent with an id: the receiver may never answer it.`,
		Codes: []classify.Code{classify.CodeNotificationAsRequest}},
	{Name: "request-without-id", Dir: Either, build: one(`{"jsonrpc":"2.0","method":"ping"}`),
		Rule:  ruleNotification + `: a request method sent without an id gets no answer, ever.`,
		Codes: []classify.Code{classify.CodeRequestAsNotification}},
	{Name: "unknown-method", Dir: Either, build: one(`{"jsonrpc":"2.0","id":"rpctap-unknown","method":"rpctap/no-such-method"}`),
		Rule: `The receiver answers -32601 Method not found with the request's id (whether a method exists is the peer's business, not the envelope's).`},
	{Name: "string-and-number-id", Dir: Either,
		build: func(Params) ([][]byte, error) {
			return [][]byte{[]byte(`{"jsonrpc":"2.0","id":"1","method":"ping"}`), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}, nil
		},
		Rule: `"1" and 1 are different ids: the receiver answers each, with the id of the same type and value.`},
	{Name: "unsafe-integer-id", Dir: Either, build: one(`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`),
		Rule:  `The answer carries the id exactly, 9007199254740993; a peer that reads ids as doubles answers 9007199254740992, which pairs with nothing.`,
		Codes: []classify.Code{classify.CodeUnsafeIntID}},
	{Name: "fractional-id", Dir: Either, build: one(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`),
		Rule:  `JSON-RPC says number ids should be integers; the receiver answers with the id as sent, 1.5.`,
		Codes: []classify.Code{classify.CodeFractionalID}},
	{Name: "duplicate-member", Dir: Either, build: one(`{"jsonrpc":"2.0","id":"rpctap-dup","method":"ping","method":"rpctap/no-such-method"}`),
		Rule:  `Parsers disagree on which copy wins, so the receiver may act on a different method than a view shows; a strict one refuses the frame.`,
		Codes: []classify.Code{classify.CodeDuplicateMember}},
	{Name: "error-message-not-string", Dir: classify.S2H, build: one(`{"jsonrpc":"2.0","id":"rpctap-errmsg","error":{"code":-32603,"message":42}}`),
		Rule:  ruleNeverAnswer + `; an error object needs an integer code and a string message, and a receiver that reads message as text may fail.`,
		Codes: []classify.Code{classify.CodeBadErrorObject}},
	{Name: "leaky-error", Dir: classify.S2H, build: one(`{"jsonrpc":"2.0","id":"rpctap-leak","error":{"code":-32603,"message":"TypeError: cannot read properties of undefined\n    at Object.<anonymous> (/home/app/server.js:10:5)\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)"}}`),
		Rule:  ruleNeverAnswer + `; an error's text should not show stack frames or file paths: handler text can name a host's internals to a third-party peer.`,
		Codes: []classify.Code{classify.CodeLeakyError}},
	{Name: "unsafe-text", Dir: Either, build: one(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"rpctap \u001b[31mred\u001b[0m \u0007 \u202egnp.exe \u2028 end"}}`),
		Rule:  ruleNotification + `; a receiver that shows its text escapes the control, bidi and format characters instead of passing them to a terminal.`,
		Codes: []classify.Code{classify.CodeUnsafeText}},
	{Name: "large-frame", Dir: Either, Sized: true, build: large,
		Rule: `A ping of the size chosen: the receiver reads a frame of any size whole (no line limit) and answers it, or refuses it with an error; it never hangs or splits it.`},
	{Name: "cancel-in-flight", Dir: Either, NeedsID: true,
		build: withID(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"rpctap: cancelled by the user"}}`),
		Rule:  ruleNotification + `; MCP: the receiver should stop the request it names, and may still answer it (a response after the cancellation is allowed).`,
		Codes: []classify.Code{classify.CodeCancelled}},
	{Name: "progress-in-flight", Dir: classify.S2H, NeedsID: true,
		build: withID(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":2,"message":"rpctap"}}`),
		Rule:  ruleNotification + `; MCP: progress names a token from a request still in flight, it restarts that request's timeout, and a token the receiver does not know is ignored.`},
	{Name: "id-reused", Dir: Either, NeedsID: true, build: withID(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`),
		Rule:  `An id must be unique among its sender's requests in flight: with two, the receiver's answers cannot be told apart, and the tracker flags the second.`,
		Codes: []classify.Code{classify.CodeIDReused}},
}

// Listing is an entry as rpctap catalog prints it.
type Listing struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
	Rule string `json:"rule"`
	// Codes are the findings the frame raises; for an entry of a
	// revision's rule, in a session of that revision, and OlderCodes in
	// a session of an older one.
	Codes      []string `json:"codes"`
	Revision   string   `json:"revision,omitempty"`
	OlderCodes []string `json:"older_codes,omitzero"`
	Needs      string   `json:"needs,omitempty"`
	Frame      string   `json:"frame"`
	// OlderFrame is the frame in a session of an older revision, when
	// it is not Frame.
	OlderFrame string `json:"older_frame,omitempty"`
}

// listTool stands in, in the listing, for the tool an entry calls.
var listTool = Tool{Name: "TOOL", Schema: json.RawMessage(`{"type":"object","properties":{"ARG":{"type":"string"}},"required":["ARG"]}`)}

// List describes every entry, with its frames as built from zero Params
// (an entry that needs an id shows "ID" in its place; the large frame is
// shown at its smallest size; an entry that calls a tool calls TOOL, of
// one required string argument ARG; an entry of a revision's rule is
// shown in a session of that revision, whose host declares no
// capability, and in one of an older revision).
func List() []Listing {
	var out []Listing
	for _, e := range catalog {
		l := Listing{Name: e.Name, Dir: DirName(e.Dir), Rule: e.Rule, Codes: codeNames(e.Codes), Revision: e.Revision}
		p := Params{}
		switch {
		case e.NeedsID:
			l.Needs = "--id of a request in flight"
			p.ID = "ID"
		case e.Sized:
			l.Needs = "--size in bytes (default " + strconv.Itoa(DefaultSize) + ")"
			p.Size = minLarge + 3
		case e.NeedsTools:
			l.Needs = "a tool the session listed (--tool names one)"
			p.Tools = []Tool{listTool}
		}
		older := listFrame(e, p)
		if e.Revision != "" {
			l.OlderCodes = codeNames(e.OlderCodes)
			p.Meta = []byte(meta20260728)
		}
		l.Frame = listFrame(e, p)
		if older != l.Frame {
			l.OlderFrame = older
		}
		out = append(out, l)
	}
	return out
}

// listFrame is an entry's frames, one a line.
func listFrame(e Entry, p Params) string {
	frames, _ := e.build(p)
	var lines []string
	for _, f := range frames {
		lines = append(lines, string(f))
	}
	return strings.Join(lines, "\n")
}

func codeNames(codes []classify.Code) []string {
	names := []string{}
	for _, c := range codes {
		names = append(names, c.String())
	}
	return names
}

// DirName says a direction as the catalog does: h2s, s2h or either.
func DirName(d classify.Direction) string {
	if d == Either {
		return "either"
	}
	return d.String()
}
