package classify

import "strings"

// This file holds the envelope rules that judge a parsed object: its kind,
// the findings on its jsonrpc, id, method and params members, and those on
// an error response's text (a leaky error shows a stack trace or an absolute
// path).

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
