package sessions_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpctap/rpctap/sessions"
)

// benchHTTP is the http object of an SSE event's frame as rpctap http
// records it from server-everything: the longest of the usual ones.
var benchHTTP = []byte(`{"exchange":1234,"method":"POST","path":"/mcp","status":200,"content_type":"text/event-stream","event_id":"413d2695-15f6-4328-b27b-aa4c89f8b9df","headers":{"Mcp-Session-Id":"8b1143d9-c590-4483-a530-629018d9c7d7","MCP-Protocol-Version":"2025-11-25"}}`)

// jsonSummary is HTTPSummary as it was before it read the object in one
// pass: encoding/json into a struct, then the words joined. It is the
// reference .ci/bench/http-summary measures against.
func jsonSummary(raw []byte) string {
	var h struct {
		Method      string `json:"method"`
		Path        string `json:"path"`
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
		EventID     string `json:"event_id"`
		Error       string `json:"error"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil {
		return ""
	}
	parts := []string{h.Method, h.Path}
	if h.Status != 0 {
		parts = append(parts, strconv.Itoa(h.Status))
	}
	if h.ContentType != "" {
		parts = append(parts, h.ContentType)
	}
	if h.EventID != "" {
		parts = append(parts, "id="+h.EventID)
	}
	s := strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " ")
	if h.Error != "" {
		s += ": " + h.Error
	}
	return s
}

func TestHTTPSummarySaysWhatTheEncodingJSONSummaryDid(t *testing.T) {
	for _, raw := range [][]byte{benchHTTP, []byte(`{"exchange":2,"method":"POST","path":"/a\"b","status":502,"error":"why \u202e"}`), []byte(`{}`), nil, []byte(`[1]`)} {
		if got, want := sessions.HTTPSummary(raw), jsonSummary(raw); got != want {
			t.Errorf("HTTPSummary(%s) = %q, encoding/json's said %q", raw, got, want)
		}
	}
}

// BenchmarkHTTPSummary is the cost of the http=… words of a tail line:
// onepass is HTTPSummary, encodingjson the reference.
func BenchmarkHTTPSummary(b *testing.B) {
	b.Run("onepass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = sessions.HTTPSummary(benchHTTP)
		}
	})
	b.Run("encodingjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = jsonSummary(benchHTTP)
		}
	})
}

// BenchmarkHTTPLabel is what indexing a frame of kind http adds: its
// label, in place of a method.
func BenchmarkHTTPLabel(b *testing.B) {
	raw := []byte(`{"exchange":1234,"method":"POST","path":"/mcp","status":202,"headers":{"Mcp-Session-Id":"8b1143d9-c590-4483-a530-629018d9c7d7"}}`)
	b.ReportAllocs()
	for b.Loop() {
		_ = sessions.HTTPLabel(raw)
	}
}

// FuzzHTTPSummary: any bytes are read without a panic, and an object
// rpctap writes (its members well typed) is summed up as encoding/json
// reads it.
func FuzzHTTPSummary(f *testing.F) {
	f.Add(benchHTTP)
	f.Add([]byte(`{"exchange":2,"method":"POST","path":"/a\"b\\","status":502,"error":"why \u202e","headers":{"A":"\"}"}}`))
	f.Add([]byte(`{"x":[{"}":"]"}],"method":"GET"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := sessions.HTTPSummary(raw)
		sessions.HTTPLabel(raw)
		sessions.ParseHTTP(raw)
		var m map[string]json.RawMessage
		if !utf8.Valid(raw) || json.Unmarshal(raw, &m) != nil || len(m) == 0 {
			return // rpctap writes valid UTF-8 (encoding/json would read U+FFFD where this keeps the bytes)
		}
		for k, v := range m {
			if strings.ToLower(k) != k {
				return // encoding/json takes "Method" for "method"; rpctap writes neither
			}
			var dst any
			switch k {
			case "method", "path", "content_type", "event_id", "error":
				dst = new(string)
			case "status":
				dst = new(int32)
			case "exchange", "retry_ms":
				dst = new(int64)
			case "headers":
				dst = new(map[string]string)
			default:
				continue
			}
			if json.Unmarshal(v, dst) != nil {
				return // not as rpctap writes it
			}
		}
		if want := jsonSummary(raw); got != want {
			t.Errorf("HTTPSummary(%q) = %q, encoding/json's %q", raw, got, want)
		}
	})
}
