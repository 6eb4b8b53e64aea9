package hostconfig

import (
	"path"
	"path/filepath"
	"strings"
)

// A Host is an MCP host whose config file rpctap can rewrite.
type Host struct {
	Name  string   // as typed on the command line: claude-desktop
	Title string   // as its maker writes it: Claude Desktop
	Key   []string // where the servers object is in the file
	// Comments says the host reads JSON with comments and trailing
	// commas (VS Code's JSONC); the others want strict JSON.
	Comments bool
}

// Hosts are the hosts rpctap knows, in the order it lists them.
var Hosts = []Host{
	{Name: "claude-desktop", Title: "Claude Desktop", Key: []string{"mcpServers"}},
	{Name: "claude-code", Title: "Claude Code", Key: []string{"mcpServers"}},
	{Name: "cursor", Title: "Cursor", Key: []string{"mcpServers"}},
	{Name: "vscode", Title: "VS Code", Key: []string{"servers"}, Comments: true},
}

// HostNamed returns the host called name.
func HostNamed(name string) (Host, bool) {
	for _, h := range Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// HostNames lists the hosts' names for messages.
func HostNames() string {
	var n []string
	for _, h := range Hosts {
		n = append(n, h.Name)
	}
	return strings.Join(n, ", ")
}

// A Location is a place a host reads its servers from.
type Location struct {
	Host  Host
	Scope string // "project" (under the working directory) or "user"
	Path  string
}

// Env is what the locations depend on, so that they can be computed for
// any OS in a test.
type Env struct {
	GOOS   string
	Home   string // the user's home directory
	Cwd    string // the project: the working directory
	Getenv func(string) string
}

// Locations are the files host reads, project ones first. They need not
// exist.
func Locations(h Host, env Env) []Location {
	join := filepath.Join
	if env.GOOS == "windows" && filepath.Separator != '\\' {
		// Computing Windows paths on another OS (tests): keep them
		// readable with the separator Windows uses.
		join = func(el ...string) string { return strings.ReplaceAll(path.Join(toSlash(el)...), "/", `\`) }
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	// appConfig is the per-user application data folder of a desktop app.
	appConfig := func() string {
		switch env.GOOS {
		case "darwin":
			return join(env.Home, "Library", "Application Support")
		case "windows":
			if a := getenv("APPDATA"); a != "" {
				return a
			}
			return join(env.Home, "AppData", "Roaming")
		default:
			if x := getenv("XDG_CONFIG_HOME"); x != "" && (strings.HasPrefix(x, "/") || filepath.IsAbs(x)) {
				return x
			}
			return join(env.Home, ".config")
		}
	}
	var out []Location
	add := func(scope string, el ...string) {
		if len(el) == 0 || el[0] == "" {
			return
		}
		p := join(el...)
		for _, l := range out {
			if l.Path == p {
				return // the project is the home directory: one file
			}
		}
		out = append(out, Location{Host: h, Scope: scope, Path: p})
	}
	switch h.Name {
	case "claude-desktop":
		add("user", appConfig(), "Claude", "claude_desktop_config.json")
	case "claude-code":
		add("project", env.Cwd, ".mcp.json")
		if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
			add("user", d, ".claude.json")
		} else {
			add("user", env.Home, ".claude.json")
		}
	case "cursor":
		add("project", env.Cwd, ".cursor", "mcp.json")
		add("user", env.Home, ".cursor", "mcp.json")
	case "vscode":
		add("project", env.Cwd, ".vscode", "mcp.json")
		add("user", appConfig(), "Code", "User", "mcp.json")
	}
	return out
}

func toSlash(el []string) []string {
	out := make([]string, len(el))
	for i, e := range el {
		out[i] = strings.ReplaceAll(e, `\`, "/")
	}
	return out
}
