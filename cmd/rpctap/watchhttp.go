package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tui"
	"github.com/spf13/cobra"
)

// This file holds rpctap watch --http URL: rpctap http with the live view
// on this terminal.

// httpWatchFlags are watch's flags for --http, those of rpctap http.
type httpWatchFlags struct {
	target, listen string
	listenAny      bool
	caFile         string
}

func (h *httpWatchFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&h.target, "http", "", "tap the Streamable HTTP (or HTTP+SSE) server at this URL, as rpctap http --target does, and watch it here")
	f.StringVar(&h.listen, "listen", "127.0.0.1:0", "with --http: the address to listen on, HOST:PORT (port 0: a free one)")
	f.BoolVar(&h.listenAny, "listen-any", false, "with --http: allow a --listen address beyond loopback")
	f.StringVar(&h.caFile, "ca-file", "", "with --http: trust the CA certificates of this PEM file for an https server")
}

// watchArgs is watch's argument check: a server command, or none with
// --http.
func watchArgs(server cobra.PositionalArgs) cobra.PositionalArgs {
	none := takesArgs(0, 0, "", "rpctap watch --http http://127.0.0.1:3001/mcp")
	return func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("http") {
			return none(cmd, args)
		}
		return server(cmd, args)
	}
}

// runWatchHTTP runs rpctap http in front of the server at h.target and
// shows its live view here; quitting the view stops the proxy.
func runWatchHTTP(cmd *cobra.Command, h httpWatchFlags, host, open, record string, force bool) error {
	if host != "" || open != "" {
		return usageError(errors.New("rpctap watch --http taps a server the host reaches by URL: --host and --open are for a server rpctap starts; start the host yourself, with the URL the view shows"))
	}
	if err := checkRecordPath(record, force); err != nil {
		return err
	}
	tty, err := openTerminal()
	if err != nil {
		return usageError(fmt.Errorf("rpctap watch shows the live view, which needs a terminal, and this process has none (/dev/tty cannot be opened), so it started nothing; to tap the server with no terminal, use: rpctap http --target %s (and rpctap tail to follow it)",
			shellQuote(classify.EscapeString(h.target, 200))))
	}
	tty.Close()
	o := httpOptions{target: h.target, listen: h.listen, listenAny: h.listenAny, caFile: h.caFile, view: watchHTTPView}
	o.record, o.force = record, force
	return runHTTP(cmd, o)
}

// watchHTTPView shows the view of the HTTP tap this process runs until
// it is quit or quit closes; its status line says the URL to give the
// host.
func watchHTTPView(given string, quit <-chan struct{}) error {
	src, err := source.AttachWhenUp(fmt.Sprint(os.Getpid()), quit)
	if err != nil {
		return fmt.Errorf("the live view cannot attach to this tap: %w", err)
	}
	return runUIUntil(quit, []*source.Source{src}, tui.WithStatus("give the host "+classify.EscapeString(given, 0)))
}

// viewUntil runs view until it ends, a signal comes (sigs) or the server
// stops serving (served, which then still holds its error); quit tells
// the view of the last two. It returns the view's error and Serve's.
func viewUntil(view func(string, <-chan struct{}) error, given string, sigs <-chan os.Signal, served chan error, srv *http.Server) (viewErr, serveErr error) {
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case err := <-served:
			served <- err
		}
		close(quit)
	}()
	viewErr = view(given, quit)
	srv.Close()
	<-quit
	return viewErr, <-served
}
