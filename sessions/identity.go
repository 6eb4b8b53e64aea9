package sessions

import (
	"hash/maphash"
	"slices"
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

// An identity is what names a request's call: its callID, and the raw
// values of its rule's parts (nil when absent), for callNameOf.
type identity struct {
	id    callID
	parts [][]byte
}

// tagAbsent is the hash of a member that is not there, or left out.
const tagAbsent = 0x5bd1e995

// emptyObject is the hash of {}.
var emptyObject = mix(tagObject)

// hashCall returns the structural hash of a request frame (as Hash does)
// and its identity, in one pass over it: the hasher keeps the hashes and
// the raw values of the members the rule names as it meets them. A
// member the user left out (it or a member it is in) is absent.
func (hs *hasher) hashCall(method string, frame []byte) (h uint64, idn identity, ok bool) {
	rule := identityRuleOf(method)
	hs.want = append(append(hs.want[:0], rule.parts...), rule.inputs...)
	hs.got = hs.got[:0]
	for range hs.want {
		hs.got = append(hs.got, captured{hash: tagAbsent})
	}
	h, ok = hs.hash(frame)
	for k, w := range hs.want {
		for n := 1; n <= len(w); n++ {
			if hs.ig.skips(w[:n]) {
				hs.got[k] = captured{hash: tagAbsent}
				break
			}
		}
	}
	idn.id.key = mix(maphash.String(hashSeed, method))
	for k := range rule.parts {
		idn.id.key = mix(idn.id.key*31 + hs.got[k].hash)
		idn.parts = append(idn.parts, hs.got[k].raw)
	}
	for k := range rule.inputs {
		in := hs.got[len(rule.parts)+k]
		if in.raw == nil || string(in.raw) == "null" {
			in.hash = emptyObject // no arguments are arguments {}
		}
		idn.id.inputs = mix(idn.id.inputs*31 + in.hash)
	}
	hs.want = hs.want[:0]
	return h, idn, ok
}

// maxWanted is the length of the longest path an identity rule names.
const maxWanted = 3

// A captured member: its hash and its raw value.
type captured struct {
	hash uint64
	raw  []byte
}

// capture keeps the hash and the raw value of the member at hs.path when
// it is one hashCall wants.
func (hs *hasher) capture(v uint64, raw []byte) {
	for k, w := range hs.want {
		if slices.Equal(w, hs.path) {
			hs.got[k] = captured{hash: v, raw: raw}
		}
	}
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
	rule := identityRuleOf(method)
	parts := make([][]byte, len(rule.parts))
	for k, path := range rule.parts {
		v := frame
		for _, m := range path {
			v = classify.Member(v, m)
		}
		parts[k] = v
	}
	return callNameOf(method, parts)
}

// callNameOf is callName from the raw values of the parts of method's
// identity rule.
func callNameOf(method string, parts [][]byte) string {
	str := func(v []byte) string {
		s, _ := classify.StringValue(v)
		return s
	}
	var name string
	switch identityRuleOf(method).by {
	case "name", "uri":
		name = str(parts[0])
	case "ref":
		ref := parts[0]
		name = strings.TrimSpace(str(classify.Member(ref, "type")) + " " + str(classify.Member(ref, "name")) + str(classify.Member(ref, "uri")))
	case "document":
		name = str(parts[0])
		if pos := parts[1]; pos != nil {
			name += " " + compactOrText(classify.Member(pos, "line")) + ":" + compactOrText(classify.Member(pos, "character"))
		}
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}
