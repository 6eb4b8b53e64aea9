package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tui"
)

// issue 10 point 20: ls writes sizes as the UI's picker does.
func TestLsWritesSizesAsTheUIDoes(t *testing.T) {
	var b strings.Builder
	writeLsText(&b, nil, []sessions.SessionFile{{Path: "/s/a.jsonl", Size: 123456, Modified: time.Now()}})
	if want := tui.FormatSize(123456); !strings.Contains(b.String(), "  "+want+"  ") {
		t.Errorf("ls does not write the size as %q:\n%s", want, b.String())
	}
}
