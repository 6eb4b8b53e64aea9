package hostconfig

import (
	"path"
	"path/filepath"
	"slices"
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
	Scope string // "project" (under the working directory), "local" (the user's, for this project) or "user"
	Path  string
	// Key is where the servers object is in the file, when not Host.Key.
	Key []string
}

// ServersKey is where the servers object is in the file.
func (l Location) ServersKey() []string {
	if l.Key != nil {
		return l.Key
	}
	return l.Host.Key
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
	var key []string // of the next add; nil: the host's
	add := func(scope string, el ...string) {
		defer func() { key = nil }()
		if len(el) == 0 || el[0] == "" {
			return
		}
		p := join(el...)
		for _, l := range out {
			if l.Path == p && slices.Equal(l.Key, key) {
				return // the project is the home directory: one file
			}
		}
		out = append(out, Location{Host: h, Scope: scope, Path: p, Key: key})
	}
	switch h.Name {
	case "claude-desktop":
		add("user", appConfig(), "Claude", "claude_desktop_config.json")
	case "claude-code":
		add("project", env.Cwd, ".mcp.json")
		user := join(env.Home, ".claude.json")
		if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
			user = join(d, ".claude.json")
		}
		// "claude mcp add" keeps a server of the local scope (the
		// default) under the project's path in the user's file.
		if env.Cwd != "" {
			key = []string{"projects", env.Cwd, "mcpServers"}
			add("local", user)
		}
		add("user", user)
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
