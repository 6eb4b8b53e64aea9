package classify

import "bytes"

// This file holds what the tracker keeps of what the peers said of
// themselves: who each is, the revisions they spoke, the capabilities
// each declared and, for LSP, the server's dynamic registrations, each
// with the frame it came from, for Capabilities. It is taken from the
// handshake's frames, server/discover's answer, the registration
// requests, and under MCP 2026-07-28 from the _meta of each request that
// has one (a comparison with what the previous request carried; a copy
// only when it changed).

// Capabilities is a snapshot of what the session's peers said of
// themselves so far. Each part names the frame it came from by the
// sequence number the tracker was given for it; a part with Seq 0 was
// not said. Its slices are copies: the tracker goes on without them.
type Capabilities struct {
	Profile Profile
	// Client and Server are the host's and the server's identities: MCP's
	// clientInfo and serverInfo (from the handshake, or under 2026-07-28
	// the latest identity a request's or a result's _meta gave), LSP's
	// of the initialize exchange.
	Client, Server Implementation
	// Asked and Answered are the protocol versions of the MCP handshake:
	// the one the initialize request asked for and the one its result
	// gave (AskedSeq, AnsweredSeq: their frames).
	Asked, Answered       string
	AskedSeq, AnsweredSeq int64
	// Offered lists the revisions server/discover's result offered, at
	// OfferedSeq (nil when none answered).
	Offered    []string
	OfferedSeq int64
	// Carried lists the revisions host requests carried in
	// _meta["io.modelcontextprotocol/protocolVersion"], in the order first
	// seen; CarriedOther counts the requests that carried yet another
	// (past maxCarried distinct ones).
	Carried      []CarriedRevision
	CarriedOther int64
	// ServerCaps and ClientCaps are the capabilities each side declared:
	// the server in its initialize or server/discover result, the host
	// in its initialize request.
	ServerCaps, ClientCaps Declared
	// RequestCaps is what the latest host request carried in
	// _meta["io.modelcontextprotocol/clientCapabilities"] (MCP
	// 2026-07-28); CapsChanged is the latest request whose capabilities
	// differ from those of the request before it, 0 while all the
	// requests carried the same.
	RequestCaps Declared
	CapsChanged int64
	// Registrations are the LSP server's dynamic registrations
	// (client/registerCapability) that no client/unregisterCapability
	// took back, in order (at most maxRegistered).
	Registrations []Registration
}

// Mixed reports whether the session mixes MCP eras: a handshake and
// requests that carry their own revision (a client that fell back from
// server/discover to initialize), or requests of several revisions.
func (c *Capabilities) Mixed() bool {
	return len(c.Carried) > 1 || len(c.Carried) > 0 && c.AskedSeq != 0 || c.CarriedOther > 0
}

// An Implementation is a peer's name for itself (MCP's Implementation,
// LSP's clientInfo and serverInfo), from the frame Seq; From says where
// in it ("initialize request", "initialize result", "request _meta",
// "result _meta").
type Implementation struct {
	Name, Version, Title string
	Seq                  int64
	From                 string
}

// Declared is a set of capabilities a peer declared: the JSON object as
// the peer wrote it (raw: escape it before it is shown), from the frame
// Seq; From says which ("initialize result", "server/discover result",
// "initialize request", "request _meta").
type Declared struct {
	JSON []byte
	Seq  int64
	From string
}

// A CarriedRevision is one revision MCP host requests carried in their
// _meta: how many did, the first and the latest.
type CarriedRevision struct {
	Version     string
	Requests    int64
	First, Last int64
}

// A Registration is one LSP dynamic registration: its id and method,
// from the client/registerCapability request Seq.
type Registration struct {
	ID, Method string
	Seq        int64
}

// maxCarried bounds the distinct revisions counted; maxInfo the bytes
// of an identity kept (a larger one is not kept); maxInfoText the bytes
// of each of its strings.
const (
	maxCarried  = 8
	maxInfo     = 4 << 10
	maxInfoText = 256
)

// capsState is what the tracker keeps for Capabilities.
type capsState struct {
	// The identities as the peers wrote them (raw JSON), with their
	// frames and where in them.
	client, server         []byte
	clientSeq, serverSeq   int64
	clientFrom, serverFrom string
	asked, answered        string
	askedSeq, answeredSeq  int64
	offeredSeq             int64
	carried                []carried
	carriedOther           int64
	serverCapsSeq          int64
	clientCapsSeq          int64
	// reqCaps is the latest request's clientCapabilities, at reqCapsSeq;
	// capsChanged the latest request that carried others than the one
	// before it.
	reqCaps     []byte
	reqCapsSeq  int64
	capsChanged int64
	lspCapsSeq  int64
	// lspClientCaps are the LSP client's capabilities of its initialize
	// request (the server's are lspState.caps).
	lspClientCaps    []byte
	lspClientCapsSeq int64
	registrations    []Registration
}

// carried is one revision requests carried, as on the wire (raw JSON).
type carried struct {
	raw         []byte
	n           int64
	first, last int64
}

// clientInfo keeps the host's identity (raw JSON) from frame seq, when it
// is not the one kept already.
func (t *Tracker) clientInfo(seq int64, info []byte, from string) {
	if info == nil || len(info) > maxInfo || bytes.Equal(info, t.caps.client) {
		return
	}
	t.caps.client = append(t.caps.client[:0], info...)
	t.caps.clientSeq, t.caps.clientFrom = seq, from
}

// serverIdentity keeps the server's identity (raw JSON) from frame seq.
func (t *Tracker) serverIdentity(seq int64, info []byte, from string) {
	if info == nil || len(info) > maxInfo || bytes.Equal(info, t.caps.server) {
		return
	}
	t.caps.server = append(t.caps.server[:0], info...)
	t.caps.serverSeq, t.caps.serverFrom = seq, from
}

// requestCarried takes what the _meta of host request seq says of the
// host: its revision, capabilities and identity. Nothing is copied
// unless it changed since the previous request.
func (t *Tracker) requestCarried(seq int64, md *reqMeta) {
	if md.version != nil {
		t.carriedRevision(seq, md.version)
	}
	if md.caps != nil && len(md.caps) <= maxCaps {
		if t.caps.reqCapsSeq != 0 && !bytes.Equal(md.caps, t.caps.reqCaps) {
			t.caps.capsChanged = seq
		}
		if t.caps.reqCapsSeq == 0 || t.caps.capsChanged == seq {
			t.caps.reqCaps = append(t.caps.reqCaps[:0], md.caps...)
		}
		t.caps.reqCapsSeq = seq
	}
	if md.info != nil {
		t.clientInfo(seq, md.info, "request _meta")
	}
}

func (t *Tracker) carriedRevision(seq int64, v []byte) {
	for i := range t.caps.carried {
		if c := &t.caps.carried[i]; bytes.Equal(c.raw, v) {
			c.n++
			c.last = seq
			return
		}
	}
	if len(t.caps.carried) == maxCarried || len(v) > maxInfoText {
		t.caps.carriedOther++
		return
	}
	t.caps.carried = append(t.caps.carried, carried{raw: append([]byte(nil), v...), n: 1, first: seq, last: seq})
}

// versionText is a protocol version for Capabilities: the string's text,
// else the raw JSON, at most maxInfoText bytes.
func versionText(raw []byte) string {
	if s, ok := StringValue(raw); ok {
		return cutText(s)
	}
	return cutText(string(raw))
}

func cutText(s string) string {
	if len(s) <= maxInfoText {
		return s
	}
	n := maxInfoText
	for n > 0 && !runeStart(s[n]) {
		n--
	}
	return s[:n]
}

func runeStart(c byte) bool { return c&0xc0 != 0x80 }

// lspRegistered takes a client/registerCapability request's
// registrations, and lspUnregistered a client/unregisterCapability's.
func (t *Tracker) lspRegistered(seq int64, m *Message) {
	eachElement(Member(m.Params(), "registrations"), func(r []byte) bool {
		method, ok := StringValue(Member(r, "method"))
		if !ok || len(t.caps.registrations) >= maxRegistered {
			return true
		}
		id, _ := StringValue(Member(r, "id"))
		t.caps.registrations = append(t.caps.registrations, Registration{ID: cutText(id), Method: cutText(method), Seq: seq})
		return true
	})
}

func (t *Tracker) lspUnregistered(m *Message) {
	// LSP 3.17 spells the member "unregisterations" (a typo kept for
	// compatibility); "unregistrations" is read too.
	list := Member(m.Params(), "unregisterations")
	if list == nil {
		list = Member(m.Params(), "unregistrations")
	}
	eachElement(list, func(u []byte) bool {
		id, _ := StringValue(Member(u, "id"))
		method, _ := StringValue(Member(u, "method"))
		for i, r := range t.caps.registrations {
			if r.ID == cutText(id) && r.Method == cutText(method) {
				t.caps.registrations = append(t.caps.registrations[:i], t.caps.registrations[i+1:]...)
				break
			}
		}
		return true
	})
}

// Capabilities is a snapshot of what the session's peers said of
// themselves so far (see the type).
func (t *Tracker) Capabilities() Capabilities {
	if s := t.shown(); s != t {
		return s.Capabilities()
	}
	c := Capabilities{
		Profile:     t.Profile(),
		Client:      implementation(t.caps.client, t.caps.clientSeq, t.caps.clientFrom),
		Server:      implementation(t.caps.server, t.caps.serverSeq, t.caps.serverFrom),
		Asked:       t.caps.asked,
		AskedSeq:    t.caps.askedSeq,
		Answered:    t.caps.answered,
		AnsweredSeq: t.caps.answeredSeq,
		OfferedSeq:  t.caps.offeredSeq,
	}
	if t.mcp.supportedSeen {
		c.Offered = append([]string{}, t.mcp.supported...)
	}
	for _, r := range t.caps.carried {
		c.Carried = append(c.Carried, CarriedRevision{Version: versionText(r.raw), Requests: r.n, First: r.first, Last: r.last})
	}
	c.CarriedOther = t.caps.carriedOther
	if t.Profile() == LSP {
		if t.lsp.capsSeen {
			c.ServerCaps = Declared{JSON: bytes.Clone(t.lsp.caps), Seq: t.caps.lspCapsSeq, From: "initialize result"}
		}
		if t.caps.lspClientCapsSeq != 0 {
			c.ClientCaps = Declared{JSON: bytes.Clone(t.caps.lspClientCaps), Seq: t.caps.lspClientCapsSeq, From: "initialize request"}
		}
		c.Registrations = append([]Registration(nil), t.caps.registrations...)
		return c
	}
	if t.mcp.serverCapsSeen {
		from := "initialize result"
		if t.mcp.serverCapsFrom == "its server/discover result" {
			from = "server/discover result"
		}
		c.ServerCaps = Declared{JSON: bytes.Clone(t.mcp.serverCaps), Seq: t.caps.serverCapsSeq, From: from}
	}
	if t.mcp.clientCapsSeen {
		c.ClientCaps = Declared{JSON: bytes.Clone(t.mcp.clientCaps), Seq: t.caps.clientCapsSeq, From: "initialize request"}
	}
	if t.caps.reqCapsSeq != 0 {
		c.RequestCaps = Declared{JSON: bytes.Clone(t.caps.reqCaps), Seq: t.caps.reqCapsSeq, From: "request _meta"}
		c.CapsChanged = t.caps.capsChanged
	}
	return c
}

// implementation reads an Implementation's name, version and title.
func implementation(info []byte, seq int64, from string) Implementation {
	if seq == 0 {
		return Implementation{}
	}
	text := func(key string) string {
		raw := Member(info, key)
		if raw == nil {
			return ""
		}
		return versionText(raw)
	}
	return Implementation{Name: text("name"), Version: text("version"), Title: text("title"), Seq: seq, From: from}
}
