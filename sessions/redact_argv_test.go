package sessions

import (
	"slices"
	"strings"
	"testing"
)

// A command line's secrets are masked by their shape, whatever the
// environment: an option named for a secret (joined or apart), a secret
// variable set on the command line, Bearer credentials, keys known by
// their prefix; and a secret of the environment that spans two
// arguments. What only looks near one (--key-file, --max-tokens 4096, a
// boolean) is left.
func TestMaskStringsMasksSecretsByTheirShape(t *testing.T) {
	r, err := NewRedactor([]string{"DB_PASSWORD=two words"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want []string }{
		{[]string{"srv", "--token=abc123"}, []string{"srv", "--token=***TOKEN***"}},
		{[]string{"srv", "--token", "abc123", "x"}, []string{"srv", "--token", "***TOKEN***", "x"}},
		{[]string{"srv", "--api-key", "K2xyz"}, []string{"srv", "--api-key", "***API_KEY***"}},
		{[]string{"srv", "--password", "hunter2"}, []string{"srv", "--password", "***PASSWORD***"}},
		{[]string{"srv", "-client-secret=abc"}, []string{"srv", "-client-secret=***CLIENT_SECRET***"}},
		{[]string{"srv", "--auth-token", "t0k"}, []string{"srv", "--auth-token", "***AUTH_TOKEN***"}},
		{[]string{"env", "GITHUB_TOKEN=ghx", "srv"}, []string{"env", "GITHUB_TOKEN=***GITHUB_TOKEN***", "srv"}},
		{[]string{"srv", "--header", "Authorization: Bearer abc.def-ghi"}, []string{"srv", "--header", "Authorization: Bearer ***TOKEN***"}},
		{[]string{"srv", "Bearer", "abc.def"}, []string{"srv", "Bearer", "***TOKEN***"}},
		{[]string{"srv", "sk-proj-abcdefghijklmnop1234"}, []string{"srv", "***API_KEY***"}},
		{[]string{"srv", "--x=key:sk-ant-api03-abcdefghijklmnopq,y"}, []string{"srv", "--x=key:***API_KEY***,y"}},
		{[]string{"srv", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, []string{"srv", "***API_KEY***"}},
		{[]string{"srv", "--db", "two", "words", "x"}, []string{"srv", "--db", "***DB_PASSWORD***", "***DB_PASSWORD***", "x"}},
		// Left as they are.
		{[]string{"srv", "--key-file", "/etc/k.pem", "--max-tokens", "4096"}, nil},
		{[]string{"srv", "--auth", "true", "--token", "--verbose"}, nil},
		{[]string{"srv", "--no-auth", "path", "--keyboard=us", "sk-learn", "task-abcdefghijklmnopqrstu"}, nil},
		{[]string{"srv", "Bearer"}, nil},
	} {
		if c.want == nil {
			c.want = c.in
		}
		in := slices.Clone(c.in)
		got := r.MaskStrings(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("MaskStrings(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if !slices.Equal(c.in, in) {
			t.Errorf("MaskStrings changed its argument: %q", c.in)
		}
	}
	// No secret in the environment at all: shapes are masked still;
	// --no-redact (a nil Redactor) masks nothing.
	r, _ = NewRedactor(nil, nil)
	if got := strings.Join(r.MaskStrings([]string{"srv", "--token", "abc"}), " "); got != "srv --token ***TOKEN***" {
		t.Errorf("with no secret known: %s", got)
	}
	if got := strings.Join((*Redactor)(nil).MaskStrings([]string{"srv", "--token", "abc"}), " "); got != "srv --token abc" {
		t.Errorf("a nil Redactor masked: %s", got)
	}
}
