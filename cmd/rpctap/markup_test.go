package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// xmlRefuses reports whether XML 1.0 has no place for r: C0 controls but
// tab, line feed and carriage return, surrogates, and the noncharacters.
func xmlRefuses(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0xd800 && r < 0xe000 ||
		r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

// firstRefused returns the offset and character of the first byte of b
// that XML 1.0 refuses (a byte that is not UTF-8 too), or -1.
func firstRefused(b []byte) (int, rune) {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || xmlRefuses(r) {
			return i, r
		}
		i += size
	}
	return -1, 0
}

// Every XML and HTML rpctap writes holds only what XML 1.0 allows, the
// characters it refuses written as visible escapes: a session a real tap
// recorded, whose frames hold noncharacters (U+FFFE, U+FFFF, U+FDD0,
// U+1FFFE, U+10FFFF) raw and as \u escapes, C0 controls, a lone
// surrogate escape and bytes that are not UTF-8, gives a JUnit report
// (check --format junit, failing and not) that real XML parsers read
// (Go's encoding/xml always; expat through python3 and libxml2's xmllint
// where installed) and an HTML export with none of those characters in it.
func TestJUnitAndHTMLHoldNoCharacterXMLRefuses(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "s.jsonl")
	frames := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call\uffff","params":{"t":"a\ufffeb\ud800c\u0001d\u001b[2J","u":"` + "\uffff\ufdd0\U0010ffff" + `"}}`,
		"not json \ufffe here \uffff, \ufdd0, \U0001fffe, \U0010ffff, \x01\x7f, \xff\xed\xa0\x80 <&> \\\ufffe",
		`{"jsonrpc":"2.0","id":2,"method":"ping` + "\ufffe" + `"}`,
	}, "\n") + "\n"
	server := `printf '\357\277\277 on stderr\n' >&2; cat > /dev/null`
	run := exec.Command(bin, "run", "--record", rec, "--", "sh", "-c", server)
	run.Stdin = strings.NewReader(frames)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("rpctap run: %v\n%s", err, out)
	}
	outputs := map[string][]byte{}
	for name, args := range map[string][]string{
		"check --format junit":                {"check", "--format", "junit", rec},
		"check --format junit --fail-on info": {"check", "--format", "junit", "--fail-on", "info", rec},
		"check --format junit --fail-on none": {"check", "--format", "junit", "--fail-on", "none", rec},
		"export --format html":                {"export", rec, "--format", "html", "-o", "-"},
	} {
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if e, ok := err.(*exec.ExitError); err != nil && (!ok || e.ExitCode() > 1) {
			t.Fatalf("rpctap %s: %v\n%s", name, err, stderr.Bytes())
		}
		outputs[name] = out
	}
	for name, out := range outputs {
		if at, r := firstRefused(out); at >= 0 {
			t.Errorf("%s holds %U, which XML 1.0 refuses, at byte %d: %q", name, r, at, out[max(0, at-60):min(len(out), at+20)])
		}
		if !strings.Contains(name, "junit") {
			if !bytes.Contains(out, []byte(`tools/call\uffff`)) {
				t.Errorf("%s does not show the method's U+FFFF as an escape", name)
			}
			continue
		}
		if !bytes.Contains(out, []byte(`not json \ufffe here \uffff, \ufdd0, \u{1fffe}, \u{10ffff}, \x01\x7f, \xff\xed\xa0\x80 &lt;&amp;&gt; \\\ufffe`)) {
			t.Errorf("%s does not show the line that is not JSON with its characters escaped:\n%s", name, out)
		}
		d := xml.NewDecoder(bytes.NewReader(out))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s: encoding/xml refuses it: %v", name, err)
				break
			}
		}
		path := filepath.Join(dir, strings.NewReplacer(" ", "_", "-", "").Replace(name)+".xml")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if python, err := exec.LookPath("python3"); err == nil {
			if msg, err := exec.Command(python, "-c", "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])", path).CombinedOutput(); err != nil {
				t.Errorf("%s: expat refuses it: %v\n%s", name, err, msg)
			}
		} else {
			t.Logf("python3 is not installed: %s is not parsed with expat", name)
		}
		if xmllint, err := exec.LookPath("xmllint"); err == nil {
			if msg, err := exec.Command(xmllint, "--noout", "--nonet", path).CombinedOutput(); err != nil {
				t.Errorf("%s: xmllint refuses it: %v\n%s", name, err, msg)
			}
		} else {
			t.Logf("xmllint is not installed: %s is not parsed with libxml2", name)
		}
	}
}
