package sessions

import (
	"hash/maphash"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// Which call a request is. Replay answers a request only from a recorded
// request of the same call, and diff pairs the calls of two sessions the
// same way: the same method and the same identity, then, among those,
// the closest params. A call's identity is what it names:
//
//	tools/call, prompts/get                  params.name
//	resources/read, resources/(un)subscribe  params.uri
//	completion/complete                      params.ref
//	textDocument/*                           params.textDocument.uri, and params.position when it has one
//
// Other methods are named by the method alone. Of some calls the answer
// is computed from arguments: tools/call's and prompts/get's arguments,
// completion/complete's argument and context. Those are the call's
// inputs: a recorded answer to other inputs answers another call, so
// replay answers only from equal inputs, and diff pairs calls whose inputs
// changed and says so. A path the user leaves out (--ignore) counts in
// neither.

// A callID is a request's call, hashed: equal calls hash equal.
type callID struct {
	key    uint64 // the method and its identity
	inputs uint64 // the inputs; that of nothing when the method has none
}

// An identityRule names the members that say which call a request of
// one method is, as paths from the message's root.
type identityRule struct {
	by            string // what names the call: "name", "uri", "ref", "document" ("": the method alone)
	parts, inputs [][]string
}

var (
	byName        = identityRule{by: "name", parts: [][]string{{"params", "name"}}, inputs: [][]string{{"params", "arguments"}}}
	byURI         = identityRule{by: "uri", parts: [][]string{{"params", "uri"}}}
	byRef         = identityRule{by: "ref", parts: [][]string{{"params", "ref"}}, inputs: [][]string{{"params", "argument"}, {"params", "context"}}}
	byDocument    = identityRule{by: "document", parts: [][]string{{"params", "textDocument", "uri"}, {"params", "position"}}}
	byMethodAlone = identityRule{}
)

func identityRuleOf(method string) identityRule {
	switch method {
	case "tools/call", "prompts/get":
		return byName
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return byURI
	case "completion/complete":
		return byRef
	}
	if strings.HasPrefix(method, "textDocument/") {
		return byDocument
	}
	return byMethodAlone
}

// hasIdentity reports whether requests of method are told apart by more
// than the method.
func hasIdentity(method string) bool { return len(identityRuleOf(method).parts) > 0 }

// identify returns the call of the request frame, whose method is method
// (the one classify read).
func (ig Ignore) identify(method string, frame []byte) callID {
	rule := identityRuleOf(method)
	hs := hasher{ig: ig}
	id := callID{key: mix(maphash.String(hashSeed, method))}
	for _, p := range rule.parts {
		id.key = mix(id.key*31 + hs.at(frame, p))
	}
	for _, p := range rule.inputs {
		id.inputs = mix(id.inputs*31 + hs.at(frame, p))
	}
	return id
}

// tagAbsent is the hash of a member that is not there, or left out.
const tagAbsent = 0x5bd1e995

// at hashes the value at path in msg (see Ignore), tagAbsent when there
// is none or the user left it out.
func (hs *hasher) at(msg []byte, path []string) uint64 {
	v := msg
	for _, k := range path {
		if v = classify.Member(v, k); v == nil {
			return tagAbsent
		}
	}
	if hs.ig.skips(path) {
		return tagAbsent
	}
	hs.path = append(hs.path[:0], path...)
	h, _, ok := hs.value(v, 0, len(path))
	if !ok {
		return tagAbsent
	}
	return h
}

// identityPaths reports whether the JSON pointer p is in, or holds, one
// of the members that name a call of method (part), or one of its inputs.
func identityPaths(method, p string) (part, input bool) {
	rule := identityRuleOf(method)
	in := func(paths [][]string) bool {
		for _, path := range paths {
			if q := pointer(path); p == q || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
				return true
			}
		}
		return false
	}
	return in(rule.parts), in(rule.inputs)
}

// callName says, for people, what a request of method calls: a tool's,
// prompt's or resource's name, a completion's reference, a document and
// a position in it; "" for a method named by itself alone. It is cut to
// 200 bytes.
func callName(method string, frame []byte) string {
	params := classify.Member(frame, "params")
	str := func(v []byte) string {
		s, _ := classify.StringValue(v)
		return s
	}
	var name string
	switch identityRuleOf(method).by {
	case "name":
		name = str(classify.Member(params, "name"))
	case "uri":
		name = str(classify.Member(params, "uri"))
	case "ref":
		ref := classify.Member(params, "ref")
		name = strings.TrimSpace(str(classify.Member(ref, "type")) + " " + str(classify.Member(ref, "name")) + str(classify.Member(ref, "uri")))
	case "document":
		name = str(classify.Member(classify.Member(params, "textDocument"), "uri"))
		if pos := classify.Member(params, "position"); pos != nil {
			name += " " + compactOrText(classify.Member(pos, "line")) + ":" + compactOrText(classify.Member(pos, "character"))
		}
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}
