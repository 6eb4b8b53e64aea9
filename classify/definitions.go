package classify

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// A DefinitionKind is a kind of what an MCP server lists for a host to
// trust: its tools, prompts and resource templates.
type DefinitionKind uint8

const (
	DefTool DefinitionKind = iota
	DefPrompt
	DefTemplate
	definitionKinds
)

// definitionLists says, for each kind, the list method, the result's
// member that holds the list, the member that names an item, the noun
// that names it to the user, and the parts of a definition that count
// when two are compared: what a model reads of it and what its calls
// must be (not _meta, icons or the name itself).
var definitionLists = [definitionKinds]struct {
	method, member, key, noun string
	fields                    []string
}{
	DefTool:     {"tools/list", "tools", "name", "tool", []string{"title", "description", "inputSchema", "outputSchema", "annotations"}},
	DefPrompt:   {"prompts/list", "prompts", "name", "prompt", []string{"title", "description", "arguments"}},
	DefTemplate: {"resources/templates/list", "resourceTemplates", "uriTemplate", "resource template", []string{"name", "title", "description", "mimeType", "annotations"}},
}

// Method is the list method that lists definitions of kind k.
func (k DefinitionKind) Method() string { return definitionLists[k].method }

// Member is the member of a list result that holds the list of kind k:
// "tools", "prompts", "resourceTemplates".
func (k DefinitionKind) Member() string { return definitionLists[k].member }

// Noun names one definition of kind k: "tool", "prompt", "resource template".
func (k DefinitionKind) Noun() string { return definitionLists[k].noun }

// Fields are the parts of a definition of kind k that comparing two
// definitions looks at.
func (k DefinitionKind) Fields() []string { return definitionLists[k].fields }

// DefinitionKindOf is the kind a list method lists, if it is one.
func DefinitionKindOf(method string) (DefinitionKind, bool) {
	for k := range definitionKinds {
		if definitionLists[k].method == method {
			return k, true
		}
	}
	return 0, false
}

// Definitions are the definitions of one kind that a complete list gave,
// by name (a resource template's by its uriTemplate), each compact JSON.
type Definitions map[string]json.RawMessage

// AddPage adds the definitions of kind k in result, one page of a list
// result, to d (made when nil), each compacted; it reports whether result
// held the list at all.
func (d *Definitions) AddPage(k DefinitionKind, result []byte) bool {
	list := Member(result, definitionLists[k].member)
	if list == nil || list[0] != '[' {
		return false
	}
	if *d == nil {
		*d = Definitions{}
	}
	eachElement(list, func(def []byte) bool {
		name, ok := StringValue(Member(def, definitionLists[k].key))
		if !ok {
			return true
		}
		var b bytes.Buffer
		if json.Compact(&b, def) == nil {
			(*d)[name] = b.Bytes()
		}
		return true
	})
	return true
}

// A Baseline is what a user accepted as a server's definitions: the
// lists it trusts, compared with what the server lists later (the rule
// tool-drift). A kind whose list is nil was never listed when the
// baseline was accepted, and is not compared.
type Baseline struct {
	Server   string // the server's name in its serverInfo
	Accepted string // when it was accepted, as the user reads it
	Lists    [definitionKinds]Definitions
}

// A DefinitionChange is one way two lists of definitions differ: an item
// added or removed, or the Fields (Kind.Fields) in which it changed.
type DefinitionChange struct {
	Kind           DefinitionKind
	Name           string
	Added, Removed bool
	Fields         []string
	Was, Now       json.RawMessage // the definitions compared (nil for the side that lacks it)
}

// CompareDefinitions is how every part of rpctap compares what a server
// lists (a list with an earlier one of the same session, with a baseline,
// one session's with another's): the items of kind k that now adds,
// removes or changes against was, by name, a change being a difference
// in one of k's Fields compared as JSON values (the order of members and
// spacing do not count). Changes are in the order of their names.
func CompareDefinitions(k DefinitionKind, was, now Definitions) []DefinitionChange {
	names := make([]string, 0, len(now))
	for name := range now {
		names = append(names, name)
	}
	for name := range was {
		if _, ok := now[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []DefinitionChange
	for _, name := range names {
		a, inWas := was[name]
		b, inNow := now[name]
		switch {
		case !inWas:
			out = append(out, DefinitionChange{Kind: k, Name: name, Added: true, Now: b})
		case !inNow:
			out = append(out, DefinitionChange{Kind: k, Name: name, Removed: true, Was: a})
		default:
			if fields := changedFields(k, a, b); len(fields) > 0 {
				out = append(out, DefinitionChange{Kind: k, Name: name, Fields: fields, Was: a, Now: b})
			}
		}
	}
	return out
}

// changedFields names the fields of kind k whose values differ between
// the definitions a and b. Definitions equal byte for byte cost no
// decoding (most lists are listed again unchanged).
func changedFields(k DefinitionKind, a, b []byte) []string {
	if bytes.Equal(a, b) {
		return nil
	}
	var da, db map[string]any
	if json.Unmarshal(a, &da) != nil || json.Unmarshal(b, &db) != nil {
		return nil
	}
	var changed []string
	for _, f := range definitionLists[k].fields {
		if !reflect.DeepEqual(da[f], db[f]) {
			changed = append(changed, f)
		}
	}
	return changed
}

// said is what names the change among those reported: its kind, item,
// and how it changed.
func (c DefinitionChange) said() string {
	how := "~"
	switch {
	case c.Added:
		how = "+"
	case c.Removed:
		how = "-"
	}
	return string(rune('0'+c.Kind)) + how + c.Name + "\x00" + strings.Join(c.Fields, ",")
}

// againstBaselineText is the tool-drift finding's text for a change
// against baseline b.
func (c DefinitionChange) againstBaselineText(b *Baseline) string {
	what := c.Kind.Noun() + " " + quoteName(c.Name)
	since := "the baseline accepted for server " + quoteName(b.Server)
	if b.Accepted != "" {
		since += " on " + EscapeString(b.Accepted, 40)
	}
	var text string
	switch {
	case c.Added:
		text = capitalize(what) + " is listed, and " + since + " has no such " + c.Kind.Noun() + ": a host that trusts the baseline never approved it."
	case c.Removed:
		text = capitalize(what) + " of " + since + " is no longer listed."
	default:
		text = capitalize(what) + " changed its " + strings.Join(c.Fields, ", ") + " since " + since + ": a host that approved it saw another definition (MCP security: clients should treat tool definitions as untrusted and show changes)."
	}
	return text + " rpctap baseline show " + shellWord(b.Server) + " shows what was accepted; rpctap baseline accept with this session trusts what it lists."
}

// shellWord is s as one word a shell reads back as s, escaped for the
// terminal.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./@:+=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(EscapeString(s, 80), "'", `'\''`) + "'"
}
