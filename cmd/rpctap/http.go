package main

import (
	"crypto/tls"
	"crypto/x509"
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
	otlpFlags
	target, listen string
	listenAny      bool
	intercept      string
	holdTimeout    time.Duration
	caFile         string
	// view, when set, shows the tap's live view on this terminal
	// (rpctap watch --http) in place of waiting for a signal.
	view func(given string, quit <-chan struct{}) error
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
	f.StringVar(&o.listen, "listen", "127.0.0.1:0", "the address to listen on, HOST:PORT (port 0: a free one)")
	f.BoolVar(&o.listenAny, "listen-any", false, "allow a --listen address beyond loopback: whoever reaches it talks to the server with the host's credentials")
	f.StringVar(&o.intercept, "intercept", "", "hold the host's POSTs, and the server's answers and SSE events, that match this filter (as in the view: 'method:tools/call') until a view forwards, edits, drops or answers them")
	f.DurationVar(&o.holdTimeout, "hold-timeout", tap.DefaultHoldTimeout, "with --intercept, or when a view intercepts: how long a frame is held at most before it goes on as it was")
	f.StringVar(&o.caFile, "ca-file", "", "trust the CA certificates in this PEM file for an https target, beside those the system trusts")
	o.tapFlags.add(f, "the target's host", "the value of env var NAME, and the header NAME")
	o.otlpFlags.add(f)
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
	rt, err := targetTransport(o.caFile)
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
	calls, err := o.calls()
	if err != nil {
		return err
	}
	t, err := tap.New(tap.Options{Argv: []string{target.Redacted()}, Name: name, Framing: classify.FramingNDJSON,
		Record: !o.noRecord, Path: o.record, Overwrite: o.force, Redact: tapRedact, NoRedact: o.noRedact, Listen: !o.noListen,
		Transport: sessions.TransportHTTP, Warn: warn, Calls: calls, Intercept: o.intercept, HoldTimeout: o.holdTimeout})
	if err != nil {
		return usageError(err)
	}
	if calls != nil {
		if err := o.start(name, t.ID(), warn); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("cannot listen on %s: %v", o.listen, err)}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	feed := t.Feed()
	srv := &http.Server{Handler: httptap.New(httptap.Options{Target: target, Feed: feed, Redactor: t.Redactor(), Redact: headers, Transport: rt})}
	given := url.URL{Scheme: "http", Host: ln.Addr().String(), Path: target.Path, RawPath: target.RawPath, RawQuery: target.RawQuery}
	fmt.Fprintln(cmd.OutOrStdout(), given.String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var viewErr error
	if o.view != nil {
		viewErr, err = viewUntil(o.view, given.String(), sigs, served, srv)
	} else {
		select {
		case <-sigs:
		case err = <-served:
		}
	}
	srv.Close() // open streams end with the proxy
	res := feed.Close()
	o.otlpFlags.close(!o.quiet, warn)
	if res.Path != "" && !o.quiet {
		warn("session recorded in " + res.Path)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitError{code: 1, msg: fmt.Sprintf("stopped serving on %s: %v", ln.Addr(), err)}
	}
	return viewErr
}

// targetTransport is how the proxy reaches an https target: trusting the
// certificates the system trusts (SSL_CERT_FILE and SSL_CERT_DIR change
// them, as for any Go program) and, with --ca-file, those of caFile too.
// nil: the proxy's default transport.
func targetTransport(caFile string) (http.RoundTripper, error) {
	if caFile == "" {
		return nil, nil
	}
	const want = "give the certificate of the CA that signed the server's, in PEM form (-----BEGIN CERTIFICATE-----), as in: --ca-file ca.pem"
	shown := classify.EscapeString(caFile, 200)
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read --ca-file %s (%v); %s", shown, errors.Unwrap(err), want)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s holds no certificate rpctap can read; %s", shown, want)
	}
	t := httptap.NewTransport()
	t.TLSClientConfig = &tls.Config{RootCAs: pool}
	return t, nil
}
