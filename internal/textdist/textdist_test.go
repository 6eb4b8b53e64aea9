package textdist

import (
	"strings"
	"testing"
)

func TestDistanceCountsEditsAndAdjacentSwapsAndCapsLongNames(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"method", "method", 0},
		{"mehtod", "method", 1}, // a swap of adjacent bytes is one edit
		{"methd", "method", 1},
		{"tools/list", "tools/call", 4},
		{"", "abc", 3},
		{strings.Repeat("x", Max+1), "x", Max},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
