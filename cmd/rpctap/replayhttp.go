package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/replay"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tap/httptap"
	"github.com/spf13/cobra"
)

// runReplayHTTPServer serves the recording as a Streamable HTTP server
// on --http until a signal stops it, and prints the URL to give the host.
func runReplayHTTPServer(cmd *cobra.Command, o replayOptions) error {
	ig, err := o.serveFlags()
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(o.http); err != nil {
		return usageError(fmt.Errorf("--http %q is not HOST:PORT, as in 127.0.0.1:8080 (127.0.0.1:0 takes a free port)", o.http))
	}
	stderr := cmd.ErrOrStderr()
	red, err := o.redaction(o.asServer, stderr)
	if err != nil {
		return err
	}
	opts := o.serveOptions(ig, stderr)
	if opts.Redactor, err = sessions.NewRedactor(os.Environ(), red.Flags); err != nil {
		return usageError(err)
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return exitError{code: 1, msg: listenError(o.http, err)}
	}
	srv, err := replay.NewHTTPServer(o.asServer, opts)
	if err != nil {
		ln.Close()
		return exitError{code: 2, msg: plainFileError(err)}
	}
	ctx, stop := replaySignals(nil)
	defer stop()
	hs := &http.Server{Handler: srv}
	fmt.Fprintln(cmd.OutOrStdout(), (&url.URL{Scheme: "http", Host: ln.Addr().String(), Path: srv.Path()}).String())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	// A signal is how a server ends: the replay ends with status 0, as
	// rpctap http does.
	hs.Close() // open streams end with the replay
	st, cerr := srv.Close(context.Background())
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitError{code: 1, msg: fmt.Sprintf("stopped serving on %s: %v", ln.Addr(), err)}
	}
	if cerr != nil {
		return exitError{code: 2, msg: plainFileError(cerr)}
	}
	o.summary(stderr, st)
	return nil
}

// listenError says why an address cannot be listened on, and what to do.
func listenError(addr string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Sprintf("cannot listen on %s: another program listens there already; stop it, or give another address, as in --http 127.0.0.1:0 for a free port", addr)
	}
	return fmt.Sprintf("cannot listen on %s: %v", addr, err)
}

// runReplayHTTPHost plays the recorded host against the Streamable HTTP
// server at --target, through an HTTP tap of its own on loopback that
// records the run as rpctap http does, and prints the report.
func runReplayHTTPHost(cmd *cobra.Command, o replayOptions) error {
	ig, err := o.parseIgnore()
	if err != nil {
		return err
	}
	target, err := parseTarget(o.target)
	if err != nil {
		return usageError(err)
	}
	stderr := cmd.ErrOrStderr()
	warn := o.warner(stderr)
	red, err := o.redaction(o.asHost, stderr)
	if err != nil {
		return err
	}
	t, err := tap.New(tap.Options{Argv: []string{target.Redacted()}, Name: target.Host, Framing: classify.FramingNDJSON,
		Record: !o.noRecord, Path: o.record, Overwrite: o.force, Redact: red.Flags, Transport: sessions.TransportHTTP, Warn: warn})
	if err != nil {
		return usageError(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return exitError{code: 1, msg: listenError("127.0.0.1:0", err)}
	}
	feed := t.Feed()
	redact := t.Redactor()
	proxy := &http.Server{Handler: httptap.New(httptap.Options{Target: target, Feed: feed, Redactor: redact})}
	go proxy.Serve(ln)
	via := *target
	via.Scheme, via.Host = "http", ln.Addr().String()
	opts := replay.HostOptions{Ignore: ig, Timeout: o.timeout, Notifications: o.notifications, Redactor: redact, Log: o.logger(stderr)}
	ctx, stop := replaySignals(nil)
	defer stop()
	rep, err := replay.PlayHTTP(ctx, o.asHost, &via, nil, opts)
	proxy.Close()
	res := feed.Close()
	if err := stoppedBy(ctx); err != nil {
		return err
	}
	if err != nil {
		return exitError{code: 2, msg: plainFileError(err)}
	}
	run := replay.HostRun{File: o.asHost, Argv: []string{redact.MaskString(target.Redacted())}, Session: res.Path}
	if o.json {
		replay.WriteHostJSON(cmd.OutOrStdout(), run, rep)
	} else {
		replay.WriteHostText(cmd.OutOrStdout(), run, rep)
	}
	if o.exitCode && rep.Differs() {
		return exitError{code: 1}
	}
	return nil
}
