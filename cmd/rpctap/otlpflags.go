package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tap/otlp"
	"github.com/spf13/pflag"
)

// otlpFlags are the flags of a tap that sends a span per answered request
// to an OTLP/HTTP collector (rpctap run, rpctap http), and the exporter
// they start.
type otlpFlags struct {
	otlpEndpoint string
	otlpHeaders  []string
	spans        *otlp.Exporter
}

func (o *otlpFlags) add(f *pflag.FlagSet) {
	f.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "send a span per answered request to this OTLP/HTTP collector, as in http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT, when set)")
	f.StringArrayVar(&o.otlpHeaders, "otlp-header", nil, "a header K=V for the OTLP collector (with OTEL_EXPORTER_OTLP_HEADERS); repeatable")
}

// calls checks the flags and returns the tap's Options.Calls, nil when no
// collector is wanted. The exporter it sends to is started by start,
// after the tap is made and before any traffic.
func (o *otlpFlags) calls() (func(tap.Call), error) {
	wanted := otlp.Wanted(o.otlpEndpoint, os.Getenv)
	if len(o.otlpHeaders) > 0 && !wanted {
		return nil, usageError(errors.New("--otlp-header needs a collector: give --otlp-endpoint URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)"))
	}
	if !wanted {
		return nil, nil
	}
	return func(c tap.Call) { o.spans.Send(c) }, nil
}

// start starts the exporter of the session named session, its service
// service.
func (o *otlpFlags) start(service, session string, warn func(string)) error {
	spans, err := otlp.New(otlp.Config{Endpoint: o.otlpEndpoint, Headers: o.otlpHeaders, Service: service, Session: session,
		Getenv: os.Getenv, Warn: warn})
	if err != nil {
		return usageError(err)
	}
	o.spans = spans
	return nil
}

// close gives the collector the spans still queued, waiting no longer
// than otlpFlushWait, and says how the export went when say is set.
func (o *otlpFlags) close(say bool, warn func(string)) {
	if o.spans == nil {
		return
	}
	st := o.spans.Close(otlpFlushWait)
	if say {
		warn(fmt.Sprintf("OTLP: %d spans sent, %d dropped, %d not taken by the collector, of %d answered requests", st.Sent, st.Dropped, st.Failed, st.Calls))
	}
}

// otlpFlushWait is how long a tap waits, at its end, for the OTLP
// collector to take the spans still queued: a collector that does not
// answer delays the tap's exit by no more than this.
const otlpFlushWait = time.Second
