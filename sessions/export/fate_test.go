package export

import (
	"strings"
	"testing"
)

// fateSession has a frame of every fate: a call the user dropped, one
// answered in its receiver's place, one edited (with its original), one
// whose hold time ran out, an injected request with its captured answer,
// an injected frame a strict server refuses (and the server's error that
// answers it), and at the end a call still owed when the server exits.
// Requests time out after 1 s.
const fateSession = "../../testdata/sessions/fates/user-actions.jsonl"

// Every export says what became of each frame in the tap, from the one
// reading of the record (Fate): injected, captured, held, edited with
// the original, dropped, answered in place, expired; Mermaid draws what
// the user wrote from rpctap, and what went no further than the tap to
// it, with a cross where the receiver never read it.
func TestEveryExportSaysWhatBecameOfEachFrame(t *testing.T) {
	path := fateSession
	want := map[Format][]string{
		FormatMarkdown: {"injected by the user", "captured: kept from the side", "dropped by the user: its receiver never read it",
			"answered in place by the user", "forwarded as the user edited it", "expired: its hold time ran out", "The original, as it came in", "before the edit",
			"0 errors, 1 warning, 0 notes (records by their worst); apart, 2 records about frames the user injected or edited"},
		FormatHTML: {"injected by the user", "captured: kept from the side", "dropped by the user: its receiver never read it",
			"answered in place by the user", "forwarded as the user edited it", "expired: its hold time ran out", "the original, as it came in", "before the edit",
			"apart, 2 records about frames the user injected or edited"},
		FormatMermaid: {"participant R as rpctap", "H-xR: 5 request tools/call id 1 #91;held, dropped 1.5s#93;",
			"H-xR: 6 request tools/call id 2 #91;held, answered-in-place", "R-->>H: 7 result tools/call id 2", "#91;injected#93;",
			"R->>S: 12 request ping", "S-->>R: 13 result ping", "#91;captured#93;", "H->>S: 8 request tools/call id 3 #91;edited, held",
			"before the edit", "#91;held, expired 1m0s#93;"},
		FormatJSON: {`"words":["held","dropped"]`, `"status":"dropped"`, `"words":["held","answered-in-place"]`, `"words":["injected"]`,
			`"words":["captured"]`, `"words":["edited","held"]`, `"original":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"message":"before the edit"}}`,
			`"words":["held","expired"]`},
		FormatHAR: {`"request_fate":{"words":["held","dropped"]`, `no answer: held 1.5s, then dropped by the user`, `"response_fate":{"words":["injected"]`,
			`"response_fate":{"words":["captured"]`, `"request_fate":{"words":["edited","held"]`, `before the edit`},
		FormatOTLP: {`"key":"rpctap.request.fate","value":{"stringValue":"held dropped"}`, `"stringValue":"held answered-in-place"`,
			`"key":"rpctap.response.fate","value":{"stringValue":"injected"}`, `"stringValue":"captured"`, `"stringValue":"edited held"`,
			`"stringValue":"held expired"`},
	}
	for _, f := range allFormats() {
		got, _ := exportString(t, path, Options{Format: f})
		for _, w := range want[f] {
			if !strings.Contains(got, w) {
				t.Errorf("the %s export lacks %q:\n%s", f, w, got)
			}
		}
		if f == FormatMermaid && strings.Contains(got, "H->>S: 5 ") {
			t.Errorf("Mermaid draws the dropped call as delivered:\n%s", got)
		}
	}
}
