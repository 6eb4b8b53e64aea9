// Package hostconfig reads the MCP configuration files of hosts (Claude
// Desktop, Claude Code, Cursor, VS Code), finds the one that has a server
// (Find) or lists them (Look), and rewrites one server entry of one so
// that the host launches the server through "rpctap run", and back.
//
// It never re-marshals a file: it finds the byte spans of the entry's
// values and replaces only those, so every other entry, the key order,
// comments, indentation and line ends stay as they were, and unwrapping
// a wrapped entry gives back the file's bytes exactly.
package hostconfig
