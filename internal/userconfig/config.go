package userconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
)

// A Config is what the file says; a zero field was not set.
type Config struct {
	Profile        string                   // --profile of run, watch, check, classify, export
	Timeout        time.Duration            // --timeout of run, check, export, replay
	MethodTimeouts map[string]time.Duration // --method-timeout of run and check
	Redact         []string                 // added to --redact of run, replay, export
	Theme          string                   // the live view's colours: auto, dark or light
	Intercept      string                   // --intercept of run: a filter of frames to hold
	HoldTimeout    time.Duration            // --hold-timeout of run
}

// Themes are the values theme takes.
var Themes = []string{"auto", "dark", "light"}

// Keys are the keys the file may have, in the order Example shows them.
var Keys = []string{"profile", "timeout", "redact", "theme", "intercept", "hold_timeout", "method_timeouts"}

// Path is where the file is: $XDG_CONFIG_HOME/rpctap/config.toml, else
// ~/.config/rpctap/config.toml (on macOS too, as command-line tools
// do), and on Windows %APPDATA%\rpctap\config.toml.
func Path(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "rpctap", "config.toml"), nil
	}
	if runtime.GOOS == "windows" {
		if a := getenv("APPDATA"); a != "" {
			return filepath.Join(a, "rpctap", "config.toml"), nil
		}
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", errors.New("cannot tell where the config file is: neither XDG_CONFIG_HOME nor HOME is set")
		}
	}
	return filepath.Join(home, ".config", "rpctap", "config.toml"), nil
}

// Load reads the file at path; a missing file is an empty Config.
func Load(path string) (Config, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("cannot read the config file: %w", err)
	}
	return Parse(src, path)
}

// Parse reads a config file's text; name is the file's for messages.
// An error names the line and says how to fix it.
func Parse(src []byte, name string) (Config, error) {
	var c Config
	var raw map[string]any
	if _, err := toml.Decode(string(src), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line := pe.Position.Line
			if st := pe.Position.Start; st > 0 && st <= len(src) {
				// The line the offending byte is on; a missing end of
				// line shows as the line break that ends it.
				line = strings.Count(string(src[:st]), "\n") + 1
			}
			return c, fmt.Errorf("%s line %d: %s; fix that line (the file is TOML: key = \"value\")", name, line, pe.Message)
		}
		return c, fmt.Errorf("%s: %w", name, err)
	}
	at := func(key ...string) string { return fmt.Sprintf("%s line %d", name, lineOf(src, key)) }
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		switch k {
		case "profile":
			s, ok := v.(string)
			if _, err := classify.ParseProfile(s); !ok || err != nil {
				return c, fmt.Errorf("%s: profile must be one of \"auto\", \"jsonrpc\", \"mcp\" or \"lsp\", as in: profile = \"mcp\"", at(k))
			}
			c.Profile = s
		case "timeout":
			d, err := duration(v)
			if err != nil {
				return c, fmt.Errorf("%s: timeout %v, as in: timeout = \"45s\"", at(k), err)
			}
			c.Timeout = d
		case "theme":
			s, ok := v.(string)
			if !ok || !slices.Contains(Themes, s) {
				return c, fmt.Errorf("%s: theme must be \"auto\", \"dark\" or \"light\", as in: theme = \"light\"", at(k))
			}
			c.Theme = s
		case "intercept":
			s, ok := v.(string)
			if !ok {
				return c, fmt.Errorf("%s: intercept must be a filter in quotes, as in: intercept = \"method:tools/call\"", at(k))
			}
			if _, err := filter.Parse(s); err != nil {
				return c, fmt.Errorf("%s: the intercept filter: %v", at(k), err)
			}
			c.Intercept = s
		case "hold_timeout":
			d, err := duration(v)
			if err != nil {
				return c, fmt.Errorf("%s: hold_timeout %v, as in: hold_timeout = \"2m\"", at(k), err)
			}
			c.HoldTimeout = d
		case "redact":
			list, ok := v.([]any)
			for _, e := range list {
				s, isString := e.(string)
				if !isString || s == "" {
					ok = false
					break
				}
				c.Redact = append(c.Redact, s)
			}
			if !ok {
				return c, fmt.Errorf("%s: redact must be a list of names of environment variables or NAME=VALUE pairs, as in: redact = [\"GITHUB_TOKEN\"]", at(k))
			}
		case "method_timeouts":
			table, ok := v.(map[string]any)
			if !ok {
				return c, fmt.Errorf("%s: method_timeouts must be a table of methods and durations, as in: [method_timeouts] then \"tools/call\" = \"2m\" on the next line", at(k))
			}
			c.MethodTimeouts = map[string]time.Duration{}
			for m, dv := range table {
				d, err := duration(dv)
				if err != nil {
					return c, fmt.Errorf("%s: the timeout of %q %v, as in: \"tools/call\" = \"2m\"", at(k, m), m, err)
				}
				c.MethodTimeouts[m] = d
			}
		default:
			return c, fmt.Errorf("%s: rpctap has no setting %q; the settings are %s (rpctap config show lists them)", at(k), k, strings.Join(Keys, ", "))
		}
	}
	return c, nil
}

func duration(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("must be a duration in quotes")
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration; write it with a unit", s)
	}
	return d, nil
}

var tableHeader = regexp.MustCompile(`^\s*\[\s*([^\]]*?)\s*\]`)

// lineOf is the 1-based line where key (a top-level key, or a table and
// a key in it) is set, or 1 when it cannot be told.
func lineOf(src []byte, key []string) int {
	table := ""
	for i, line := range strings.Split(string(src), "\n") {
		if m := tableHeader.FindStringSubmatch(line); m != nil {
			table = strings.Trim(m[1], `"' `)
			if len(key) == 1 && table == key[0] {
				return i + 1
			}
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `"'`)
		switch {
		case len(key) == 1 && table == "" && (k == key[0] || strings.HasPrefix(k, key[0]+".")):
			return i + 1
		case len(key) == 2 && table == key[0] && k == key[1]:
			return i + 1
		}
	}
	return 1
}

// Example is a config file to start from, for "rpctap config show": it
// names every setting, and sets none. Each line that would change what
// rpctap does is commented out, so that the file copied as it is changes
// nothing; a setting takes effect once its line is uncommented.
const Example = `# rpctap's config: defaults for flags; a flag given on the command line wins.
# Each setting changes what rpctap does: remove the "# " before the ones you want.
# profile = "mcp"                  # rules to judge by (run, watch, check, classify, export): auto (the default), jsonrpc, mcp or lsp
# timeout = "45s"                  # how long a request may wait for its answer (run, check, export, replay; default 30s, replay's 10s)
# redact = ["GITHUB_TOKEN"]        # secrets to mask besides secret-looking variables (run, http, replay, export): NAME (a variable; unset, a warning; for http, or a header) or NAME=VALUE
# theme = "light"                  # the live view's colours: auto (the default), dark or light (NO_COLOR turns colour off)
# intercept = "method:tools/call"  # hold frames that match until a view decides them (run, http); with no view open, each waits hold_timeout
# hold_timeout = "60s"             # how long a frame is held at most (run, http; default 60s)

# [method_timeouts]                # per method, over timeout (run, check; --method-timeout wins)
# "tools/call" = "2m"
`
