package classify

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

var (
	isErrorKey        = []byte(`"isError"`)
	requestStateKey   = []byte(`"requestState"`)
	inputResponsesKey = []byte(`"inputResponses"`)
)

// This file holds the MCP rules above the envelope (the project's
// mcp-revisions design note): which revision governs each frame, and
// what that revision, the capabilities both sides declared and the
// session's tools say of it.

// mcpState is what the tracker keeps of an MCP session.
type mcpState struct {
	// hsSeen says the session uses the initialize handshake; hsRev is
	// its revision (the one asked for until the server answers, then the
	// one it answered), revUnknown when it is none the tracker knows.
	hsSeen bool
	hsRev  revision
	// metaSeen says a host request carried its revision in _meta;
	// metaRev is the latest such revision: it governs what is tied to no
	// request when the session has no handshake.
	metaSeen bool
	metaRev  revision
	// supported lists the revisions server/discover offered (nil until
	// it answered).
	supported     []string
	supportedSeen bool
	// The capabilities each side declared: the server in its initialize
	// or server/discover result, the host in its initialize request.
	serverCaps, clientCaps []byte
	serverCapsFrom         string
	serverCapsSeen         bool
	clientCapsSeen         bool
	// tools holds the names of the latest complete tools/list; toolsNext
	// gathers the pages of one under way. toolsStale: the server said the
	// list changed after it.
	tools, toolsNext map[string]struct{}
	toolsSeen        bool
	toolsStale       bool
	// schemas holds the tools' schemas of the latest complete list, and
	// schemasNext those of the pages of one under way (see Tools).
	schemas, schemasNext *Tools
	// server is the name the server gives in its serverInfo (the
	// initialize result's, or under 2026-07-28 a result's _meta), and
	// baseline what the user accepted for it (TrackerOptions.Baseline),
	// or nil; baselineSaid holds the changes against it already reported,
	// so that a list listed again says each once.
	server       string
	serverLooks  int // 2026-07-28 results searched for the server's name
	baseline     *Baseline
	baselineSaid map[string]struct{}
	// defs are the latest complete prompts/list and
	// resources/templates/list (the tools' are in schemas), and defsNext
	// the pages of one under way.
	defs, defsNext [definitionKinds]Definitions
	// awaiting holds the input_required results whose retry has not come
	// yet, oldest first (at most maxAwaiting); retryOf and retrySent name
	// the first request of the call the request being observed retries,
	// for its flight; inputRequired says the answer being observed asked
	// for input, for its pair.
	awaiting      []awaitingRetry
	retryOf       int64
	retrySent     time.Duration
	retryRound    int32
	inputRequired bool
	// logLevels counts the host's requests in flight that set
	// io.modelcontextprotocol/logLevel.
	logLevels int
	// cancelledTokens remembers the progress tokens of the latest
	// cancelled requests: progress already on its way is no fault.
	cancelledTokens [16]string
	cancelledNext   int
}

// maxServerLooks bounds the 2026-07-28 results searched for the
// server's name (see mcpAnswer).
const maxServerLooks = 16

// maxTools bounds the tool names remembered; past it the list is not
// judged. maxCaps bounds the capabilities kept of each side; larger ones
// are not kept, and judge nothing.
const (
	maxTools = 10_000
	maxCaps  = 64 << 10
)

// flight flags of the MCP rules.
const (
	flLogLevel    uint8 = 1 << iota // the request set io.modelcontextprotocol/logLevel
	flUnsupported                   // its revision is not one server/discover offered
	flCursor                        // a tools/list, prompts/list or resources/templates/list request for a later page
	flCapsKnown                     // the request carried clientCapabilities
	flRoots                         // … with roots
	flSampling                      // … with sampling
	flElicitation                   // … with elicitation
)

// reqMeta is what a request's params._meta says, read in one pass.
type reqMeta struct {
	token, version, caps, level, info []byte
}

func requestMeta(meta []byte) (md reqMeta) {
	eachMember(meta, func(key []byte, esc bool, val []byte) bool {
		switch {
		case keyIs(key, esc, "progressToken"):
			md.token = val
		case keyIs(key, esc, "io.modelcontextprotocol/protocolVersion"):
			md.version = val
		case keyIs(key, esc, "io.modelcontextprotocol/clientCapabilities"):
			md.caps = val
		case keyIs(key, esc, "io.modelcontextprotocol/logLevel"):
			md.level = val
		case keyIs(key, esc, "io.modelcontextprotocol/clientInfo"):
			md.info = val
		}
		return true
	})
	return md
}

// era is the revision that governs a frame tied to no request: the
// handshake's, else that of the latest request that named its own.
func (t *Tracker) era() revision {
	if t.mcp.hsSeen {
		return t.mcp.hsRev
	}
	if t.mcp.metaSeen {
		return t.mcp.metaRev
	}
	return revUnknown
}

// revisionText names a revision in a message: the date when it is one,
// else "a revision".
func revisionText(v []byte) string {
	if s, ok := StringValue(v); ok && isRevision(s) {
		return "revision " + s
	}
	return "a revision"
}

// mcpRequest applies the MCP rules to a request and returns the flight
// flags it needs, and the revision that governs it and its answer.
func (t *Tracker) mcpRequest(seq int64, m *Message, md *reqMeta) (revision, uint8) {
	var flags uint8
	rev := t.era()
	if m.Dir == H2S {
		switch {
		case md.version != nil:
			rev = parseRevision(md.version)
			t.mcp.metaSeen, t.mcp.metaRev = true, rev
			if t.mcp.supportedSeen && !t.offered(md.version) && !m.MethodIs("server/discover") {
				// (server/discover is the probe: its result is the
				// answer to any revision)
				flags |= flUnsupported
			}
		case m.MethodIs("initialize"):
			rev = parseRevision(Member(m.Params(), "protocolVersion"))
			if !t.mcp.hsSeen {
				t.mcp.hsSeen, t.mcp.hsRev = true, rev
				if caps := Member(m.Params(), "capabilities"); caps != nil && len(caps) <= maxCaps {
					t.mcp.clientCaps = append(t.mcp.clientCaps[:0], caps...)
					t.mcp.clientCapsSeen, t.caps.clientCapsSeq = true, seq
				}
				t.caps.asked, t.caps.askedSeq = versionText(Member(m.Params(), "protocolVersion")), seq
				t.clientInfo(seq, Member(m.Params(), "clientInfo"), "initialize request")
			}
		case m.MethodIs("server/discover"):
			rev = rev20260728 // the method exists in no other revision
		}
		if md.version != nil || md.caps != nil || md.info != nil {
			t.requestCarried(seq, md)
		}
		if md.level != nil {
			flags |= flLogLevel
		}
		if md.caps != nil {
			flags |= flCapsKnown
			if present(Member(md.caps, "roots")) {
				flags |= flRoots
			}
			if present(Member(md.caps, "sampling")) {
				flags |= flSampling
			}
			if present(Member(md.caps, "elicitation")) {
				flags |= flElicitation
			}
		}
		if (m.MethodIs("tools/list") || m.MethodIs("prompts/list") || m.MethodIs("resources/templates/list")) && Member(m.Params(), "cursor") != nil {
			flags |= flCursor
		}
		if rev == rev20260728 && (md.version == nil || md.caps == nil) {
			t.emit(seq, CodeMissingMeta, Error, missingMetaText(md), 0)
		}
		if rev == rev20260728 && md.level != nil {
			t.emit(seq, CodeDeprecatedFeature, Info, "The request sets io.modelcontextprotocol/logLevel: logging is deprecated in revision 2026-07-28 of MCP (SEP-2577); log to stderr or use OpenTelemetry instead.", 0)
		}
		if m.MethodIs("tools/call") {
			t.checkTool(seq, m)
		}
		if rev == rev20260728 && (m.MethodIs("tools/call") || m.MethodIs("prompts/get") || m.MethodIs("resources/read")) {
			t.retried(seq, m)
		}
	}
	t.methodRules(seq, m, rev)
	if m.Dir == S2H && rev >= rev20251125 && m.MethodIs("sampling/createMessage") {
		t.includeContext(seq, Member(m.Params(), "includeContext"), "The request")
	}
	return rev, flags
}

func missingMetaText(md *reqMeta) string {
	what := "io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"
	switch {
	case md.version != nil:
		what = "io.modelcontextprotocol/clientCapabilities"
	case md.caps != nil:
		what = "io.modelcontextprotocol/protocolVersion"
	}
	return "The request's params._meta lacks " + what + "; revision 2026-07-28 of MCP has no handshake and requires both on every request (RequestMetaObject)."
}

// offered reports whether server/discover offered the version (raw JSON).
func (t *Tracker) offered(v []byte) bool {
	s, ok := rawText(v)
	if !ok {
		return false
	}
	for _, o := range t.mcp.supported {
		if o == string(s) {
			return true
		}
	}
	return false
}

// rawText is the decoded content of a raw JSON string; it aliases raw
// when the string has no escapes (the usual case: nothing is allocated).
func rawText(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		return unescape(nil, body)
	}
	return body, true
}

// present reports whether a capability value is there and not false or
// null.
func present(raw []byte) bool {
	return raw != nil && string(raw) != "false" && string(raw) != "null"
}

// methodRules applies the rules of the method table to a request or
// notification under rev.
func (t *Tracker) methodRules(seq int64, m *Message, rev revision) {
	if rev == revUnknown {
		return
	}
	spec, ok := mcpMethodByName[string(m.methodName())]
	if !ok {
		return
	}
	t.methodInRevision(seq, m, rev, spec)
	sender := spec.client
	if m.Dir == S2H {
		sender = spec.server
	}
	if sender.from != revUnknown {
		// Only its own sender's use of a method needs the capability
		// (a host's notifications/message needs no server logging).
		t.capabilityFor(seq, m, rev, spec.need)
	}
}

// methodInRevision raises removed-method and method-not-in-revision for
// a request or notification under rev.
func (t *Tracker) methodInRevision(seq int64, m *Message, rev revision, spec *mcpMethod) {
	if spec.name == "server/discover" {
		return
	}
	span, who := spec.client, "host"
	if m.Dir == S2H {
		span, who = spec.server, "server"
	}
	if span.from == revUnknown || span.has(rev) {
		return
	}
	what := "request"
	if spec.notification {
		what = "notification"
	}
	switch {
	case rev > span.to && !spec.extension:
		msg := "The " + who + " sends " + spec.name + ", a " + what + " that revision " + rev.String() + " of MCP removed"
		if spec.gone != "" {
			msg += " (" + spec.gone + ")"
		}
		t.emit(seq, CodeRemovedMethod, Error, msg+"; a peer of that revision does not know it.", 0)
	case rev < span.from:
		t.emit(seq, CodeMethodNotInRevision, Warn, "The "+who+" sends "+spec.name+", a "+what+" that revision "+rev.String()+" of MCP does not have yet (it came in "+span.from.String()+"); a peer of that revision does not know it.", 0)
	}
}

// capNeed is the capability a method needs: of the server (server) or
// of the client, at path (one or two member names), from revision since.
type capNeed struct {
	server bool
	path   [2]string
	since  revision
}

// mcpCapNeeds is joined to the method table (mcpMethod.need).
var mcpCapNeeds = map[string]capNeed{
	"prompts/list":                         {server: true, path: [2]string{"prompts"}},
	"prompts/get":                          {server: true, path: [2]string{"prompts"}},
	"resources/list":                       {server: true, path: [2]string{"resources"}},
	"resources/templates/list":             {server: true, path: [2]string{"resources"}},
	"resources/read":                       {server: true, path: [2]string{"resources"}},
	"resources/subscribe":                  {server: true, path: [2]string{"resources", "subscribe"}},
	"resources/unsubscribe":                {server: true, path: [2]string{"resources", "subscribe"}},
	"tools/list":                           {server: true, path: [2]string{"tools"}},
	"tools/call":                           {server: true, path: [2]string{"tools"}},
	"completion/complete":                  {server: true, path: [2]string{"completions"}, since: rev20250326},
	"logging/setLevel":                     {server: true, path: [2]string{"logging"}},
	"notifications/message":                {server: true, path: [2]string{"logging"}},
	"notifications/tools/list_changed":     {server: true, path: [2]string{"tools", "listChanged"}},
	"notifications/prompts/list_changed":   {server: true, path: [2]string{"prompts", "listChanged"}},
	"notifications/resources/list_changed": {server: true, path: [2]string{"resources", "listChanged"}},
	"notifications/resources/updated":      {server: true, path: [2]string{"resources", "subscribe"}},
	"sampling/createMessage":               {path: [2]string{"sampling"}},
	"elicitation/create":                   {path: [2]string{"elicitation"}},
	"roots/list":                           {path: [2]string{"roots"}},
	"notifications/roots/list_changed":     {path: [2]string{"roots", "listChanged"}},
}

// capabilityFor raises capability-not-advertised for a frame whose
// feature the capabilities of the side that must offer it do not carry.
func (t *Tracker) capabilityFor(seq int64, m *Message, rev revision, need *capNeed) {
	if need == nil || rev < need.since {
		return
	}
	caps, seen, whose, from := t.mcp.clientCaps, t.mcp.clientCapsSeen, "host", "its initialize request"
	if need.server {
		caps, seen, whose, from = t.mcp.serverCaps, t.mcp.serverCapsSeen, "server", t.mcp.serverCapsFrom
	}
	if !seen || (rev == rev20260728 && !need.server) {
		return // a 2026-07-28 host declares its capabilities per request
	}
	v := Member(caps, need.path[0])
	name := need.path[0]
	if present(v) && need.path[1] != "" {
		v, name = Member(v, need.path[1]), name+"."+need.path[1]
	}
	if present(v) {
		return
	}
	sender := "host"
	if m.Dir == S2H {
		sender = "server"
	}
	t.emit(seq, CodeCapabilityNotAdvertised, Warn, "The "+sender+" sends "+m.Method()+", but the "+whose+"'s capabilities ("+from+") carry no "+name+"; MCP: a peer uses only the features the other side declared.", 0)
}

// checkTool raises unknown-tool for a call of a tool the latest list did
// not name.
func (t *Tracker) checkTool(seq int64, m *Message) {
	if !t.mcp.toolsSeen || t.mcp.toolsStale {
		return
	}
	// One pass over the params finds both (the first of each, as Member).
	var rawName, args []byte
	eachMember(m.Params(), func(key []byte, esc bool, val []byte) bool {
		switch {
		case rawName == nil && keyIs(key, esc, "name"):
			rawName = val
		case args == nil && keyIs(key, esc, "arguments"):
			args = val
		}
		return true
	})
	name, ok := rawText(rawName)
	if !ok {
		return
	}
	if _, listed := t.mcp.tools[string(name)]; !listed {
		t.emit(seq, CodeUnknownTool, Warn, "The call names a tool that the latest tools/list did not list; the server will answer it with an error (MCP: a client calls the tools that tools/list returns).", 0)
		return
	}
	if t.mcp.schemas == nil {
		return
	}
	if p, bad := t.mcp.schemas.CheckCall(string(name), args); bad {
		t.emit(seq, CodeToolArgumentsInvalid, Warn, p.Text, 0)
	}
}

// checkToolResult raises tool-result-invalid for a result of a tools/call
// of tool that its outputSchema does not allow.
func (t *Tracker) checkToolResult(seq int64, res []byte, f *flight) {
	if !t.mcp.toolsSeen || t.mcp.toolsStale || t.mcp.schemas == nil || !t.mcp.schemas.judgesResults(string(f.tool)) {
		return // most tools declare no outputSchema: their results cost no scan
	}
	if s, _ := rawText(Member(res, "resultType")); string(s) == "input_required" {
		return // not the tool's result yet: the call goes on with a retry
	}
	if p, bad := t.mcp.schemas.CheckResult(string(f.tool), res); bad {
		t.emit(seq, CodeToolResultInvalid, Error, p.Text, f.seq)
	}
}

// includeContext raises deprecated-feature for the values of
// includeContext that revision 2025-11-25 deprecated.
func (t *Tracker) includeContext(seq int64, v []byte, who string) {
	if s, _ := StringValue(v); s == "thisServer" || s == "allServers" {
		t.emit(seq, CodeDeprecatedFeature, Info, who+" asks for includeContext "+s+", deprecated since revision 2025-11-25 of MCP (SEP-2596); omit it or use \"none\".", 0)
	}
}

// mcpNotification applies the MCP rules to a notification.
func (t *Tracker) mcpNotification(seq int64, m *Message, rev revision) {
	t.methodRules(seq, m, rev)
	switch {
	case m.Dir == S2H && m.MethodIs("notifications/message") && rev == rev20260728:
		if t.mcp.logLevels == 0 {
			t.emit(seq, CodeLogWithoutLevel, Error, "The server sent a log message while no request in flight set io.modelcontextprotocol/logLevel; revision 2026-07-28 of MCP forbids notifications/message for a request that did not ask for them.", 0)
		}
		t.emit(seq, CodeDeprecatedFeature, Info, "notifications/message: logging is deprecated in revision 2026-07-28 of MCP (SEP-2577); log to stderr or use OpenTelemetry instead.", 0)
	case m.Dir == S2H && m.MethodIs("notifications/tools/list_changed"):
		t.mcp.toolsStale = true
	}
}

// progress judges a notifications/progress against the request that
// carries its token, f (nil when none is in flight).
func (t *Tracker) progress(seq int64, m *Message, f *flight, key []byte) {
	if f == nil {
		if t.gapSeq[m.Dir.Opposite()] != 0 || t.evictions > 0 {
			return // its request may be among the frames not followed
		}
		for _, k := range t.mcp.cancelledTokens {
			if k == string(key) {
				return // sent before the cancellation reached the peer
			}
		}
		t.emit(seq, CodeProgressUnknownToken, Warn, "The progress names a token that no request in flight carries (unknown, or its request was already answered); MCP: progress notifications only reference tokens of active requests.", 0)
		return
	}
	v, err := strconv.ParseFloat(string(Member(m.Params(), "progress")), 64)
	if err != nil {
		return
	}
	if f.hasProgress && !(v > f.progress) {
		t.emit(seq, CodeProgressNotIncreasing, Warn, "The progress value is not greater than the previous one for its token; MCP: the progress value MUST increase with each notification.", f.seq)
	}
	f.progress, f.hasProgress = v, true
}

// cancelledToken remembers the token of a cancelled request.
func (t *Tracker) cancelledToken(f *flight) {
	if f.token == nil {
		return
	}
	t.mcp.cancelledTokens[t.mcp.cancelledNext] = string(f.token)
	t.mcp.cancelledNext = (t.mcp.cancelledNext + 1) % len(t.mcp.cancelledTokens)
}

// mcpAnswer applies the MCP rules to the answer of request f.
func (t *Tracker) mcpAnswer(seq int64, m *Message, f *flight) {
	if f.seq == t.initSeq && f.dir == H2S {
		t.handshakeAnswer(seq, m)
	}
	res := m.Result()
	if res == nil || m.Dir != S2H {
		return
	}
	if t.mcp.server == "" && f.rev == rev20260728 && t.mcp.serverLooks < maxServerLooks {
		// A 2026-07-28 server names itself in its results' _meta: in
		// its first results, or never.
		t.mcp.serverLooks++
		info := Member(Member(res, "_meta"), "io.modelcontextprotocol/serverInfo")
		t.serverInfo(info)
		if t.mcp.server != "" {
			t.serverIdentity(seq, info, "result _meta")
		}
	}
	if f.flags&flUnsupported != 0 {
		t.emit(seq, CodeUnsupportedVersion, Warn, "The request asked for a revision that the server's server/discover did not offer, and the server answered with a result; MCP 2026-07-28: it MUST answer error -32022 (UnsupportedProtocolVersionError).", f.seq)
	}
	if f.method == "server/discover" {
		t.discovered(seq, res)
	}
	if f.method == "tools/list" {
		t.listedTools(seq, res, f.flags&flCursor != 0, f)
	}
	if f.method == "prompts/list" {
		t.listedDefinitions(seq, DefPrompt, res, f)
	}
	if f.method == "resources/templates/list" {
		t.listedDefinitions(seq, DefTemplate, res, f)
	}
	if f.method == "tools/call" {
		t.checkToolResult(seq, res, f)
	}
	if f.method == "tools/call" && mayBeError(res) && string(Member(res, "isError")) == "true" {
		t.emit(seq, CodeToolError, Info, "The tool failed (isError: true): a tool-level error in the result, not a protocol error; the model reads its content.", f.seq)
	}
	if f.rev != rev20260728 {
		return
	}
	rt := Member(res, "resultType")
	if rt == nil {
		t.emit(seq, CodeMissingResultType, Error, "The result has no resultType; revision 2026-07-28 of MCP requires it on every result (\"complete\" or \"input_required\"), and a client reads its absence as an older server's result.", f.seq)
	}
	if s, _ := rawText(rt); string(s) == "input_required" {
		reqs := Member(res, "inputRequests")
		t.inputRequests(seq, reqs, f)
		t.awaitRetry(seq, res, reqs, f)
		return
	}
	switch f.method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "server/discover":
		ttl, scope := Member(res, "ttlMs") != nil, Member(res, "cacheScope") != nil
		if ttl && scope {
			return
		}
		what := "ttlMs and cacheScope"
		if ttl {
			what = "cacheScope"
		} else if scope {
			what = "ttlMs"
		}
		t.emit(seq, CodeMissingCacheHints, Error, "The "+f.method+" result has no "+what+"; revision 2026-07-28 of MCP requires both on it (CacheableResult).", f.seq)
	}
}

// mayBeError reports whether a tool result may hold "isError": true: a
// quick search, so that a result without it (most) or with false is not
// read a second time. A name written with escapes is not found (no peer
// writes isError so); a match inside a string is ruled out by the reader.
func mayBeError(res []byte) bool {
	for i := 0; ; {
		j := bytes.Index(res[i:], isErrorKey)
		if j < 0 {
			return false
		}
		k := i + j + len(isErrorKey)
		for k < len(res) && (isSpace(res[k]) || res[k] == ':') {
			k++
		}
		if bytes.HasPrefix(res[k:], []byte("true")) {
			return true
		}
		i = k
	}
}

// handshakeAnswer takes the server's answer to initialize: its revision
// and its capabilities.
func (t *Tracker) handshakeAnswer(seq int64, m *Message) {
	res := m.Result()
	if res == nil {
		return
	}
	if caps := Member(res, "capabilities"); caps != nil && len(caps) <= maxCaps {
		t.mcp.serverCaps = append(t.mcp.serverCaps[:0], caps...)
		t.mcp.serverCapsSeen, t.mcp.serverCapsFrom = true, "its initialize result"
		t.caps.serverCapsSeq = seq
	}
	t.serverInfo(Member(res, "serverInfo"))
	t.serverIdentity(seq, Member(res, "serverInfo"), "initialize result")
	answered := Member(res, "protocolVersion")
	t.caps.answered, t.caps.answeredSeq = versionText(answered), seq
	asked := t.mcp.hsRev
	t.mcp.hsRev = parseRevision(answered)
	if asked != revUnknown && t.mcp.hsRev > asked {
		t.emit(seq, CodeUnsupportedVersion, Warn, "The server answered initialize with "+revisionText(answered)+", later than the "+asked.String()+" the host asked for; a host asks for the latest revision it supports, so it cannot speak this one (MCP lifecycle: version negotiation).", t.initSeq)
	}
}

// discovered takes a server/discover result: the revisions the server
// offers and its capabilities.
func (t *Tracker) discovered(seq int64, res []byte) {
	list := Member(res, "supportedVersions")
	if list == nil {
		return
	}
	t.mcp.supported = t.mcp.supported[:0]
	eachElement(list, func(v []byte) bool {
		if s, ok := StringValue(v); ok && len(t.mcp.supported) < 64 {
			t.mcp.supported = append(t.mcp.supported, s)
		}
		return true
	})
	t.mcp.supportedSeen, t.caps.offeredSeq = true, seq
	if caps := Member(res, "capabilities"); caps != nil && len(caps) <= maxCaps && !t.mcp.hsSeen {
		t.mcp.serverCaps = append(t.mcp.serverCaps[:0], caps...)
		t.mcp.serverCapsSeen, t.mcp.serverCapsFrom = true, "its server/discover result"
		t.caps.serverCapsSeq = seq
	}
}

// listedTools takes a tools/list result: a first page starts a new list,
// and the page without nextCursor completes it.
func (t *Tracker) listedTools(seq int64, res []byte, later bool, f *flight) {
	var problems []SchemaProblem
	if !later || t.mcp.toolsNext == nil {
		t.mcp.toolsNext = map[string]struct{}{}
		t.tools.next = t.tools.next[:0]
		t.mcp.schemasNext = &Tools{}
		problems = t.mcp.schemasNext.SetList(res)
	} else {
		problems = t.mcp.schemasNext.AddPage(res)
	}
	for _, p := range problems {
		t.emit(seq, CodeBadToolSchema, Error, p.Text, f.seq)
	}
	eachElement(Member(res, "tools"), func(tool []byte) bool {
		name, ok := StringValue(Member(tool, "name"))
		if ok && len(t.mcp.toolsNext) < maxTools {
			t.mcp.toolsNext[name] = struct{}{}
		}
		if ok && len(t.tools.next) < maxTools {
			t.tools.next = append(t.tools.next, listedName{name, seq}) // for ToolUse, in order
		}
		return true
	})
	if cur := Member(res, "nextCursor"); cur != nil && string(cur) != "null" {
		return
	}
	if len(t.mcp.toolsNext) >= maxTools {
		t.mcp.toolsSeen = false // too many to judge
	} else {
		t.mcp.tools, t.mcp.toolsSeen, t.mcp.toolsStale = t.mcp.toolsNext, true, false
		t.toolsListed(seq)
		for _, p := range t.mcp.schemasNext.Drift(t.mcp.schemas) {
			t.emit(seq, CodeToolDrift, Warn, p.Text, f.seq)
			t.toolDrifted(seq, p.Tool, p.Fields)
		}
		t.mcp.schemas = t.mcp.schemasNext
		if t.mcp.baseline != nil {
			t.againstBaseline(seq, DefTool, t.mcp.schemas.Definitions(), f) // compacted only when compared
		}
	}
	t.mcp.toolsNext, t.mcp.schemasNext = nil, nil
}

// listedDefinitions takes a prompts/list or resources/templates/list
// result as listedTools takes a tools/list one: its pages gathered, and
// the complete list compared with the baseline.
func (t *Tracker) listedDefinitions(seq int64, k DefinitionKind, res []byte, f *flight) {
	if f.flags&flCursor == 0 || t.mcp.defsNext[k] == nil {
		t.mcp.defsNext[k] = Definitions{}
	}
	if !t.mcp.defsNext[k].AddPage(k, res) || len(t.mcp.defsNext[k]) > maxTools {
		t.mcp.defsNext[k] = nil // not a list, or too long to judge
		return
	}
	if cur := Member(res, "nextCursor"); cur != nil && string(cur) != "null" {
		return
	}
	t.mcp.defs[k], t.mcp.defsNext[k] = t.mcp.defsNext[k], nil
	t.againstBaseline(seq, k, t.mcp.defs[k], f)
}

// serverInfo takes the server's serverInfo (an Implementation): its name
// names the baseline the session is judged against.
func (t *Tracker) serverInfo(info []byte) {
	name, ok := StringValue(Member(info, "name"))
	if !ok || name == "" || name == t.mcp.server {
		return
	}
	t.mcp.server, t.mcp.baseline = name, nil
	if t.opts.Baseline != nil {
		t.mcp.baseline = t.opts.Baseline(name)
	}
}

// againstBaseline reports tool-drift for each way the complete list now,
// of kind k, differs from the baseline accepted for the server, each
// change once in the session.
func (t *Tracker) againstBaseline(seq int64, k DefinitionKind, now Definitions, f *flight) {
	b := t.mcp.baseline
	if b == nil || b.Lists[k] == nil || now == nil {
		return
	}
	for _, c := range CompareDefinitions(k, b.Lists[k], now) {
		said := c.said()
		if _, ok := t.mcp.baselineSaid[said]; ok {
			continue
		}
		if t.mcp.baselineSaid == nil {
			t.mcp.baselineSaid = map[string]struct{}{}
		}
		t.mcp.baselineSaid[said] = struct{}{}
		t.emit(seq, CodeToolDrift, Warn, c.againstBaselineText(b), f.seq)
		if k == DefTool {
			t.toolOffBaseline(seq, c)
		}
	}
}

// An awaitingRetry is an input_required result whose retry is to come:
// what the call's requests are (method, tool), the keys of its
// inputRequests and its requestState, the call's first request, and the
// result's own frame.
type awaitingRetry struct {
	method, tool string
	state        []byte // the raw requestState, nil when the result had none
	keys         []string
	origin       int64
	originSent   time.Duration
	round        int32 // the round of the request the result answers
	result       int64
}

// maxAwaiting bounds the input_required results awaiting a retry; past
// it the oldest is forgotten (its retry then goes unlinked and unjudged).
const maxAwaiting = 256

// awaitRetry keeps the input_required result seq, of request f, for the
// retry that answers it.
func (t *Tracker) awaitRetry(seq int64, res, reqs []byte, f *flight) {
	t.mcp.inputRequired = true
	if f.method != "tools/call" && f.method != "prompts/get" && f.method != "resources/read" {
		return
	}
	w := awaitingRetry{method: f.method, tool: string(f.tool), origin: f.seq, originSent: f.sent, round: 1, result: seq}
	if f.origin != 0 {
		w.origin, w.originSent, w.round = f.origin, f.originSent, f.round
	}
	if st := Member(res, "requestState"); st != nil && string(st) != "null" {
		w.state = append([]byte(nil), st...)
	}
	eachMember(reqs, func(key []byte, escaped bool, _ []byte) bool {
		if k, ok := memberKey(key, escaped); ok && len(w.keys) < 64 {
			w.keys = append(w.keys, k)
		}
		return true
	})
	if len(t.mcp.awaiting) == maxAwaiting {
		t.mcp.awaiting = append(t.mcp.awaiting[:0], t.mcp.awaiting[1:]...)
	}
	t.mcp.awaiting = append(t.mcp.awaiting, w)
}

// retried links a host request that retries a multi round-trip call (it
// carries inputResponses or requestState) to the call's first request,
// and judges it against the input_required result it answers: every
// input request answered, the requestState sent back as it was
// (mrtr-mismatch). The result answered is the latest awaiting one with
// the same requestState, else the latest of the same method and tool;
// none (a result before the recording began, or forgotten) judges nothing.
func (t *Tracker) retried(seq int64, m *Message) {
	params := m.Params()
	if !bytes.Contains(params, requestStateKey) && !bytes.Contains(params, inputResponsesKey) {
		return // most calls: a quick search, as mayBeError's (no peer writes these names with escapes)
	}
	var responses, state []byte
	eachMember(params, func(key []byte, escaped bool, val []byte) bool {
		switch {
		case escaped:
		case string(key) == "inputResponses":
			responses = val
		case string(key) == "requestState":
			state = val
		}
		return true
	})
	if state != nil && string(state) == "null" {
		state = nil
	}
	if responses == nil && state == nil {
		return
	}
	tool := ""
	if m.MethodIs("tools/call") {
		tool, _ = StringValue(Member(params, "name"))
	}
	method := m.Method()
	at := -1
	for i := len(t.mcp.awaiting) - 1; i >= 0 && state != nil; i-- {
		if w := &t.mcp.awaiting[i]; w.method == method && w.state != nil && sameJSONString(w.state, state) {
			at = i
			break
		}
	}
	for i := len(t.mcp.awaiting) - 1; i >= 0 && at < 0; i-- {
		if w := &t.mcp.awaiting[i]; w.method == method && w.tool == tool {
			at = i
		}
	}
	if at < 0 {
		return
	}
	w := t.mcp.awaiting[at]
	t.mcp.awaiting = append(t.mcp.awaiting[:at], t.mcp.awaiting[at+1:]...)
	t.mcp.retryOf, t.mcp.retrySent, t.mcp.retryRound = w.origin, w.originSent, w.round+1
	var wrong []string
	if missing := missingKeys(w.keys, responses); len(missing) > 0 {
		wrong = append(wrong, "its inputResponses hold no answer for input request "+strings.Join(missing, ", "))
	}
	switch {
	case w.state != nil && state == nil:
		wrong = append(wrong, "it does not send back the requestState the result gave")
	case w.state == nil && state != nil:
		wrong = append(wrong, "it sends a requestState the result never gave")
	case w.state != nil && !sameJSONString(w.state, state):
		wrong = append(wrong, "its requestState is not the one the result gave")
	}
	if len(wrong) > 0 {
		t.emit(seq, CodeMRTRMismatch, Warn, "The retry of the call whose result was input_required "+strings.Join(wrong, ", and ")+"; MCP 2026-07-28 (multi round-trip requests): a retry answers every input request by its key and echoes requestState unchanged.", w.result)
	}
}

// missingKeys are the keys of the input requests that responses, the
// retry's inputResponses, has no member for, quoted and escaped.
func missingKeys(keys []string, responses []byte) []string {
	var have map[string]bool
	if len(keys) > 0 {
		have = map[string]bool{}
		eachMember(responses, func(key []byte, escaped bool, _ []byte) bool {
			if k, ok := memberKey(key, escaped); ok {
				have[k] = true
			}
			return true
		})
	}
	var missing []string
	for _, k := range keys {
		if !have[k] {
			missing = append(missing, quoteName(k))
		}
	}
	return missing
}

// memberKey is an object member's key as a string, its escapes read.
func memberKey(key []byte, escaped bool) (string, bool) {
	if !escaped {
		return string(key), true
	}
	return StringValue(append(append([]byte{'"'}, key...), '"'))
}

// sameJSONString reports whether two raw JSON values are the same string
// (however escaped), or byte for byte the same value otherwise.
func sameJSONString(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	sa, okA := StringValue(a)
	sb, okB := StringValue(b)
	return okA && okB && sa == sb
}

// inputRequests judges the input requests of an input_required result
// against the capabilities the request declared.
func (t *Tracker) inputRequests(seq int64, reqs []byte, f *flight) {
	eachMember(reqs, func(_ []byte, _ bool, req []byte) bool {
		method, _ := StringValue(Member(req, "method"))
		var need uint8
		var capName string
		switch method {
		case "roots/list":
			need, capName = flRoots, "roots"
			t.emit(seq, CodeDeprecatedFeature, Info, "The result asks the host for roots/list: roots are deprecated in revision 2026-07-28 of MCP (SEP-2577); pass directories through tool arguments or resource URIs instead.", f.seq)
		case "sampling/createMessage":
			need, capName = flSampling, "sampling"
			t.emit(seq, CodeDeprecatedFeature, Info, "The result asks the host for sampling/createMessage: sampling is deprecated in revision 2026-07-28 of MCP (SEP-2577); call the model provider's API directly instead.", f.seq)
			t.includeContext(seq, Member(Member(req, "params"), "includeContext"), "The input request")
		case "elicitation/create":
			need, capName = flElicitation, "elicitation"
		default:
			return true
		}
		if f.flags&flCapsKnown != 0 && f.flags&need == 0 {
			t.emit(seq, CodeCapabilityNotAdvertised, Warn, "The result asks the host for "+method+", but the request's io.modelcontextprotocol/clientCapabilities carry no "+capName+"; MCP 2026-07-28: a server asks only for what the request declared.", f.seq)
		}
		return true
	})
}

// eachMember calls fn with each member of the JSON object obj (its key's
// raw bytes, whether they hold escapes, and its raw value) until fn
// returns false. Anything but an object calls fn never.
func eachMember(obj []byte, fn func(key []byte, escaped bool, val []byte) bool) {
	var s scanner
	s.data = obj
	s.skipSpace()
	if s.pos >= len(obj) || obj[s.pos] != '{' {
		return
	}
	var it members
	if !it.begin(&s, 0) {
		return
	}
	for it.next(&s) {
		start := s.pos
		s.skipValue(1)
		if s.stopped() || !fn(it.key, it.escaped, obj[start:s.pos]) {
			return
		}
	}
}

// eachElement calls fn with each element of the JSON array arr until fn
// returns false. Anything but an array calls fn never.
func eachElement(arr []byte, fn func(val []byte) bool) {
	var s scanner
	s.data = arr
	s.skipSpace()
	if s.pos >= len(arr) || arr[s.pos] != '[' {
		return
	}
	s.pos++
	s.skipSpace()
	if s.pos < len(arr) && arr[s.pos] == ']' {
		return
	}
	for s.pos < len(arr) {
		start := s.pos
		s.skipValue(1)
		if s.stopped() || !fn(arr[start:s.pos]) {
			return
		}
		s.skipSpace()
		if s.pos >= len(arr) || arr[s.pos] != ',' {
			return
		}
		s.pos++
		s.skipSpace()
	}
}

// CheckToolCall judges arguments for a tools/call of the tool name as
// the session's latest complete tools/list says its inputSchema is: a
// tool-arguments-invalid problem, or none (no list, a list the server
// said changed, a tool not listed, arguments that cannot be judged).
// It is how a call still being composed is judged before it is sent.
func (t *Tracker) CheckToolCall(name string, arguments []byte) (SchemaProblem, bool) {
	if s := t.shown(); s != t {
		return s.CheckToolCall(name, arguments)
	}
	if !t.mcp.toolsSeen || t.mcp.toolsStale || t.mcp.schemas == nil {
		return SchemaProblem{}, false
	}
	return t.mcp.schemas.CheckCall(name, arguments)
}

// Server is the name the MCP server gave in its serverInfo, or "".
func (t *Tracker) Server() string { return t.shown().mcp.server }

// Listed gives the latest complete list of each kind of definitions the
// server listed so far (nil for a kind never listed), as a baseline of
// the server would hold them.
func (t *Tracker) Listed() [definitionKinds]Definitions {
	if s := t.shown(); s != t {
		return s.Listed()
	}
	lists := t.mcp.defs
	if t.mcp.schemas != nil {
		lists[DefTool] = t.mcp.schemas.Definitions()
	}
	return lists
}
