// Command blackhole is a collector that never answers, for the OTLP
// benchmark: it listens on a local TCP port, writes its address to the
// file -addr-file, and takes every connection and every byte sent on it
// without ever answering, until it is killed.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
)

func main() {
	addrFile := flag.String("addr-file", "", "where to write the address it listens on")
	flag.Parse()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "blackhole:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*addrFile, []byte(l.Addr().String()), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "blackhole:", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go io.Copy(io.Discard, c)
	}
}
