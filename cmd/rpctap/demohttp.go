package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/demo"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tap/httptap"
	"github.com/rpctap/rpctap/tui"
)

// runDemoHTTP plays the demo's HTTP scenario: the demo's HTTP server on a
// loopback port, an HTTP tap in front of it (as rpctap http is), and the
// scripted HTTP host POSTing to the tap, shown as the stdio demo is.
func runDemoHTTP(stdout io.Writer, o demoOptions, steps []demo.Step) error {
	srvLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the demo could not start its HTTP server: %w", err)
	}
	server := &http.Server{Handler: demo.HTTPServer()}
	go server.Serve(srvLn)
	defer server.Close()
	target := &url.URL{Scheme: "http", Host: srvLn.Addr().String(), Path: "/mcp"}

	t, err := tap.New(tap.Options{Argv: []string{target.String()}, Name: "demo-http", Framing: classify.FramingNDJSON, Profile: classify.MCP,
		Timeout: demoTimeout, Record: true, Path: o.record, Overwrite: o.force, Listen: true, Transport: sessions.TransportHTTP,
		Warn: func(s string) { fmt.Fprintln(os.Stderr, "rpctap: "+s) }})
	if err != nil {
		return usageError(err)
	}
	feed := t.Feed()
	tapLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		feed.Close()
		return fmt.Errorf("the demo could not start its HTTP tap: %w", err)
	}
	proxy := &http.Server{Handler: httptap.New(httptap.Options{Target: target, Feed: feed, Redactor: t.Redactor()})}
	go proxy.Serve(tapLn)

	ended := make(chan struct{})
	src, err := source.AttachWhenUp(fmt.Sprint(os.Getpid()), ended)
	if err != nil {
		proxy.Close()
		feed.Close()
		return fmt.Errorf("the demo could not start: %w", err)
	}
	host := demo.NewHTTPHost("http://" + tapLn.Addr().String() + "/mcp")
	host.Speed, host.Note = o.speed, t.Note
	runner := demo.NewRunner(steps, host)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	finish := func() {
		proxy.Close()
		feed.Close()
		close(ended)
	}
	if o.noUI {
		go func() {
			runner.Run(ctx)
			select { // what is still in flight times out first
			case <-time.After(demoTimeout + 500*time.Millisecond):
			case <-ctx.Done():
			}
			finish()
		}()
		err = runTail(stdout, src, nil, false, src.Yield)
		src.Close()
		return err
	}
	hangup()
	go runner.Run(ctx)
	err = runUI([]*source.Source{src}, tui.WithDemo(runner, demoStates(runner)))
	cancel()
	finish()
	return err
}
