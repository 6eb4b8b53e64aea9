package playhost

import (
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/tap"
)

// TapOptions are the options of the tap between rpctap's own host and the
// server argv (rpctap watch with no --host): it records the session at
// path ("" picks a file in the state directory; overwrite writes over
// one there), listens for the view, holds no frame unless the user sets
// an intercept filter in the view (the host answers the server's
// requests at once), and gives the server 3 s to exit once stopped.
// framing and profile are the user's; for a language server (lsp) the
// framing is Content-Length and an auto profile LSP.
func TapOptions(argv []string, framing classify.Framing, profile classify.Profile, lsp bool, path string, overwrite bool) tap.Options {
	if lsp {
		framing = classify.FramingLSP
		if profile == classify.Auto {
			profile = classify.LSP
		}
	}
	return tap.Options{Argv: argv, Framing: framing, Profile: profile, Record: true, Path: path, Overwrite: overwrite, Listen: true, TermWait: 3 * time.Second}
}
