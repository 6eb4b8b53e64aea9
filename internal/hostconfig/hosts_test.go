package hostconfig

import (
	"slices"
	"strings"
	"testing"
)

func TestEachHostsConfigIsWhereItsMakerSaysOnEachOS(t *testing.T) {
	env := func(goos, home string, vars map[string]string) Env {
		return Env{GOOS: goos, Home: home, Cwd: home + "/src/app", Getenv: func(k string) string { return vars[k] }}
	}
	linux := env("linux", "/home/ana", nil)
	xdg := env("linux", "/home/ana", map[string]string{"XDG_CONFIG_HOME": "/cfg"})
	mac := env("darwin", "/Users/ana", nil)
	win := Env{GOOS: "windows", Home: `C:\Users\ana`, Cwd: `C:\src\app`, Getenv: func(k string) string {
		return map[string]string{"APPDATA": `C:\Users\ana\AppData\Roaming`}[k]
	}}
	for _, tc := range []struct {
		host string
		env  Env
		want []string
	}{
		{"claude-desktop", linux, []string{"/home/ana/.config/Claude/claude_desktop_config.json"}},
		{"claude-desktop", xdg, []string{"/cfg/Claude/claude_desktop_config.json"}},
		{"claude-desktop", mac, []string{"/Users/ana/Library/Application Support/Claude/claude_desktop_config.json"}},
		{"claude-desktop", win, []string{`C:\Users\ana\AppData\Roaming\Claude\claude_desktop_config.json`}},
		{"claude-code", linux, []string{"/home/ana/src/app/.mcp.json", "/home/ana/.claude.json projects./home/ana/src/app.mcpServers", "/home/ana/.claude.json"}},
		{"claude-code", env("linux", "/home/ana", map[string]string{"CLAUDE_CONFIG_DIR": "/etc/claude"}), []string{"/home/ana/src/app/.mcp.json", "/etc/claude/.claude.json projects./home/ana/src/app.mcpServers", "/etc/claude/.claude.json"}},
		{"claude-code", win, []string{`C:\src\app\.mcp.json`, `C:\Users\ana\.claude.json projects.C:\src\app.mcpServers`, `C:\Users\ana\.claude.json`}},
		{"cursor", mac, []string{"/Users/ana/src/app/.cursor/mcp.json", "/Users/ana/.cursor/mcp.json"}},
		{"cursor", win, []string{`C:\src\app\.cursor\mcp.json`, `C:\Users\ana\.cursor\mcp.json`}},
		{"vscode", linux, []string{"/home/ana/src/app/.vscode/mcp.json", "/home/ana/.config/Code/User/mcp.json"}},
		{"vscode", mac, []string{"/Users/ana/src/app/.vscode/mcp.json", "/Users/ana/Library/Application Support/Code/User/mcp.json"}},
		{"vscode", win, []string{`C:\src\app\.vscode\mcp.json`, `C:\Users\ana\AppData\Roaming\Code\User\mcp.json`}},
	} {
		h, _ := HostNamed(tc.host)
		var got []string
		for _, l := range Locations(h, tc.env) {
			if l.Key != nil {
				got = append(got, l.Path+" "+strings.Join(l.Key, "."))
			} else {
				got = append(got, l.Path)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s on %s: %q, want %q", tc.host, tc.env.GOOS, got, tc.want)
		}
	}
}
