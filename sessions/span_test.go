package sessions

import (
	"testing"

	"github.com/rpctap/rpctap/classify"
)

func TestParseTraceparentTakesOnlyW3CTraceContext(t *testing.T) {
	for s, ok := range map[string]bool{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":      true,
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01":      false, // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01":      false, // zero trace
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":      false, // zero parent
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":      false, // version ff
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more": false, // version 00 has no more
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more": true,  // a later version may
		"junk": false,
	} {
		if _, _, _, got := ParseTraceparent(s); got != ok {
			t.Errorf("%s: %v, want %v", s, got, ok)
		}
	}
}

// A span names a string id by its JSON content, as the live exporter
// does: \/ is a slash and a surrogate pair is one character.
func TestSpanRequestIDIsTheStringsJSONContent(t *testing.T) {
	for raw, want := range map[string]string{
		`"a\/b"`:         "a/b",
		`"\ud83d\ude00"`: "\U0001F600",
		`"list-7"`:       "list-7",
		`7`:              "7",
	} {
		req := classify.Classify([]byte(`{"jsonrpc":"2.0","id":`+raw+`,"method":"tools/list"}`), classify.H2S, classify.MCP)
		s := PairSpan(SpanPair{SessionID: "s", Request: &req, Member: -1})
		got := ""
		for _, a := range s.Attributes {
			if a.Key == "rpc.jsonrpc.request_id" {
				got, _ = a.Value.(string)
			}
		}
		if got != want {
			t.Errorf("id %s: request_id %q, want %q", raw, got, want)
		}
	}
}
