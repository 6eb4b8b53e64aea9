package sessions_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/check"
)

// v1File is a format version 1 session file with a record of every kind
// and every optional field. It is kept as it was written: a reader of any
// later version must open it (a migration test). Never regenerate it.
const v1File = "../testdata/sessions/v1/every-record.jsonl"

// A v1 file kept in testdata always opens, in every reader: the Reader,
// check and the index the UI opens.
func TestAVersion1FileKeptInTestdataAlwaysOpens(t *testing.T) {
	f, err := os.Open(v1File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	h, ok := rd.Header()
	if !ok || h.Version != 1 || h.ID != "0123456789abcdef" || h.Name != "server-everything" || h.ParseLimit != 1<<20 || len(rd.HeaderFaults()) != 0 {
		t.Fatalf("header %+v (%v), faults %q", h, ok, rd.HeaderFaults())
	}
	var got []string
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		s := ev.Kind
		if ev.IsFrame() {
			s = ev.Dir.String() + " " + ev.Src
			if ev.Captured {
				s += " captured"
			}
			if ev.Redacted {
				s += " redacted"
			}
			if ev.EOF {
				s += " eof"
			}
			if ev.Header != nil {
				s += " header"
			}
			if strings.Contains(string(ev.Frame), "\xff") {
				s += " b64"
			}
		}
		switch ev.Kind {
		case sessions.EventGap:
			s += " " + ev.Dir.String()
		case sessions.EventNote:
			s += " " + ev.Text
		case sessions.EventExit:
			if ev.Code != nil && *ev.Code == 0 {
				s += " 0"
			}
		}
		got = append(got, s)
	}
	want := "start|h2s wire|s2h wire|err wire|h2s wire|h2s inject|s2h wire captured|h2s edit redacted|s2h wire b64|s2h wire|s2h wire header|note framing: lsp|gap s2h|h2s wire eof|exit 0"
	if strings.Join(got, "|") != want || rd.Skipped() != 0 {
		t.Errorf("records:\n%s\nwant:\n%s\n(skipped %d)", strings.Join(got, "|"), want, rd.Skipped())
	}

	b, _ := os.ReadFile(v1File)
	rep, err := check.Run(strings.NewReader(string(b)), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var findings []string
	for _, f := range rep.Findings {
		findings = append(findings, f.Code.String())
	}
	if rep.Frames != 10 || len(rep.HeaderFaults) != 0 || strings.Join(findings, " ") != "redacted capability-not-advertised not-json frames-missing capability-not-advertised unanswered-at-end" || rep.Profile != classify.MCP {
		t.Errorf("check: %d frames, faults %q, findings %q, profile %s", rep.Frames, rep.HeaderFaults, findings, rep.Profile)
	}

	x, err := sessions.IndexFile(v1File, sessions.IndexOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != 15 {
		t.Errorf("the index has %d entries, want the 15 records", x.Len())
	}
}

// A file from a newer format version is refused by every reader with an
// error that says so and what to do, rather than read as if it were this
// version.
func TestAFileOfANewerFormatVersionIsRefusedSayingToUpdateRpctap(t *testing.T) {
	b, err := os.ReadFile(v1File)
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(b), `"version":1`, `"version":2`, 1)
	path := filepath.Join(t.TempDir(), "v2.jsonl")
	os.WriteFile(path, []byte(newer), 0o600)
	says := func(what string, err error) {
		t.Helper()
		var ve *sessions.NewerVersionError
		if !errors.As(err, &ve) || ve.Version != 2 || !strings.Contains(err.Error(), "format version 2, from a newer rpctap") || !strings.HasPrefix(strings.TrimPrefix(err.Error(), "reading the session file: "), "update rpctap") {
			t.Errorf("%s: %v, want the newer-version error", what, err)
		}
	}
	rd := sessions.NewReader(strings.NewReader(newer))
	if h, ok := rd.Header(); !ok || h.Version != 2 {
		t.Errorf("the header of a newer file is not read: %+v", h)
	}
	for range 2 {
		_, err := rd.Next()
		says("Next", err)
	}
	_, err = check.Run(strings.NewReader(newer), check.Options{})
	says("Check", err)
	_, err = sessions.IndexFile(path, sessions.IndexOptions{}, nil)
	says("IndexFile", err)
}
