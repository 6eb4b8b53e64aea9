package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ctrl+e in the composer hands the text to $EDITOR on the view's own
// terminal (its stdin, stdout and stderr are that terminal: vim does not
// warn that its input is not from a terminal), and the view comes back
// with the edited frame as soon as the editor exits, with no key pressed.
// The editor is a real vim when the machine has one, else a script that
// fails unless its stdin, stdout and stderr are a terminal.
func TestComposersEditorGetsTheTerminalAndTheViewComesBackAtOnce(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	edit := func(keys func(...string), waitfor func(...string)) {}
	editor := ""
	if vim, err := exec.LookPath("vim"); err == nil {
		// No vimrc, no viminfo, no swap file: the same vim everywhere.
		editor = vim + " -u NONE -i NONE -n -N"
		edit = func(keys func(...string), waitfor func(...string)) {
			waitfor("rpctap-frame-") // vim shows the file's name
			keys(":s/typed/edited/", "Enter")
			keys(":wq", "Enter")
		}
	} else {
		script := filepath.Join(dir, "editor")
		if err := os.WriteFile(script, []byte(`#!/bin/sh
[ -t 0 ] && [ -t 1 ] && [ -t 2 ] || { echo "the editor's stdin, stdout or stderr is no terminal" >&2; exit 3; }
sed -i s/typed/edited/ "$1"
`), 0o700); err != nil {
			t.Fatal(err)
		}
		editor = script
	}
	waitfor, keys, screen := tmuxScreen(t, 100, 30, append(env[len(env)-3:], "VISUAL=", "EDITOR="+editor), rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "prompts/list")
	keys("i")
	waitfor("ctrl+e editor")
	keys("-l", `{"jsonrpc":"2.0","method":"typed"}`)
	waitfor(`"method":"typed"`)
	keys("C-e")
	edit(keys, waitfor)
	// Back in the view, no key pressed: the composer holds the edited text.
	waitfor(`{"jsonrpc":"2.0","method":"edited"}`, "ctrl+e editor")
	if s := screen(); strings.Contains(s, "not from a terminal") || strings.Contains(s, "exited with status") {
		t.Errorf("the editor did not get the terminal:\n%s", s)
	}
	keys("Escape")
	waitfor("↑/k up")
	keys("q")
	waitfor("session recorded in")
}
