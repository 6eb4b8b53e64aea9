package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A Server is one entry of a config's servers object.
type Server struct {
	Name    string
	Command string   // what the host runs
	Args    []string // and its arguments
	URL     string   // set for a remote (HTTP) server, which has no command
	// Wrapped says the host runs the server through "rpctap run"; Inner
	// is then the server's own command line.
	Wrapped bool
	Inner   []string
}

// List returns the servers under the object at keyPath (such as
// ["mcpServers"]), in file order. A file without that object has none.
func List(src []byte, keyPath []string) ([]Server, error) {
	servers, err := serversNode(src, keyPath)
	if err != nil || servers == nil {
		return nil, err
	}
	var out []Server
	for _, m := range servers.members {
		e := m.value
		s := Server{Name: m.key, Command: text(src, e.get("command")), URL: text(src, e.get("url"))}
		if a := e.get("args"); a != nil && a.kind == kArray {
			for _, el := range a.elems {
				s.Args = append(s.Args, text(src, el))
			}
		}
		if w, ok := wrappedAt(src, e); ok {
			s.Wrapped = true
			s.Inner = s.Args[w.dash+1:]
		}
		out = append(out, s)
	}
	return out, nil
}

// Wrap rewrites the entry name under keyPath so that the host runs
// rpctap (an absolute path) as "rpctap run --name NAME -- COMMAND ARGS…".
// Only the entry's command value changes and its args array gains a
// prefix; the entry's env, cwd, type and everything else stay, so the
// server gets the environment it had.
func Wrap(src []byte, keyPath []string, name, rpctap string) ([]byte, error) {
	e, err := entry(src, keyPath, name)
	if err != nil {
		return nil, err
	}
	cmd := e.get("command")
	if err := wrappable(src, e, cmd, name); err != nil {
		return nil, err
	}
	if _, ok := wrappedAt(src, e); ok {
		return nil, fmt.Errorf("server %q already runs through rpctap", name)
	}
	cmdTok := string(src[cmd.start:cmd.end])
	edits := []edit{{cmd.start, cmd.end, quote(rpctap)}}
	minified := compact(src, e) // minified JSON stays minified
	comma, colon := ", ", ": "
	if minified {
		comma, colon = ",", ":"
	}
	args := e.get("args")
	switch {
	case args == nil:
		// No args member: add one right after the command. The --name=
		// form marks it as added, so that unwrapping removes the member
		// instead of leaving "args": [] behind.
		toks := []string{quote("run"), quote("--name=" + name), quote("--"), cmdTok}
		ws := leadingSpace(src, e.members[e.memberIndex("command")].keyStart)
		if minified {
			ws = ""
		}
		edits = append(edits, edit{cmd.end, cmd.end, "," + ws + quote("args") + colon + "[" + strings.Join(toks, comma) + "]"})
	case args.kind != kArray:
		return nil, fmt.Errorf("the args of server %q is not a list; fix the entry first", name)
	case len(args.elems) == 0:
		toks := []string{quote("run"), quote("--name"), quote(name), quote("--"), cmdTok}
		edits = append(edits, edit{args.start + 1, args.start + 1, strings.Join(toks, comma)})
	default:
		// Each new element goes before the first one, followed by the
		// space the array already puts between its elements.
		toks := []string{quote("run"), quote("--name"), quote(name), quote("--"), cmdTok}
		sep := elemSpace(src, args, minified)
		var b strings.Builder
		for _, t := range toks {
			b.WriteString(t + "," + sep)
		}
		at := args.elems[0].start
		edits = append(edits, edit{at, at, b.String()})
	}
	return apply(src, edits), nil
}

// Unwrap undoes Wrap on the entry name: the command is the server's own
// again and the args lose rpctap's prefix. On an entry Wrap wrote it
// gives back the bytes the file had before.
func Unwrap(src []byte, keyPath []string, name string) ([]byte, error) {
	e, err := entry(src, keyPath, name)
	if err != nil {
		return nil, err
	}
	w, ok := wrappedAt(src, e)
	if !ok {
		return nil, fmt.Errorf("server %q does not run through rpctap; there is nothing to unwrap", name)
	}
	cmd, args := e.get("command"), e.get("args")
	inner := args.elems[w.dash+1]
	edits := []edit{{cmd.start, cmd.end, string(src[inner.start:inner.end])}}
	rest := len(args.elems) - (w.dash + 2)
	ai := e.memberIndex("args")
	switch {
	case rest > 0:
		edits = append(edits, edit{args.elems[0].start, args.elems[w.dash+2].start, ""})
	case w.added && ai == e.memberIndex("command")+1 && isSpace(bytes.TrimPrefix(src[cmd.end:e.members[ai].keyStart], []byte(","))):
		edits = append(edits, edit{cmd.end, args.end, ""})
	default:
		edits = append(edits, edit{args.elems[0].start, inner.end, ""})
	}
	return apply(src, edits), nil
}

// wrapped describes rpctap's prefix in an entry's args.
type wrapped struct {
	dash  int  // index of the "--" before the server's command
	added bool // Wrap added the args member (it wrote --name=)
}

// wrappedAt reports whether the entry runs "rpctap run [FLAGS] -- CMD…".
func wrappedAt(src []byte, e *node) (wrapped, bool) {
	base := filepath.Base(strings.ReplaceAll(text(src, e.get("command")), `\`, "/"))
	if base != "rpctap" && base != "rpctap.exe" {
		return wrapped{}, false
	}
	args := e.get("args")
	if args == nil || args.kind != kArray || len(args.elems) < 3 || text(src, args.elems[0]) != "run" {
		return wrapped{}, false
	}
	var w wrapped
	for i, el := range args.elems {
		s := text(src, el)
		if strings.HasPrefix(s, "--name=") {
			w.added = true
		}
		if s == "--" && el.kind == kString {
			if i+1 >= len(args.elems) || args.elems[i+1].kind != kString {
				return wrapped{}, false
			}
			w.dash = i
			return w, true
		}
	}
	return wrapped{}, false
}

func wrappable(src []byte, e, cmd *node, name string) error {
	if e.kind != kObject {
		return fmt.Errorf("server %q is not an object; fix the entry first", name)
	}
	if cmd == nil {
		if e.get("url") != nil {
			return fmt.Errorf("server %q is a remote server (it has a url, not a command); rpctap taps servers the host starts on stdio", name)
		}
		return fmt.Errorf("server %q has no command; rpctap taps servers the host starts on stdio", name)
	}
	if cmd.kind != kString || text(src, cmd) == "" {
		return fmt.Errorf("the command of server %q is not a command name; fix the entry first", name)
	}
	return nil
}

// serversNode finds the object at keyPath; nil when a key is absent.
func serversNode(src []byte, keyPath []string) (*node, error) {
	n, err := parse(src)
	if err != nil {
		return nil, err
	}
	if n.kind != kObject {
		return nil, fmt.Errorf("the file is not a JSON object")
	}
	for i, k := range keyPath {
		n = n.get(k)
		if n == nil {
			return nil, nil
		}
		if n.kind != kObject {
			return nil, fmt.Errorf("%q is not an object", strings.Join(keyPath[:i+1], "."))
		}
	}
	return n, nil
}

func entry(src []byte, keyPath []string, name string) (*node, error) {
	servers, err := serversNode(src, keyPath)
	if err != nil {
		return nil, err
	}
	if e := servers.get(name); e != nil {
		return e, nil
	}
	var names []string
	if servers != nil {
		for _, m := range servers.members {
			names = append(names, fmt.Sprintf("%q", m.key))
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("there is no server %q: the file has no servers under %q", name, strings.Join(keyPath, "."))
	}
	return nil, fmt.Errorf("there is no server %q; the servers are %s", name, strings.Join(names, ", "))
}

// An edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

func apply(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Replace(out, e.start, e.end, []byte(e.text)...)
	}
	return out
}

// compact reports whether the object puts nothing between a comma and
// the next key, as minified JSON does.
func compact(src []byte, obj *node) bool {
	for i := 1; i < len(obj.members); i++ {
		between := src[obj.members[i-1].value.end:obj.members[i].keyStart]
		if bytes.Equal(between, []byte(",")) {
			return true
		}
	}
	return false
}

// elemSpace is what goes between two elements of arr: the space after
// its first comma, else (one element) the space before it when that
// breaks the line, else nothing in compact JSON and one blank elsewhere.
func elemSpace(src []byte, arr *node, compact bool) string {
	if len(arr.elems) > 1 {
		between := src[arr.elems[0].end:arr.elems[1].start]
		if i := bytes.IndexByte(between, ','); i >= 0 && isSpace(between[:i]) && isSpace(between[i+1:]) {
			return string(between[i+1:])
		}
	}
	before := src[arr.start+1 : arr.elems[0].start]
	if isSpace(before) && bytes.ContainsAny(before, "\n") {
		return string(before)
	}
	if compact {
		return ""
	}
	return " "
}

// leadingSpace is the whitespace on the line before src[at] back to its
// line break (or the preceding token), line break included.
func leadingSpace(src []byte, at int) string {
	i := at
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	if i > 0 && src[i-1] == '\n' {
		i--
		if i > 0 && src[i-1] == '\r' {
			i--
		}
		return string(src[i:at])
	}
	return " "
}

func isSpace(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n")) == 0
}

// quote writes s as a JSON string, leaving <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
