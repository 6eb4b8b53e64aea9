package classify

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

// NoMessage is the Message of a frame that stands for what an HTTP
// transport did where no JSON-RPC message crossed (a 202, an error
// status, an empty body): kind KindHTTP, with no findings, which the
// tracker passes over.
func NoMessage(dir Direction, p Profile) Message {
	if p == Auto {
		p = JSONRPC
	}
	return Message{Kind: KindHTTP, Dir: dir, Profile: p}
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
