package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/rpctap/rpctap/classify"
	"github.com/spf13/cobra"
)

type classifyOptions struct {
	profile classify.Profile
	dir     classify.Direction
	framing classify.Framing
}

func newClassifyCmd() *cobra.Command {
	var profile, dir, framing string
	cmd := &cobra.Command{
		Use:   "classify [--profile P] [--dir h2s|s2h] [--framing ndjson|lsp|auto]",
		Short: "Judge each JSON-RPC frame read from stdin, one JSON object per frame",
		Long: `Reads frames from stdin and prints, for each, one JSON object on stdout:
its kind, its id exactly as on the wire, its method, its findings, and the
answer a strict receiver owes (for a batch, each member too). Each frame is
judged on its own; use "rpctap check" for a whole session.`,
		Args: takesArgs(0, 0, "", `echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | rpctap classify`),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var o classifyOptions
			var err error
			if o.profile, err = classify.ParseProfile(profile); err != nil {
				return usageError(err)
			}
			if o.dir, err = classify.ParseDirection(dir); err != nil || o.dir == classify.Err {
				return usageError(fmt.Errorf("unknown direction %q: use h2s (what a server reads) or s2h (what a server writes)", dir))
			}
			if o.framing, err = classify.ParseFraming(framing); err != nil {
				return usageError(err)
			}
			return runClassify(cmd.InOrStdin(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "auto", "rules to judge by: auto, jsonrpc, mcp or lsp (auto judges by plain JSON-RPC, or LSP with lsp framing)")
	cmd.Flags().StringVar(&dir, "dir", "h2s", "direction the frames travel: h2s (host to server) or s2h (server to host)")
	cmd.Flags().StringVar(&framing, "framing", "ndjson", "how frames are delimited: ndjson (one per line), lsp (Content-Length headers) or auto")
	return cmd
}

func runClassify(in io.Reader, out io.Writer, o classifyOptions) error {
	w := bufio.NewWriterSize(out, 64<<10)
	fr := classify.NewFrameReader(in, o.framing, 0)
	var js, line []byte
	for {
		f, err := fr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("reading stdin: %w", err)
		}
		p := o.profile
		if p == classify.Auto && f.Info.Framing == classify.FramingLSP {
			p = classify.LSP
		}
		m := classify.ClassifyFramed(f.Body(), f.Info, o.dir, p)
		// Printed JSON goes through AppendSafeJSON, as all of rpctap's does.
		js = m.AppendJSON(js[:0])
		line = append(classify.AppendSafeJSON(line[:0], js), '\n')
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("writing stdout: %w", err)
		}
	}
	return w.Flush()
}

// usageError marks an error in the command line: exit status 2.
func usageError(err error) error { return exitError{code: 2, msg: plainFileError(err)} }
