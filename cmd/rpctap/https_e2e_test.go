package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An https target: server-everything behind TLS, whose certificate no
// system trusts. rpctap trusts it when SSL_CERT_FILE or --ca-file names
// it, says how to when neither does, and refuses a --ca-file that holds
// no certificate with a sentence that says what to give.
func TestAnHTTPSTargetIsTappedWhenItsCAIsTrustedBySSLCertFileOrCAFile(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	port := freePort(t)
	srv := exec.Command(server, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	startLine(t, srv, "listening on port")
	plain, _ := url.Parse("http://127.0.0.1:" + port)
	rp := httputil.NewSingleHostReverseProxy(plain)
	rp.FlushInterval = -1
	front := httptest.NewUnstartedServer(rp)
	front.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
	front.StartTLS()
	defer front.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw}), 0o600)
	target := front.URL + "/mcp"

	tapped := func(env []string, flags ...string) (given string, stop func()) {
		tp := exec.Command(bin, append([]string{"http", "--target", target, "--no-record", "--no-listen"}, flags...)...)
		tp.Env = append(os.Environ(), env...)
		given = startLine(t, tp, "http://")
		return given, func() {
			tp.Process.Signal(syscall.SIGINT)
			tp.Wait()
		}
	}
	list := func(url string) []byte {
		out, _ := timed(t, dir, inspector, "--cli", "--transport", "http", "--server-url", url, "--method", "tools/list")
		return out
	}
	direct := list(plain.String() + "/mcp")
	for name, how := range map[string]struct {
		env, flags []string
	}{
		"SSL_CERT_FILE": {env: []string{"SSL_CERT_FILE=" + ca}},
		"--ca-file":     {flags: []string{"--ca-file", ca}},
	} {
		given, stop := tapped(how.env, how.flags...)
		if got := list(given); !bytes.Equal(got, direct) || !bytes.Contains(got, []byte(`"echo"`)) {
			t.Errorf("%s: tools/list through rpctap to the https target differs from direct:\n direct %.300s\n tapped %.300s", name, direct, got)
		}
		stop()
	}

	// Trusted by nothing: the host is answered 502 with what to type.
	given, stop := tapped([]string{"SSL_CERT_FILE=" + filepath.Join(dir, "none.pem")})
	resp, err := http.Post(given, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	stop()
	if resp.StatusCode != http.StatusBadGateway || !bytes.Contains(body, []byte("--ca-file ca.pem")) {
		t.Errorf("an https target no one trusts was answered %d %s", resp.StatusCode, body)
	}

	// A --ca-file that is no certificate is refused before anything starts.
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not a certificate\n"), 0o600)
	for _, f := range []string{bad, filepath.Join(dir, "missing.pem")} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // one that took it would run until stopped
		out, err := exec.CommandContext(ctx, bin, "http", "--target", target, "--no-record", "--no-listen", "--ca-file", f).CombinedOutput()
		cancel()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !bytes.Contains(out, []byte("as in: --ca-file ca.pem")) || !bytes.Contains(out, []byte(filepath.Base(f))) {
			t.Errorf("--ca-file %s: %v\n%s", filepath.Base(f), err, out)
		}
	}
}
