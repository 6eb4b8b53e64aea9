package classify

import "fmt"

// Direction says which way a frame travelled through the tap.
type Direction uint8

const (
	// H2S is host to server: what the server reads on stdin.
	H2S Direction = iota + 1
	// S2H is server to host: what the server writes on stdout.
	S2H
	// Err is the server's stderr; it is never classified as JSON-RPC.
	Err
)

func (d Direction) String() string {
	switch d {
	case H2S:
		return "h2s"
	case S2H:
		return "s2h"
	case Err:
		return "err"
	}
	return "unknown"
}

// Toward is where frames of d go, in words: "toward the server",
// "toward the host", "of the server's stderr".
func (d Direction) Toward() string {
	switch d {
	case S2H:
		return "toward the host"
	case Err:
		return "of the server's stderr"
	}
	return "toward the server"
}

// Opposite is the direction a response to a frame travelling d comes back on.
func (d Direction) Opposite() Direction {
	switch d {
	case H2S:
		return S2H
	case S2H:
		return H2S
	}
	return d
}

// ParseDirection reads "h2s", "s2h" or "err".
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "h2s":
		return H2S, nil
	case "s2h":
		return S2H, nil
	case "err":
		return Err, nil
	}
	return 0, fmt.Errorf("unknown direction %q: use h2s (host to server), s2h (server to host) or err", s)
}

// Profile selects which protocol's rules judge a frame.
type Profile uint8

const (
	// Auto lets a Tracker pick the profile from the traffic; Classify
	// treats it as JSONRPC.
	Auto Profile = iota
	// JSONRPC is plain JSON-RPC 2.0.
	JSONRPC
	// MCP is the Model Context Protocol on top of JSON-RPC 2.0.
	MCP
	// LSP is the Language Server Protocol on top of JSON-RPC 2.0.
	LSP
)

func (p Profile) String() string {
	switch p {
	case Auto:
		return "auto"
	case JSONRPC:
		return "jsonrpc"
	case MCP:
		return "mcp"
	case LSP:
		return "lsp"
	}
	return "unknown"
}

// ParseProfile reads "auto", "jsonrpc", "mcp" or "lsp".
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "auto", "":
		return Auto, nil
	case "jsonrpc":
		return JSONRPC, nil
	case "mcp":
		return MCP, nil
	case "lsp":
		return LSP, nil
	}
	return 0, fmt.Errorf("unknown profile %q: use auto, jsonrpc, mcp or lsp", s)
}

// Kind is what a frame is, decided by the rules of the envelope note in
// their order.
type Kind uint8

const (
	KindBlank        Kind = iota + 1 // nothing but whitespace
	KindNotJSON                      // not one valid JSON value
	KindBatch                        // a JSON array
	KindNonObject                    // a JSON scalar
	KindResponse                     // an answer to a request
	KindStray                        // an object with neither method nor id
	KindInvalid                      // a request or notification that breaks the envelope rules
	KindRequest                      // a method call that wants an answer
	KindNotification                 // a method call that wants none
	KindHTTP                         // no JSON-RPC message: what an HTTP transport did (a 202, an error status, an empty body)
)

var kindNames = [...]string{
	KindBlank:        "blank",
	KindNotJSON:      "not-json",
	KindBatch:        "batch",
	KindNonObject:    "non-object",
	KindResponse:     "response",
	KindStray:        "stray",
	KindInvalid:      "invalid",
	KindRequest:      "request",
	KindNotification: "notification",
	KindHTTP:         "http",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Phrase names the kind in a sentence, with its article: "a request",
// "an invalid frame", "a frame that is not JSON".
func (k Kind) Phrase() string {
	switch k {
	case KindBlank:
		return "a blank line"
	case KindNotJSON:
		return "a frame that is not JSON"
	case KindBatch:
		return "a batch"
	case KindNonObject:
		return "a JSON value that is not an object"
	case KindResponse:
		return "a response"
	case KindStray:
		return "an object with neither a method nor an id"
	case KindInvalid:
		return "an invalid request"
	case KindRequest:
		return "a request"
	case KindNotification:
		return "a notification"
	case KindHTTP:
		return "an HTTP exchange with no JSON-RPC message"
	}
	return "a frame of unknown kind"
}

// ParseKind reads a kind's name as String writes it.
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name != "" && name == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Severity orders findings: Info < Warn < Error.
type Severity uint8

const (
	Info Severity = iota + 1
	Warn
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warn:
		return "warn"
	case Error:
		return "error"
	}
	return "none"
}

// ParseSeverity reads "info", "warn" or "error".
func ParseSeverity(s string) (Severity, bool) {
	switch s {
	case "info":
		return Info, true
	case "warn", "warning":
		return Warn, true
	case "error":
		return Error, true
	}
	return 0, false
}

// A Finding is one thing wrong with (or worth knowing about) a frame.
type Finding struct {
	Code     Code
	Severity Severity
	// Message is a sentence saying what was wrong and, where it matters,
	// what a strict receiver does about it. It never repeats a peer's
	// value unescaped.
	Message string
}
