package sessions

import (
	"encoding/json"
	"io"

	"github.com/rpctap/rpctap/classify"
)

// PrintJSON writes v on w as one JSON document and a newline (indented
// with indent), through classify.AppendSafeJSON: every JSON rpctap prints
// goes this way, so that it is valid UTF-8 with control, bidi and format
// characters written as \u escapes, and jq on a terminal is as safe as
// the text views.
func PrintJSON(w io.Writer, v any, indent bool) error {
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	return PrintRawJSON(w, b)
}

// PrintRawJSON writes JSON text on w, and a newline, as PrintJSON does.
func PrintRawJSON(w io.Writer, js []byte) error {
	out := classify.AppendSafeJSON(make([]byte, 0, len(js)+16), js)
	_, err := w.Write(append(out, '\n'))
	return err
}
