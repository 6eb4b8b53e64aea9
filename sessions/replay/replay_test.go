package replay

import "testing"

func TestWithIDChangesOnlyTheIdBytes(t *testing.T) {
	frame := `{"result":{"id":7,"text":"id"} , "jsonrpc":"2.0",  "id" : 5 }`
	got := string(withID([]byte(frame), []byte(`"host-1"`)))
	if want := `{"result":{"id":7,"text":"id"} , "jsonrpc":"2.0",  "id" : "host-1" }`; got != want {
		t.Errorf("withID:\n got  %s\n want %s", got, want)
	}
	if got := string(withID([]byte(`{"result":{}}`), []byte("1"))); got != `{"result":{}}` {
		t.Errorf("a frame with no id got one: %s", got)
	}
}
