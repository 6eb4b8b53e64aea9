package httptap

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// tlsTarget is an https server that answers each POST's request.
func tlsTarget(t *testing.T) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"tls":`+map[bool]string{true: "true", false: "false"}[r.TLS != nil]+`}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// proxyWith is proxyTo with the proxy's transport given.
func proxyWith(t *testing.T, target string, rt http.RoundTripper) *proxied {
	u, _ := url.Parse(target)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{target}, Record: true, Path: path, Transport: sessions.TransportHTTP, Env: []string{}, Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	p := &proxied{path: path, feed: feed}
	p.srv = httptest.NewServer(New(Options{Target: u, Feed: feed, Transport: rt}))
	p.url = p.srv.URL + u.Path
	return p
}

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAnHTTPSTargetIsRelayedOverTLSWhenItsCertificateIsTrusted(t *testing.T) {
	srv := tlsTarget(t)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	rt := NewTransport()
	rt.TLSClientConfig = &tls.Config{RootCAs: pool}
	p := proxyWith(t, srv.URL+"/mcp", rt)
	if status, body := post(t, p.url); status != 200 || body != `{"jsonrpc":"2.0","id":1,"result":{"tls":true}}` {
		t.Fatalf("through the proxy to an https target the host got %d %s", status, body)
	}
	if _, evs := p.frames(t); len(evs) != 2 || httpOf(t, evs[1]).Status != 200 {
		t.Errorf("the session holds %d frames, want the request and its answer", len(evs))
	}
}

func TestAnHTTPSTargetWithAnUntrustedCertificateIsAnswered502SayingHowToTrustIt(t *testing.T) {
	srv := tlsTarget(t)
	p := proxyWith(t, srv.URL+"/mcp", nil)
	status, body := post(t, p.url)
	var why struct{ Error string }
	json.Unmarshal([]byte(body), &why)
	if status != http.StatusBadGateway || !strings.Contains(why.Error, "unknown authority") || !strings.Contains(why.Error, "--ca-file ca.pem") {
		t.Fatalf("an https target the system does not trust was answered %d %s", status, body)
	}
	_, evs := p.frames(t)
	if h := httpOf(t, evs[len(evs)-1]); h.Status != 502 || !strings.Contains(h.Error, "--ca-file") {
		t.Errorf("the 502 was recorded as %s", evs[len(evs)-1].HTTP)
	}
}
