package sessions

import "testing"

// Markup escaping writes the markup characters as entities and every
// character XML 1.0 refuses (C0 controls but tab, LF and CR; surrogates;
// noncharacters; bytes that are not UTF-8) as a visible escape, doubling
// a lone backslash of the text right before one; an attribute keeps its
// tabs and line breaks as character references.
func TestMarkupEscapesWhatXMLRefuses(t *testing.T) {
	for _, c := range []struct {
		in         string
		text, attr string
	}{
		{`a<b>&"c'`, `a&lt;b&gt;&amp;&#34;c&#39;`, ""},
		{"tab\tlf\ncr\r", "tab\tlf\ncr\r", "tab&#x9;lf&#xA;cr&#xD;"},
		{"\x00\x01\x1f\x7f", `\x00\x01\x1f` + "\x7f", ""},
		{"\ufffe\uffff\ufdd0\ufdef\ufdf0\ufffd", `\ufffe\uffff\ufdd0\ufdef` + "\ufdf0\ufffd", ""},
		{"\U0001fffe\U0010ffff\U0001f600", `\u{1fffe}\u{10ffff}` + "\U0001f600", ""},
		{"\xed\xa0\x80\xff", `\xed\xa0\x80\xff`, ""},
		// Escape leaves an odd run of backslashes before such a
		// character when the last is the peer's own.
		{"\\\ufffe \\\\\\\ufffe \\\\\ufffe \\x", `\\\ufffe \\\\\ufffe \\\ufffe \x`, ""},
		{"é and U+2028\u2028", "é and U+2028\u2028", ""},
	} {
		if c.attr == "" {
			c.attr = c.text
		}
		if got := MarkupText(c.in); got != c.text {
			t.Errorf("markupText(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := MarkupAttr(c.in); got != c.attr {
			t.Errorf("markupAttr(%q) = %q, want %q", c.in, got, c.attr)
		}
	}
}
