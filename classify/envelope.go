package classify

import "strings"

// MaxParse is the default parse limit. A larger frame is classified from its
// first MaxParse bytes and carries finding oversize.
const MaxParse = 64 << 20

// Classify reads one frame (without its framing: the line without '\n', or
// the LSP body) travelling in direction dir, and judges it by profile p
// (Auto judges as JSONRPC; a Tracker resolves Auto from the traffic).
// It never fails: any bytes give a Message.
func Classify(frame []byte, dir Direction, p Profile) Message {
	return ClassifyWithin(frame, MaxParse, dir, p)
}

// ClassifyWithin is Classify with a parse limit of limit bytes (MaxParse
// when limit <= 0, and never more than MaxParse): a larger frame is judged
// from its first limit bytes and carries finding oversize. A tap that
// holds less of a frame than MaxParse judges by its own limit, and so do
// readers of what it recorded.
func ClassifyWithin(frame []byte, limit int, dir Direction, p Profile) Message {
	if limit <= 0 || limit > MaxParse {
		limit = MaxParse
	}
	if len(frame) > limit {
		return ClassifyPrefix(frame[:limit], int64(len(frame)), dir, p)
	}
	return classify(frame, int64(len(frame)), dir, p, false)
}

// ClassifyPrefix judges a frame of size bytes from its first bytes only, for
// frames too large to hold. The Message carries finding oversize when size
// is larger than the prefix.
func ClassifyPrefix(prefix []byte, size int64, dir Direction, p Profile) Message {
	if size <= int64(len(prefix)) {
		return classify(prefix, size, dir, p, false)
	}
	m := classify(prefix, size, dir, p, true)
	m.add(CodeOversize, Warn, "The frame is "+sizeText(size)+", larger than the parse limit; it was forwarded whole and judged from its first "+sizeText(int64(len(prefix)))+" only.")
	return m
}

func classify(frame []byte, size int64, dir Direction, p Profile, partial bool) Message {
	if p == Auto {
		p = JSONRPC
	}
	m := Message{Dir: dir, Profile: p, Frame: frame, Size: size}
	var s scanner
	s.data = frame
	s.partial = partial
	s.skipSpace()
	if s.pos == len(frame) {
		if partial {
			m.Kind = KindNotJSON
			return m
		}
		m.Kind = KindBlank
		m.add(CodeBlankLine, Warn, "The frame is an empty line; a peer reading JSON-RPC messages may fail on it.")
		return m
	}
	switch frame[s.pos] {
	case '{':
		var env envelope
		env.read(&m, &s)
		env.cut = s.short
		if !s.checkEnd() {
			m.notJSON()
			return m
		}
		m.judge(&env, false)
		if s.unsafe {
			m.addUnsafe()
		}
	case '[':
		m.readBatch(&s)
	default:
		t := s.peekType()
		s.skipValue(0)
		if !s.checkEnd() {
			m.notJSON()
			return m
		}
		m.Kind = KindNonObject
		m.add(CodeNonObject, Error, "The frame is "+t.article()+", not a JSON-RPC message (a message must be a JSON object).")
		if dir == H2S {
			m.answer(InvalidRequest, "Invalid Request: a message must be a JSON object, not "+t.article())
		}
		if s.unsafe {
			m.addUnsafe()
		}
	}
	return m
}

// checkEnd reports whether the value just read ends the frame (only
// whitespace after it) and no syntax error was seen. A prefix that ran out
// inside the value counts as fine.
func (s *scanner) checkEnd() bool {
	if s.bad {
		return false
	}
	if s.short {
		return true
	}
	s.skipSpace()
	return s.pos == len(s.data)
}

func (m *Message) notJSON() {
	m.Kind = KindNotJSON
	m.Findings = m.Findings[:0]
	m.id, m.method, m.params, m.result, m.err, m.meta, m.jsonrpc = span{}, span{}, span{}, span{}, span{}, span{}, span{}
	m.errCodeOK = false
	msg := "The frame is not valid JSON."
	if m.Dir == S2H {
		msg = "The server wrote a line that is not JSON to stdout; the MCP stdio transport allows only JSON-RPC messages there, and logs belong on stderr."
	}
	m.add(CodeNotJSON, Error, msg)
	if m.Dir == H2S {
		m.answer(ParseError, "Parse error")
	}
}

func (m *Message) add(c Code, sev Severity, msg string) {
	m.Findings = append(m.Findings, Finding{Code: c, Severity: sev, Message: msg})
}

func (m *Message) addUnsafe() {
	m.add(CodeUnsafeText, Warn, "A string in this frame holds control, escape, bidi or other invisible format characters; they are shown escaped.")
}

// answer records the error a strict receiver owes, carrying the frame's id
// when it is a string or a number.
func (m *Message) answer(code int, msg string) {
	a := &Answer{Code: code, Message: msg, OmitNullID: m.Profile == MCP}
	if m.id.typ == valString || m.id.typ == valNumber {
		a.ID = m.id.of(m.Frame)
	}
	m.Answer = a
}

// Envelope member names, as bits.
const (
	memJSONRPC uint8 = 1 << iota
	memID
	memMethod
	memParams
	memResult
	memError
)

var memberNames = [...]struct {
	bit  uint8
	name string
}{
	{memJSONRPC, "jsonrpc"}, {memID, "id"}, {memMethod, "method"},
	{memParams, "params"}, {memResult, "result"}, {memError, "error"},
}

func memberBit(key []byte, escaped bool) uint8 {
	if !escaped {
		switch string(key) {
		case "jsonrpc":
			return memJSONRPC
		case "id":
			return memID
		case "method":
			return memMethod
		case "params":
			return memParams
		case "result":
			return memResult
		case "error":
			return memError
		}
		return 0
	}
	for _, n := range memberNames {
		if keyIs(key, true, n.name) {
			return n.bit
		}
	}
	return 0
}

// envelope is what reading an object's members noticed.
type envelope struct {
	seen, dup uint8
	// error object shape
	errMessage span
	errData    bool
	errCodeBad bool // code present but not an integer
	errCodeSet bool
	errMsgEsc  bool
	// cut: the frame's prefix ended inside the object, so members after
	// it are unknown: their absence is no finding (errCut: inside the
	// error object).
	cut, errCut bool
}

// read walks the object at s.pos, recording the envelope members (first
// copy wins) and validating everything else.
func (env *envelope) read(m *Message, s *scanner) {
	var it members
	if !it.begin(s, 0) {
		return
	}
	for it.next(s) {
		bit := memberBit(it.key, it.escaped)
		t := s.peekType()
		start := s.pos
		first := bit != 0 && env.seen&bit == 0
		switch {
		case first && bit == memParams && t == valObject:
			m.meta = readMeta(s)
		case first && bit == memError && t == valObject:
			env.readError(m, s)
			env.errCut = s.short
		case first && bit == memMethod && t == valString:
			s.scanString()
			m.methodEscaped = s.escaped
		default:
			s.skipValue(1)
		}
		if s.bad {
			return
		}
		sp := span{start: int32(start), end: int32(s.pos), typ: t}
		if s.short && t != valObject && t != valArray && bit&(memResult|memError|memParams) == 0 {
			// A prefix cut this value short: it is unusable. A result,
			// an error or params is judged by its presence and type only,
			// which the prefix shows however long the value (a string
			// result cut short is a result).
			return
		}
		if bit != 0 {
			if env.seen&bit != 0 {
				env.dup |= bit
			} else {
				env.seen |= bit
				switch bit {
				case memJSONRPC:
					m.jsonrpc = sp
				case memID:
					m.id = sp
				case memMethod:
					m.method = sp
				case memParams:
					m.params = sp
				case memResult:
					m.result = sp
				case memError:
					m.err = sp
				}
			}
		}
		if s.short {
			return
		}
	}
}

// readMeta walks a params object and returns the span of its _meta member.
func readMeta(s *scanner) span {
	var meta span
	var it members
	if !it.begin(s, 1) {
		return meta
	}
	for it.next(s) {
		start := s.pos
		t := s.skipValue(2)
		if s.stopped() {
			return meta
		}
		if !meta.present() && keyIs(it.key, it.escaped, "_meta") {
			meta = span{start: int32(start), end: int32(s.pos), typ: t}
		}
	}
	return meta
}

// readError walks an error object, noting its code, message and data.
func (env *envelope) readError(m *Message, s *scanner) {
	var it members
	if !it.begin(s, 1) {
		return
	}
	for it.next(s) {
		start := s.pos
		t := s.skipValue(2)
		if s.stopped() {
			return
		}
		switch {
		case keyIs(it.key, it.escaped, "code") && !env.errCodeSet:
			env.errCodeSet = true
			if t == valNumber {
				m.errCode, m.errCodeOK = parseInt(s.data[start:s.pos])
			}
			env.errCodeBad = !m.errCodeOK
		case keyIs(it.key, it.escaped, "message") && !env.errMessage.present():
			env.errMessage = span{start: int32(start), end: int32(s.pos), typ: t}
		case keyIs(it.key, it.escaped, "data"):
			env.errData = true
		}
	}
}

// unknown reports whether a member that the envelope lacks may lie past
// the end of a frame cut short.
func (env *envelope) unknown(sp *span) bool { return env.cut && !sp.present() }

// parseInt reads an integer without fraction or exponent that fits int64.
func parseInt(raw []byte) (int64, bool) {
	neg := false
	if len(raw) > 0 && raw[0] == '-' {
		neg = true
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// judge decides the kind of an object by the envelope rules, in order, and
// raises its findings. member is true for an element of a batch.
func (m *Message) judge(env *envelope, member bool) {
	hasMethod := env.seen&memMethod != 0
	hasID := env.seen&memID != 0
	if env.dup != 0 {
		var names []string
		for _, n := range memberNames {
			if env.dup&n.bit != 0 {
				names = append(names, `"`+n.name+`"`)
			}
		}
		m.add(CodeDuplicateMember, Error, "The object has more than one "+strings.Join(names, ", ")+" member; parsers disagree on which copy wins, so the receiver may act on a different one than shown here (the first).")
	}
	switch {
	case !hasMethod && hasID:
		m.Kind = KindResponse
		m.judgeResponse(env)
		return
	case !hasMethod && env.seen&memError != 0 && m.jsonrpcOK():
		m.Kind = KindResponse
		m.judgeResponse(env)
		return
	case !hasMethod && env.cut && env.seen&(memResult|memError) != 0:
		// A result or an error in a frame cut short: its id may come
		// after the prefix (peers write the result first).
		m.Kind = KindResponse
		m.judgeResponse(env)
		return
	case !hasMethod:
		m.Kind = KindStray
		if m.Dir == H2S {
			m.add(CodeStrayObject, Error, "The object has neither a method nor an id, so it is neither a request nor a response; a strict server answers -32600.")
			m.answer(InvalidRequest, "Invalid Request: a message needs a method or an id")
		} else {
			m.add(CodeStrayObject, Warn, "The object has neither a method nor an id; on a server's stdout this is usually a log line that belongs on stderr.")
		}
		return
	}

	var faults []string
	if m.method.typ != valString {
		faults = append(faults, "the method must be a string, not "+m.method.typ.article())
		m.add(CodeBadMethod, Error, "The method is "+m.method.typ.article()+"; it must be a string.")
	}
	if hasID && !m.ID().Valid() {
		faults = append(faults, "the id must be a string, a number or null, not "+m.id.typ.article())
		m.add(CodeBadID, Error, "The id is "+m.id.typ.article()+"; it must be a string, a number or null.")
	}
	if !m.jsonrpcOK() && !env.unknown(&m.jsonrpc) {
		f := m.jsonrpcFault()
		faults = append(faults, f)
		m.add(CodeBadJSONRPC, Error, capitalize(f)+".")
	}
	if m.params.present() && !m.paramsOK() {
		want := "an object or an array"
		if m.Profile == MCP {
			want = "an object"
		}
		faults = append(faults, "params must be "+want+", not "+m.params.typ.article())
		m.add(CodeBadParams, Error, "The params member is "+m.params.typ.article()+"; it must be "+want+".")
	}
	if len(faults) > 0 {
		m.Kind = KindInvalid
		m.answer(InvalidRequest, "Invalid Request: "+strings.Join(faults, "; "))
		return
	}

	if hasID {
		m.Kind = KindRequest
		m.judgeID()
		if m.id.typ == valNull {
			if m.Profile == MCP {
				m.add(CodeNullID, Error, `The request's id is null; MCP requires a string or a number, and a null id cannot be told apart from an answer to an unreadable message.`)
			} else {
				m.add(CodeNullID, Warn, `The request's id is null; JSON-RPC discourages it, because an answer with "id": null also means "I could not read your message".`)
			}
		}
		if isNotificationMethod(m, m.Profile) {
			m.add(CodeNotificationAsRequest, Warn, "The method names a notification but was sent with an id; the receiver may never answer it.")
		}
	} else {
		m.Kind = KindNotification
		if isRequestMethod(m, m.Profile) && !env.cut {
			m.add(CodeRequestAsNotification, Warn, "The method is a request in this protocol but was sent without an id, so it will never be answered.")
		}
	}
	if m.methodHasPrefix("rpc.") {
		m.add(CodeReservedMethod, Warn, `The method begins with "rpc.", which JSON-RPC reserves for its own extensions.`)
	}
}

func (m *Message) jsonrpcOK() bool {
	if m.jsonrpc.typ != valString {
		return false
	}
	raw := m.jsonrpc.of(m.Frame)
	if string(raw) == `"2.0"` {
		return true
	}
	return keyIs(raw[1:len(raw)-1], true, "2.0")
}

func (m *Message) jsonrpcFault() string {
	switch m.jsonrpc.typ {
	case valNone:
		return `the "jsonrpc" member is missing; it must be the string "2.0"`
	case valString:
		return `the "jsonrpc" member must be the string "2.0", not another string`
	}
	return `the "jsonrpc" member must be the string "2.0", not ` + m.jsonrpc.typ.article()
}

func (m *Message) paramsOK() bool {
	if m.params.typ == valObject {
		return true
	}
	return m.params.typ == valArray && m.Profile != MCP
}

func (m *Message) methodHasPrefix(prefix string) bool {
	name := m.methodName()
	return len(name) >= len(prefix) && string(name[:len(prefix)]) == prefix
}

// judgeID raises the findings a number id carries.
func (m *Message) judgeID() {
	if m.id.typ != valNumber {
		return
	}
	frac, big := numberShape(m.id.of(m.Frame))
	if frac {
		m.add(CodeFractionalID, Warn, "The id is a number with a fraction or an exponent; JSON-RPC says number ids should be integers, and peers compare such ids differently.")
	}
	if big {
		m.add(CodeUnsafeIntID, Warn, "The id is an integer beyond ±(2^53−1); JavaScript peers lose its precision and may answer with a different id.")
	}
}

func (m *Message) judgeResponse(env *envelope) {
	hasID := env.seen&memID != 0
	hasResult := env.seen&memResult != 0
	hasError := env.seen&memError != 0
	if hasID && !m.ID().Valid() {
		m.add(CodeBadID, Error, "The response's id is "+m.id.typ.article()+"; it must be a string, a number or null.")
	}
	m.judgeID()
	if !m.jsonrpcOK() && !env.unknown(&m.jsonrpc) {
		m.add(CodeBadJSONRPC, Error, capitalize(m.jsonrpcFault())+".")
	}
	switch {
	case hasResult && hasError:
		m.add(CodeResultAndError, Error, "The response has both a result and an error; it must have exactly one.")
	case !hasResult && !hasError && !env.cut:
		m.add(CodeNoResultOrError, Error, "The response has neither a result nor an error; it must have exactly one.")
	}
	if hasResult && ((!hasID && !env.cut) || (hasID && m.id.typ == valNull)) {
		m.add(CodeResultWithoutID, Error, "The response carries a result but no id, so no request can be paired with it.")
	}
	if !hasError {
		return
	}
	switch {
	case !m.err.present():
		// A prefix that ends before the error's value: nothing to judge.
	case m.err.typ != valObject:
		m.add(CodeBadErrorObject, Error, "The error is "+m.err.typ.article()+"; it must be an object with an integer code and a string message.")
	default:
		var faults []string
		if !env.errCodeSet {
			if !env.errCut {
				faults = append(faults, "has no code")
			}
		} else if env.errCodeBad {
			faults = append(faults, "has a code that is not an integer")
		}
		if env.errMessage.typ != valString {
			if env.errMessage.present() {
				faults = append(faults, "has a message that is "+env.errMessage.typ.article())
			} else if !env.errCut {
				faults = append(faults, "has no message")
			}
		}
		if len(faults) > 0 {
			m.add(CodeBadErrorObject, Error, "The error object "+strings.Join(faults, " and ")+"; it needs an integer code and a string message.")
		}
	}
	switch {
	case hasID && m.id.typ == valNull:
		if m.Profile == MCP {
			m.add(CodeNullIDError, Error, `The error response has "id": null; MCP leaves the id out instead, and spec-strict clients throw on a null id.`)
		}
	case !hasID && !env.cut:
		if m.Profile != MCP {
			m.add(CodeMissingIDError, Warn, `The error response has no id member; JSON-RPC wants "id": null when the request's id could not be read.`)
		}
	}
	if m.err.typ == valObject {
		m.judgeErrorText(env)
	}
}

// standardText holds the message JSON-RPC gives each standard code.
var standardText = map[int64]string{
	ParseError:     "parse error",
	InvalidRequest: "invalid request",
	MethodNotFound: "method not found",
	InvalidParams:  "invalid params",
	InternalError:  "internal error",
	-32000:         "server error",
}

// judgeErrorText looks at what an error's text tells: nothing (opaque), or
// too much (leaky).
func (m *Message) judgeErrorText(env *envelope) {
	var msg string
	if env.errMessage.typ == valString {
		raw := env.errMessage.of(m.Frame)
		dec, _ := unescape(nil, raw[1:len(raw)-1])
		msg = string(dec)
	}
	if !env.errData && !env.errCut {
		t := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(msg), "."))
		if t == "" || (m.errCodeOK && standardText[m.errCode] == t) {
			m.add(CodeOpaqueError, Info, "The error says no more than its code's standard text and has no data; the peer withheld the detail.")
		}
	}
	if leaky(allStrings(m.err.of(m.Frame))) {
		m.add(CodeLeakyError, Warn, "The error's text shows internals (a stack trace or an absolute file path); a handler's text can reveal a host's internals to a third-party peer.")
	}
}

// allStrings decodes every string in a JSON value and joins them with
// newlines.
func allStrings(v []byte) string {
	var out []byte
	var s scanner
	s.data = v
	for s.pos < len(v) {
		if v[s.pos] != '"' {
			s.pos++
			continue
		}
		start := s.pos + 1
		s.scanString()
		if s.stopped() {
			break
		}
		out, _ = unescape(out, v[start:s.pos-1])
		out = append(out, '\n')
	}
	return string(out)
}

// leaky spots stack traces and absolute paths in text.
func leaky(text string) bool {
	for _, marker := range []string{"Traceback (most recent call last)", "panic:", "at Object.<anonymous>", "\n    at ", "\tat ", ".go:", ".py\", line ", ".js:", ".ts:", ".java:", ".rs:"} {
		if strings.Contains(text, marker) {
			if marker == ".go:" || marker == ".js:" || marker == ".ts:" || marker == ".java:" || marker == ".rs:" {
				if !sourceLine(text, marker) {
					continue
				}
			}
			return true
		}
	}
	if i := strings.Index(text, "goroutine "); i >= 0 {
		rest := text[i+len("goroutine "):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 && strings.HasPrefix(rest[j:], " [") {
			return true
		}
	}
	return absolutePath(text)
}

// sourceLine reports whether marker (".go:") is followed by a line number.
func sourceLine(text, marker string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], marker)
		if k < 0 {
			return false
		}
		j := i + k + len(marker)
		if j < len(text) && text[j] >= '0' && text[j] <= '9' {
			return true
		}
		i = j
	}
}

// absolutePath spots a Unix path of two or more segments under a system
// root, a home directory, or a Windows drive.
func absolutePath(text string) bool {
	for _, root := range []string{"/home/", "/Users/", "/root/", "/usr/", "/opt/", "/var/", "/srv/", "/etc/", "/private/", "/tmp/", "/app/", "/workspace/"} {
		for i := 0; ; {
			k := strings.Index(text[i:], root)
			if k < 0 {
				break
			}
			at := i + k
			before := byte(' ')
			if at > 0 {
				before = text[at-1]
			}
			after := at + len(root)
			if (before == ' ' || before == '\n' || before == '\t' || before == '"' || before == '\'' || before == '(' || before == '=' || before == ':' || before == '/') &&
				after < len(text) && text[after] != ' ' && text[after] != '\n' {
				return true
			}
			i = after
		}
	}
	for i := 0; i+3 <= len(text); i++ {
		c := text[i]
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) && text[i+1] == ':' && text[i+2] == '\\' && (i == 0 || !isWordByte(text[i-1])) {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// readBatch classifies an array: each element on its own, as a member.
func (m *Message) readBatch(s *scanner) {
	start := s.pos
	s.skipValue(0)
	if !s.checkEnd() {
		m.notJSON()
		return
	}
	if s.short {
		// Cut at the parse limit: a batch all the same, of untold length.
		m.Kind = KindBatch
		m.addBatch("")
		if s.unsafe {
			m.addUnsafe()
		}
		return
	}
	// Walk the elements again to classify each.
	var elems [][2]int
	var w scanner
	w.data = m.Frame
	w.pos = start + 1
	w.skipSpace()
	if w.pos < len(w.data) && w.data[w.pos] != ']' {
		for {
			w.skipSpace()
			es := w.pos
			w.skipValue(1)
			elems = append(elems, [2]int{es, w.pos})
			w.skipSpace()
			if w.pos >= len(w.data) || w.data[w.pos] != ',' {
				break
			}
			w.pos++
		}
	}
	if len(elems) == 0 {
		m.Kind = KindInvalid
		m.add(CodeEmptyBatch, Error, "The frame is an empty batch; a strict receiver answers one -32600 error.")
		m.answer(InvalidRequest, "Invalid Request: an empty batch")
		return
	}
	m.Kind = KindBatch
	m.addBatch(" of " + plural(len(elems), "message"))
	m.Members = make([]Message, len(elems))
	var answers []Answer
	for i, e := range elems {
		m.Members[i] = classifyMember(m.Frame[e[0]:e[1]], m.Dir, m.Profile)
		if a := m.Members[i].Answer; a != nil {
			answers = append(answers, *a)
		}
	}
	if answers != nil {
		m.Answer = &Answer{Batch: answers, OmitNullID: m.Profile == MCP}
	}
	if s.unsafe {
		m.addUnsafe()
	}
}

// addBatch raises finding batch: an error under MCP, which removed
// batching, info otherwise. size says how many messages, when known.
func (m *Message) addBatch(size string) {
	if m.Profile == MCP {
		m.add(CodeBatch, Error, "The frame is a batch; MCP removed JSON-RPC batching in revision 2025-06-18.")
	} else {
		m.add(CodeBatch, Info, "The frame is a batch"+size+".")
	}
}

// classifyMember judges one element of a batch.
func classifyMember(elem []byte, dir Direction, p Profile) Message {
	m := Message{Dir: dir, Profile: p, Frame: elem, Size: int64(len(elem))}
	var s scanner
	s.data = elem
	if len(elem) > 0 && elem[0] == '{' {
		var env envelope
		env.read(&m, &s)
		env.cut = s.short
		m.judge(&env, true)
		if s.unsafe {
			m.addUnsafe()
		}
		return m
	}
	t := s.peekType()
	m.Kind = KindNonObject
	m.add(CodeNonObject, Error, "This batch member is "+t.article()+", not a JSON-RPC message (a message must be a JSON object).")
	if dir == H2S {
		m.answer(InvalidRequest, "Invalid Request: a batch member must be a JSON object, not "+t.article())
	}
	return m
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return itoa(int(n>>30)) + " GiB"
	case n >= 1<<20:
		return itoa(int(n>>20)) + " MiB"
	case n >= 1<<10:
		return itoa(int(n>>10)) + " KiB"
	}
	return itoa(int(n)) + " bytes"
}

// ClassifyFramed judges a frame as a framer delivered it: body is the frame
// without its framing (possibly only a prefix of info.BodyLen bytes). A
// malformed LSP header block makes the frame not-json with finding
// bad-header.
func ClassifyFramed(body []byte, info FrameInfo, dir Direction, p Profile) Message {
	if info.Bad != "" {
		if p == Auto {
			p = JSONRPC
		}
		m := Message{Kind: KindNotJSON, Dir: dir, Profile: p, Frame: body, Size: info.Size}
		m.add(CodeBadHeader, Error, info.Bad)
		if dir == H2S {
			// A frame of kind not-json: a strict server owes -32700,
			// as for any unreadable input.
			m.answer(ParseError, "Parse error")
		}
		return m
	}
	if int64(len(body)) < info.BodyLen {
		return ClassifyPrefix(body, info.BodyLen, dir, p)
	}
	return Classify(body, dir, p)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "one " + noun
	}
	return itoa(n) + " " + noun + "s"
}
