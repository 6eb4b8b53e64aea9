package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"
)

// The sizes ls writes read as those of the UI's picker.
func TestLsWritesSizesAsTheUIDoes(t *testing.T) {
	var b strings.Builder
	writeLsText(&b, nil, []sessions.SessionFile{{Path: "/s/a.jsonl", Size: 123456, Modified: time.Now()}})
	if want := tui.FormatSize(123456); !strings.Contains(b.String(), "  "+want+"  ") {
		t.Errorf("ls does not write the size as %q:\n%s", want, b.String())
	}
}

// ls counts a live tap's errors of the peers; those of frames the user
// injected or edited are shown apart.
func TestLsShowsTheUsersErrorsApart(t *testing.T) {
	var b strings.Builder
	writeLsText(&b, []tap.Info{{Name: "srv", PID: 7, Stats: tap.Stats{Frames: 9, Errors: 1, UserErrors: 2}}}, nil)
	if !strings.Contains(b.String(), "  1 (+2 yours)  ") {
		t.Errorf("ls does not show the peers' errors with the user's apart:\n%s", b.String())
	}
}
