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

// A CallID is a request's call, hashed: equal calls hash equal.
type CallID struct {
	Key    uint64 // the method and its identity
	Inputs uint64 // the inputs; that of nothing when the method has none
}

// An IdentityRule names the members that say which call a request of
// one method is, as paths from the message's root.
type IdentityRule struct {
	by            string // what names the call: "name", "uri", "ref", "document" ("": the method alone)
	Parts, Inputs [][]string
}

var (
	byName        = IdentityRule{by: "name", Parts: [][]string{{"params", "name"}}, Inputs: [][]string{{"params", "arguments"}}}
	byURI         = IdentityRule{by: "uri", Parts: [][]string{{"params", "uri"}}}
	byRef         = IdentityRule{by: "ref", Parts: [][]string{{"params", "ref"}}, Inputs: [][]string{{"params", "argument"}, {"params", "context"}}}
	byDocument    = IdentityRule{by: "document", Parts: [][]string{{"params", "textDocument", "uri"}, {"params", "position"}}}
	byMethodAlone = IdentityRule{}
)

// IdentityRuleOf returns the rule that names the calls of method.
func IdentityRuleOf(method string) IdentityRule {
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

// An Identity is what names a request's call: its CallID, and the raw
// values of its rule's parts (nil when absent), for CallNameOf.
type Identity struct {
	Call  CallID
	Parts [][]byte
}

// tagAbsent is the hash of a member that is not there, or left out.
const tagAbsent = 0x5bd1e995

// emptyObject is the hash of {}.
var emptyObject = mix(tagObject)

// HashCall returns the structural hash of a request frame (as Hash does)
// and its identity, in one pass over it: the hasher keeps the hashes and
// the raw values of the members the rule names as it meets them. A
// member the user left out (it or a member it is in) is absent.
func (hs *Hasher) HashCall(method string, frame []byte) (h uint64, idn Identity, ok bool) {
	rule := IdentityRuleOf(method)
	hs.want = append(append(hs.want[:0], rule.Parts...), rule.Inputs...)
	hs.got = hs.got[:0]
	for range hs.want {
		hs.got = append(hs.got, captured{hash: tagAbsent})
	}
	h, ok = hs.Hash(frame)
	for k, w := range hs.want {
		for n := 1; n <= len(w); n++ {
			if hs.Ignore.skips(w[:n]) {
				hs.got[k] = captured{hash: tagAbsent}
				break
			}
		}
	}
	idn.Call.Key = mix(maphash.String(hashSeed, method))
	for k := range rule.Parts {
		idn.Call.Key = mix(idn.Call.Key*31 + hs.got[k].hash)
		idn.Parts = append(idn.Parts, hs.got[k].raw)
	}
	for k := range rule.Inputs {
		in := hs.got[len(rule.Parts)+k]
		if in.raw == nil || string(in.raw) == "null" {
			in.hash = emptyObject // no arguments are arguments {}
		}
		idn.Call.Inputs = mix(idn.Call.Inputs*31 + in.hash)
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
func (hs *Hasher) capture(v uint64, raw []byte) {
	for k, w := range hs.want {
		if slices.Equal(w, hs.path) {
			hs.got[k] = captured{hash: v, raw: raw}
		}
	}
}

// IdentityPaths reports whether the JSON pointer p is in, or holds, one
// of the members that name a call of method (part), or one of its inputs.
func IdentityPaths(method, p string) (part, input bool) {
	rule := IdentityRuleOf(method)
	in := func(paths [][]string) bool {
		for _, path := range paths {
			if q := pointer(path); p == q || strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
				return true
			}
		}
		return false
	}
	return in(rule.Parts), in(rule.Inputs)
}

// CallName says, for people, what a request of method calls: a tool's,
// prompt's or resource's name, a completion's reference, a document and
// a position in it; "" for a method named by itself alone. It is cut to
// 200 bytes.
func CallName(method string, frame []byte) string {
	rule := IdentityRuleOf(method)
	parts := make([][]byte, len(rule.Parts))
	for k, path := range rule.Parts {
		v := frame
		for _, m := range path {
			v = classify.Member(v, m)
		}
		parts[k] = v
	}
	return CallNameOf(method, parts)
}

// CallNameOf is CallName from the raw values of the parts of method's
// identity rule.
func CallNameOf(method string, parts [][]byte) string {
	str := func(v []byte) string {
		s, _ := classify.StringValue(v)
		return s
	}
	var name string
	switch IdentityRuleOf(method).by {
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
