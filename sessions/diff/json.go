package diff

import (
	"io"

	"github.com/rpctap/rpctap/sessions"
)

// A JSONDifference is a Difference in the JSON report.
type JSONDifference struct {
	Kind       string                `json:"kind"`
	Name       string                `json:"name"`
	LineA      int64                 `json:"line_a,omitempty"`
	LineB      int64                 `json:"line_b,omitempty"`
	Detail     string                `json:"detail,omitempty"`
	Changes    []sessions.ChangeJSON `json:"changes,omitempty"`
	Regression bool                  `json:"regression"`
}

// JSON is the document WriteJSON writes.
type JSON struct {
	A           string           `json:"a"`
	B           string           `json:"b"`
	FramesA     int              `json:"frames_a"`
	FramesB     int              `json:"frames_b"`
	Regressions int              `json:"regressions"`
	Differences []JSONDifference `json:"differences"`
}

// WriteJSON writes rep as rpctap diff's JSON report on the sessions a and
// b: one indented document, through sessions.PrintJSON.
func WriteJSON(w io.Writer, a, b string, rep *Report) {
	doc := JSON{A: a, B: b, FramesA: rep.FramesA, FramesB: rep.FramesB, Regressions: rep.Regressions(), Differences: []JSONDifference{}}
	for _, d := range rep.Differences {
		doc.Differences = append(doc.Differences, JSONDifference{Kind: d.Kind, Name: d.Name, LineA: d.LineA, LineB: d.LineB,
			Detail: d.Detail, Changes: sessions.ChangesJSON(d.Changes), Regression: d.Regression})
	}
	sessions.PrintJSON(w, doc, true)
}
