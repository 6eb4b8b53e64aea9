package sessions

import "encoding/json"

// A ChangeJSON is a Change as the diff and replay JSON reports write it:
// {path, item, recorded, now}, the values as JSON.
type ChangeJSON struct {
	Path string          `json:"path"`
	Item string          `json:"item,omitempty"` // the named item of a list Path is in: "name=echo"
	Was  json.RawMessage `json:"recorded,omitempty"`
	Now  json.RawMessage `json:"now,omitempty"`
}

// ChangesJSON gives changes as JSON values (a value that is not JSON, from
// a frame that was not, as a string).
func ChangesJSON(cs []Change) []ChangeJSON {
	var out []ChangeJSON
	for _, c := range cs {
		out = append(out, ChangeJSON{Path: c.Path, Item: c.Item, Was: rawOrString(c.Was), Now: rawOrString(c.Now)})
	}
	return out
}

// rawOrString is s as a JSON value: s itself when it is JSON, else s
// quoted as a string; nil for "".
func rawOrString(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	q, _ := json.Marshal(s)
	return q
}
