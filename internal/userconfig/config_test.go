package userconfig

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// The example "rpctap config show" prints sets nothing as it is (a copy
// of it changes nothing rpctap does), and each of its commented settings
// parses once uncommented: together they set every setting.
func TestTheExampleConfigSetsNothingUntilItsLinesAreUncommented(t *testing.T) {
	c, err := Parse([]byte(Example), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Profile != "" || c.Timeout != 0 || c.Theme != "" || c.Redact != nil || c.Intercept != "" || c.HoldTimeout != 0 || c.MethodTimeouts != nil {
		t.Errorf("the example as it is sets %+v; want nothing", c)
	}
	setting := regexp.MustCompile(`(?m)^# ([a-z_]+ = |\[|")`)
	c, err = Parse([]byte(setting.ReplaceAllString(Example, "$1")), "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Profile != "mcp" || c.Timeout != 45*time.Second || c.Theme != "light" || len(c.Redact) != 1 || c.Intercept != "method:tools/call" ||
		c.HoldTimeout != 60*time.Second || c.MethodTimeouts["tools/call"] != 2*time.Minute {
		t.Errorf("the example uncommented parsed as %+v; want every setting", c)
	}
	for _, k := range Keys {
		if !strings.Contains(Example, "# "+k) && !strings.Contains(Example, "# ["+k+"]") {
			t.Errorf("the example does not name %s", k)
		}
	}
}

func TestABadConfigGetsASentenceNamingItsLine(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"profile = \"mcp\"\ntimeout = 30\n", `c.toml line 2: timeout must be a duration in quotes, as in: timeout = "45s"`},
		{"timeout = \"3 seconds\"\n", `c.toml line 1: timeout "3 seconds" is not a positive duration; write it with a unit, as in: timeout = "45s"`},
		{"# mine\n\nprofil = \"mcp\"\n", `c.toml line 3: rpctap has no setting "profil"; the settings are profile, timeout, redact, theme, intercept, hold_timeout, method_timeouts`},
		{"theme = \"solarized\"", `c.toml line 1: theme must be "auto", "dark" or "light"`},
		{"profile = \"grpc\"", `c.toml line 1: profile must be one of "auto", "jsonrpc", "mcp" or "lsp"`},
		{"redact = \"TOKEN\"", `c.toml line 1: redact must be a list`},
		{"theme = \"dark\"\n\n[method_timeouts]\n\"tools/call\" = \"2m\"\n\"ping\" = \"soon\"\n", `c.toml line 5: the timeout of "ping" "soon" is not a positive duration`},
		{"theme = \"dark\"\nprofile = mcp\n", `c.toml line 2: `},
		{"[method_timeouts\n", `c.toml line 1: `},
	} {
		_, err := Parse([]byte(tc.src), "c.toml")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line starting %q", tc.src, err, tc.want)
		}
	}
}

func TestTheConfigFileIsUnderXDGConfigHomeElseTheHomeDirectory(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/rpctap/config.toml"},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/rpctap/config.toml"},
		{map[string]string{"HOME": "/h"}, "/h/.config/rpctap/config.toml"},
	} {
		if got, _ := Path(env(tc.env)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
}

func TestInterceptAndHoldTimeoutAreReadAndABadFilterIsRefused(t *testing.T) {
	c, err := Parse([]byte("intercept = \"method:tools/call\"\nhold_timeout = \"2m\"\n"), "c.toml")
	if err != nil || c.Intercept != "method:tools/call" || c.HoldTimeout != 2*time.Minute {
		t.Fatalf("got %+v, %v", c, err)
	}
	if _, err := Parse([]byte("\nintercept = \"meth:x\"\n"), "c.toml"); err == nil || !strings.HasPrefix(err.Error(), "c.toml line 2: the intercept filter") {
		t.Errorf("a bad filter: %v", err)
	}
}
