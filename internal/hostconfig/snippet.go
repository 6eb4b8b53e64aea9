package hostconfig

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Editors are the LSP clients Snippet writes for.
var Editors = []string{"neovim", "helix", "vscode-lsp"}

// Snippet is the configuration to paste into editor so that it starts
// the language server argv through rpctap (an absolute path) with
// Content-Length framing.
func Snippet(editor, rpctap string, argv []string) (string, error) {
	name := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	cmd := append([]string{rpctap, "run", "--name", name, "--framing", "lsp", "--profile", "lsp", "--"}, argv...)
	switch editor {
	case "neovim":
		return fmt.Sprintf(`-- Neovim 0.11 or later (init.lua): start %[1]s through rpctap.
vim.lsp.config(%[2]s, {
  cmd = { %[3]s },
})
vim.lsp.enable(%[2]s)
-- With nvim-lspconfig instead: require('lspconfig')[%[2]s].setup({ cmd = { %[3]s } })
`, name, luaQuote(name), joinQuoted(cmd, luaQuote)), nil
	case "helix":
		return fmt.Sprintf(`# Helix (languages.toml): start %[1]s through rpctap, then name
# %[2]s in the language-servers of the languages that use it.
[language-server.%[2]s]
command = %[3]s
args = [%[4]s]
`, name, tomlKey(name), tomlQuote(rpctap), joinQuoted(cmd[1:], tomlQuote)), nil
	case "vscode-lsp":
		return fmt.Sprintf(`// VS Code extension (vscode-languageclient): start %[1]s through rpctap.
const serverOptions: ServerOptions = {
  command: %[2]s,
  args: [%[3]s],
  transport: TransportKind.stdio,
};
`, name, strconv.Quote(rpctap), joinQuoted(cmd[1:], strconv.Quote)), nil
	}
	return "", fmt.Errorf("rpctap has no snippet for %q; it writes them for %s", editor, strings.Join(Editors, ", "))
}

func joinQuoted(s []string, q func(string) string) string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = q(v)
	}
	return strings.Join(out, ", ")
}

// luaQuote writes s as a Lua string: control characters as decimal
// escapes, which every Lua reads.
func luaQuote(s string) string { return quoteWith(s, '\'', "\\%03d") }

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string { return quoteWith(s, '"', "\\u%04x") }

// quoteWith writes s between quote characters q, with q and backslash
// escaped by a backslash and control characters by control (a format
// of the character's code).
func quoteWith(s string, q rune, control string) string {
	var b strings.Builder
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == q || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, control, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteRune(q)
	return b.String()
}

// ShellQuote writes s as one word of a POSIX shell's command line: bare
// when it holds only characters no shell reads specially, else between
// single quotes, a single quote in it closing them for a backslashed
// one.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '=' || r == ':' || r == ',' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tomlKey writes a table key bare when TOML allows it, else quoted.
func tomlKey(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return tomlQuote(s)
		}
	}
	return s
}
