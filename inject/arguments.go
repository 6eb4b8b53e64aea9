package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// This file holds the arguments of a tools/call or prompts/get: read from a
// tool's input schema or a prompt's argument list, with the values given and
// a placeholder of its type for each one not given.

func hasArg(args [][2]string, name string) bool {
	for _, a := range args {
		if a[0] == name {
			return true
		}
	}
	return false
}

// StringPlaceholder is the JSON value a template leaves in place of a
// string argument it was not given.
const StringPlaceholder = `"<string>"`

// promptArgs are a prompt's arguments: those given, and unless onlyGiven
// the others as StringPlaceholder (prompt arguments are strings).
func promptArgs(p Prompt, given [][2]string, onlyGiven bool) json.RawMessage {
	m := map[string]json.RawMessage{}
	var order []string
	for _, a := range p.Args {
		if !onlyGiven && !hasArg(given, a.Name) {
			m[a.Name] = json.RawMessage(StringPlaceholder)
			order = append(order, a.Name)
		}
	}
	for _, a := range given {
		if _, ok := m[a[0]]; !ok {
			order = append(order, a[0])
		}
		m[a[0]] = mustJSON(a[1])
	}
	return appendObject(nil, m, order)
}

// A property is one property of an object schema, in schema order.
type property struct {
	name   string
	schema json.RawMessage
}

// Arguments builds a tool's arguments object from its inputSchema: the
// properties it requires first (in its required order), then the others
// (in schema order), each with the value given in args or a placeholder
// of its type: "<string>", 0, false, [], {}, its default, its first enum
// value. With onlyGiven, optional properties not given are left out and
// a required one not given is an error that says what to add. A value
// given is read by its property's type: a string as it is; anything else
// as JSON (a number, true, an object...), and an argument the schema does
// not name as JSON when it reads as JSON, else as a string.
func Arguments(schema json.RawMessage, args [][2]string, onlyGiven bool) (json.RawMessage, error) {
	props := properties(schema)
	var required []string
	var sch struct {
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &sch)
	required = sch.Required
	isReq := map[string]bool{}
	for _, r := range required {
		isReq[r] = true
	}
	byName := map[string]json.RawMessage{}
	for _, p := range props {
		byName[p.name] = p.schema
	}
	// Order: required (their order), then the rest (schema order).
	var order []string
	for _, r := range required {
		order = append(order, r)
	}
	for _, p := range props {
		if !isReq[p.name] {
			order = append(order, p.name)
		}
	}
	values := map[string]json.RawMessage{}
	for _, a := range args {
		v, err := argValue(a[0], a[1], byName[a[0]])
		if err != nil {
			return nil, err
		}
		if _, ok := byName[a[0]]; !ok && !isReq[a[0]] {
			if _, dup := values[a[0]]; !dup {
				order = append(order, a[0])
			}
		}
		values[a[0]] = v
	}
	var missing []string
	out := map[string]json.RawMessage{}
	var kept []string
	for _, name := range order {
		if v, ok := values[name]; ok {
			out[name] = v
			kept = append(kept, name)
			continue
		}
		if onlyGiven {
			if isReq[name] {
				missing = append(missing, name)
			}
			continue
		}
		out[name] = placeholder(byName[name])
		kept = append(kept, name)
	}
	if len(missing) > 0 {
		var adds []string
		for _, m := range missing {
			adds = append(adds, "--arg "+classify.EscapeString(m, 40)+"=VALUE")
		}
		return nil, fmt.Errorf("it requires %s: add %s", strings.Join(missing, ", "), strings.Join(adds, " "))
	}
	return appendObject(nil, out, kept), nil
}

// properties reads an object schema's properties in the order written.
func properties(schema json.RawMessage) []property {
	raw := classify.Member(schema, "properties")
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []property
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, property{name, v})
	}
	return out
}

// schemaType is a schema's type, the first that is not null when it is a
// list.
func schemaType(schema json.RawMessage) string {
	var s struct {
		Type any `json:"type"`
	}
	json.Unmarshal(schema, &s)
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	return ""
}

// placeholder is a value of a schema's type that says what goes there.
func placeholder(schema json.RawMessage) json.RawMessage {
	if d := classify.Member(schema, "default"); d != nil {
		return d
	}
	if c := classify.Member(schema, "const"); c != nil {
		return c
	}
	var e struct {
		Enum []json.RawMessage `json:"enum"`
	}
	if json.Unmarshal(schema, &e) == nil && len(e.Enum) > 0 {
		return e.Enum[0]
	}
	switch schemaType(schema) {
	case "number", "integer":
		return json.RawMessage(`0`)
	case "boolean":
		return json.RawMessage(`false`)
	case "array":
		return json.RawMessage(`[]`)
	case "object":
		args, _ := Arguments(schema, nil, false)
		return args
	case "null":
		return json.RawMessage(`null`)
	}
	return json.RawMessage(StringPlaceholder)
}

// argValue reads an argument given as text by its schema's type.
func argValue(name, v string, schema json.RawMessage) (json.RawMessage, error) {
	t := schemaType(schema)
	switch {
	case t == "string":
		return mustJSON(v), nil
	case schema == nil:
		if json.Valid([]byte(v)) {
			return json.RawMessage(v), nil
		}
		return mustJSON(v), nil
	case t == "":
		if json.Valid([]byte(v)) {
			return json.RawMessage(v), nil
		}
		return mustJSON(v), nil
	}
	if !json.Valid([]byte(v)) {
		example := map[string]string{"number": "3", "integer": "3", "boolean": "true", "array": `'["a"]'`, "object": `'{"k":"v"}'`}[t]
		if example == "" {
			example = "JSON"
		}
		return nil, fmt.Errorf("the argument %s is of type %s, and %s is not JSON of it: write it as in --arg %s=%s",
			classify.EscapeString(name, 40), t, classify.EscapeString(v, 40), classify.EscapeString(name, 40), example)
	}
	return json.RawMessage(v), nil
}
