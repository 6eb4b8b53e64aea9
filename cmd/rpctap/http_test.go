package main

import (
	"strings"
	"testing"
)

func TestHTTPListensBeyondLoopbackOnlyWithListenAnyAndSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		any      bool
		refused  bool
		warnings bool
	}{
		{"127.0.0.1:0", false, false, false},
		{"[::1]:8080", false, false, false},
		{"localhost:8080", false, false, false},
		{"0.0.0.0:8080", false, true, false},
		{":8080", false, true, false},
		{"192.168.1.5:8080", false, true, false},
		{"0.0.0.0:8080", true, false, true},
	} {
		risk, err := checkListen(tc.addr, tc.any)
		if (err != nil) != tc.refused || (risk != "") != tc.warnings {
			t.Errorf("--listen %s (--listen-any %v): refused %v (%v), risk %q", tc.addr, tc.any, err != nil, err, risk)
		}
		if err != nil && (!strings.Contains(err.Error(), "--listen-any") || !strings.Contains(err.Error(), "credentials")) {
			t.Errorf("--listen %s is refused with %q: it must say why and what to do", tc.addr, err)
		}
	}
}

func TestHTTPTargetMustBeAnHTTPOrHTTPSURL(t *testing.T) {
	for _, s := range []string{"", "127.0.0.1:3001", "ftp://x/mcp", "http:///mcp"} {
		if _, err := parseTarget(s); err == nil {
			t.Errorf("--target %q was taken", s)
		}
	}
	for _, s := range []string{"http://127.0.0.1:3001/mcp", "https://mcp.example.com/v1/mcp?k=1"} {
		if _, err := parseTarget(s); err != nil {
			t.Errorf("--target %q: %v", s, err)
		}
	}
}
