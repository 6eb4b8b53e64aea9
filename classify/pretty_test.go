package classify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// pretty cuts long strings, saying their size, and long containers,
// saying how many members it left out, and stays valid JSON.
func TestPrettyCutsLongValuesAndStaysJSON(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	in := fmt.Sprintf(`{"s":"%s","a":[1,2,3,4,5,6,7],"o":{"a":1,"b":2,"c":3,"d":4,"e":5},"e":"%s\u00e9%s"}`, long, strings.Repeat("x", 68), strings.Repeat("y", 40))
	got := string(AppendPretty(nil, []byte(in), Cuts{String: 70, Elements: 4}))
	if !json.Valid([]byte(got)) {
		t.Fatalf("not JSON:\n%s", got)
	}
	for _, want := range []string{"…(400 bytes in all)", `"… 3 more elements left out"`, `"… 1 more members left out": null`, `xxxxxxxxxx…(114 bytes in all)"`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	if strings.Contains(got, `\u00`+"…") || strings.Contains(got, `\u0`+"…") {
		t.Errorf("an escape was cut:\n%s", got)
	}
}
