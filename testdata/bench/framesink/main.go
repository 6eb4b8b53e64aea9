// Command framesink reads stdin to its end, counting bytes and
// newline-terminated frames, and reports both on stderr at EOF:
//
//	framesink: BYTES bytes FRAMES frames
//
// It is the consumer of the throughput benchmark's s2h leg and the server
// (CMD) of its h2s leg.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

func main() {
	buf := make([]byte, 256<<10)
	var total, frames int64
	for {
		n, err := os.Stdin.Read(buf)
		total += int64(n)
		frames += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "framesink:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "framesink: %d bytes %d frames\n", total, frames)
}
