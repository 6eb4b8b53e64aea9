package sessions

import (
	"encoding/json"
	"strings"
	"testing"
)

// batchSession holds a batch of requests a and b (and notification n)
// answered by one batch: a's member is an error, b's a result.
const batchSession = "../testdata/export/batch.jsonl"

// A batch answer's error counts against the member it answers, not
// against every member of the batch, in each export that sums methods up
// or lists pairs; the batch's notification counts as one.
func TestBatchAnswerErrorsCountAgainstTheirMemberOnly(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		got, _ := exportString(t, batchSession, ExportOptions{Format: FormatJSON})
		var doc struct {
			Methods []struct {
				Method                                    string
				Requests, Notifications, Answered, Errors int
			}
			Pairs []struct {
				Request struct{ Method string }
				Status  string
			}
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string][4]int{"a": {1, 0, 1, 1}, "b": {1, 0, 1, 0}, "n": {0, 1, 0, 0}}
		if len(doc.Methods) != len(want) {
			t.Errorf("methods %+v, want a, b and n", doc.Methods)
		}
		for _, m := range doc.Methods {
			if w, ok := want[m.Method]; !ok || w != [4]int{m.Requests, m.Notifications, m.Answered, m.Errors} {
				t.Errorf("method %s: %+v, want requests, notifications, answered, errors %v", m.Method, m, w)
			}
		}
		for _, p := range doc.Pairs {
			if want := map[string]string{"a": "error", "b": "ok"}[p.Request.Method]; p.Status != want {
				t.Errorf("pair %s: status %s, want %s", p.Request.Method, p.Status, want)
			}
		}
	})
	t.Run("markdown", func(t *testing.T) {
		got, _ := exportString(t, batchSession, ExportOptions{Format: FormatMarkdown})
		for _, row := range []string{"| `a` | 1 | 0 | 1 | 1 |", "| `b` | 1 | 0 | 1 | 0 |", "| `n` | 0 | 1 | 0 | 0 |"} {
			if !strings.Contains(got, row) {
				t.Errorf("no row %q in the methods:\n%s", row, got)
			}
		}
	})
	t.Run("html", func(t *testing.T) {
		got, _ := exportString(t, batchSession, ExportOptions{Format: FormatHTML})
		n := `<td class="n">`
		for _, row := range []string{
			"<tr><td><code>a</code></td>" + n + "1</td>" + n + "0</td>" + n + "1</td>" + n + "1</td>",
			"<tr><td><code>b</code></td>" + n + "1</td>" + n + "0</td>" + n + "1</td>" + n + "0</td>",
			"<tr><td><code>n</code></td>" + n + "0</td>" + n + "1</td>",
			"<td><code>a</code></td><td><code>1</code></td><td>error</td>",
			"<td><code>b</code></td><td><code>2</code></td><td>ok</td>",
		} {
			if !strings.Contains(got, row) {
				t.Errorf("no %q in the page", row)
			}
		}
	})
	t.Run("har", func(t *testing.T) {
		got, _ := exportString(t, batchSession, ExportOptions{Format: FormatHAR})
		var doc struct {
			Log struct {
				Entries []struct {
					Request  struct{ URL string }
					Response struct{ Status int }
				}
			}
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Log.Entries) != 2 {
			t.Fatalf("%d entries, want 2", len(doc.Log.Entries))
		}
		for _, e := range doc.Log.Entries {
			want := map[string]int{"jsonrpc://server/a": 500, "jsonrpc://server/b": 200}[e.Request.URL]
			if e.Response.Status != want {
				t.Errorf("%s: status %d, want %d", e.Request.URL, e.Response.Status, want)
			}
		}
	})
	t.Run("otlp", func(t *testing.T) {
		got, _ := exportString(t, batchSession, ExportOptions{Format: FormatOTLP})
		var doc struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct {
						Name   string
						Status *struct{ Code int }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		spans := doc.ResourceSpans[0].ScopeSpans[0].Spans
		if len(spans) != 2 {
			t.Fatalf("%d spans, want 2", len(spans))
		}
		for _, sp := range spans {
			if isErr := sp.Status != nil && sp.Status.Code == 2; isErr != (sp.Name == "a") {
				t.Errorf("span %s: status %+v, want an error on a alone", sp.Name, sp.Status)
			}
		}
	})
}
