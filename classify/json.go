package classify

// AppendJSON appends the message as one JSON object, the shape `rpctap
// classify` prints: kind, id (exactly as on the wire, when the frame has an
// id member), method (when it is a string), findings, answer (when one is
// due) and members (for a batch).
func (m *Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = appendJSONString(dst, m.Kind.String())
	if m.HasID() {
		dst = append(dst, `,"id":`...)
		dst = append(dst, m.ID().Raw...)
	}
	if m.HasMethod() {
		dst = append(dst, `,"method":`...)
		dst = appendJSONString(dst, m.Method())
	}
	dst = append(dst, `,"findings":`...)
	dst = AppendFindingsJSON(dst, m.Findings)
	if m.Answer != nil {
		dst = append(dst, `,"answer":`...)
		dst = m.Answer.AppendJSON(dst)
	}
	if m.Kind == KindBatch {
		dst = append(dst, `,"members":[`...)
		for i := range m.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = m.Members[i].AppendJSON(dst)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// AppendFindingsJSON appends findings as a JSON array of
// {"code","severity","message"} objects.
func AppendFindingsJSON(dst []byte, fs []Finding) []byte {
	dst = append(dst, '[')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = f.AppendJSON(dst)
	}
	return append(dst, ']')
}

// AppendJSON appends the finding as {"code","severity","message"}.
func (f Finding) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = appendJSONString(dst, f.Code.String())
	dst = append(dst, `,"severity":`...)
	dst = appendJSONString(dst, f.Severity.String())
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, f.Message)
	return append(dst, '}')
}

// AppendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }
