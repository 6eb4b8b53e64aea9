package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tap/httptap"
	"github.com/spf13/cobra"
)

type httpOptions struct {
	tapFlags
	target, listen string
	listenAny      bool
	intercept      string
	holdTimeout    time.Duration
}

func newHTTPCmd() *cobra.Command {
	var o httpOptions
	cmd := &cobra.Command{
		Use:   "http --target URL [--listen ADDR]",
		Short: "Tap a Streamable HTTP server: a reverse proxy the host is given in place of the server's URL",
		Long: `Listens on ADDR (loopback, a free port by default) and relays every request
the host makes (POST, GET, DELETE) to the server at URL, and every response
back, with bodies and headers unchanged (hop-by-hop headers and Host aside)
and streamed: each server-sent event reaches the host as soon as it came.
Each JSON-RPC message that crosses is recorded and judged as on stdio, and
live views ("rpctap ui", "rpctap ls") see them. rpctap adds no timeout,
retry or header of its own; a server it cannot reach is answered 502 with a
JSON body that says why.

It prints the URL to give the host on stdout (the listen address with the
target's path), and runs until it is interrupted.`,
		Args: takesArgs(0, 0, "", "rpctap http --target http://127.0.0.1:3001/mcp"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHTTP(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "", "the server's URL, as in http://127.0.0.1:3001/mcp (http or https)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:0", "the address to listen on (default: loopback, a free port)")
	f.BoolVar(&o.listenAny, "listen-any", false, "allow a --listen address beyond loopback: whoever reaches it talks to the server with the host's credentials")
	f.StringVar(&o.intercept, "intercept", "", "hold the host's POSTs that match this filter (as in the view: 'method:tools/call') until a view forwards, edits, drops or answers them")
	f.DurationVar(&o.holdTimeout, "hold-timeout", tap.DefaultHoldTimeout, "with --intercept, or when a view intercepts: how long a request is held at most before it goes on as it was")
	o.tapFlags.add(f, "the target's host", "the value of env var NAME, and the header NAME")
	return cmd
}

// parseTarget reads --target: an absolute http or https URL.
func parseTarget(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("rpctap http needs the server's URL: give --target, as in: rpctap http --target http://127.0.0.1:3001/mcp")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--target %q is not an http or https URL with a host, as in http://127.0.0.1:3001/mcp", s)
	}
	return u, nil
}

// checkListen refuses an address beyond loopback unless --listen-any
// allows it, and says why that is a risk.
func checkListen(addr string, any bool) (risk string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--listen %q is not HOST:PORT, as in 127.0.0.1:8080: %w", addr, err)
	}
	if host == "localhost" {
		return "", nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "", nil
	}
	risk = fmt.Sprintf("--listen %s is reachable from other machines: whoever reaches it talks to the server as the host does, with the credentials the host sends, and rpctap does not check who they are", addr)
	if !any {
		return "", errors.New(risk + "; listen on 127.0.0.1, or give --listen-any to open it anyway")
	}
	return risk, nil
}

func runHTTP(cmd *cobra.Command, o httpOptions) error {
	target, err := parseTarget(o.target)
	if err != nil {
		return usageError(err)
	}
	risk, err := checkListen(o.listen, o.listenAny)
	if err != nil {
		return usageError(err)
	}
	warn := o.warner(cmd.ErrOrStderr())
	if risk != "" {
		warn(risk)
	}
	// A --redact NAME names an environment variable whose value is
	// masked, a header whose value is never recorded, or both; one with
	// no such variable names a header only.
	var tapRedact, headers []string
	for _, r := range o.redact {
		n, _, given := strings.Cut(r, "=")
		if _, set := os.LookupEnv(n); given || set {
			tapRedact = append(tapRedact, r)
		}
		if !given {
			headers = append(headers, n)
		}
	}
	name := o.name
	if name == "" {
		name = target.Host
	}
	t, err := tap.New(tap.Options{Argv: []string{target.Redacted()}, Name: name, Framing: classify.FramingNDJSON,
		Record: !o.noRecord, Path: o.record, Overwrite: o.force, Redact: tapRedact, NoRedact: o.noRedact, Listen: !o.noListen,
		Transport: sessions.TransportHTTP, Warn: warn, Intercept: o.intercept, HoldTimeout: o.holdTimeout})
	if err != nil {
		return usageError(err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("cannot listen on %s: %v", o.listen, err)}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	feed := t.Feed()
	srv := &http.Server{Handler: httptap.New(httptap.Options{Target: target, Feed: feed, Redactor: t.Redactor(), Redact: headers})}
	given := url.URL{Scheme: "http", Host: ln.Addr().String(), Path: target.Path, RawPath: target.RawPath, RawQuery: target.RawQuery}
	fmt.Fprintln(cmd.OutOrStdout(), given.String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-sigs:
	case err = <-served:
	}
	srv.Close() // open streams end with the proxy
	res := feed.Close()
	if res.Path != "" && !o.quiet {
		warn("session recorded in " + res.Path)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitError{code: 1, msg: fmt.Sprintf("stopped serving on %s: %v", ln.Addr(), err)}
	}
	return nil
}
