// Command nulltap is the floor for a stdio tap written in Go: it spawns
// CMD and copies stdin to CMD's stdin and CMD's stdout to stdout, a
// goroutine per direction, judging nothing. With -record FILE it also
// hands a copy of every chunk it forwards over a channel to a goroutine
// that appends it to FILE (buffered, flushed whenever the channel is
// empty), the shape of rpctap's recorder without its classification or
// JSON encoding. The benchmarks run it next to rpctap to tell the cost of
// one more process hop, and of the recorder handoff, from rpctap's own.
//
//	nulltap [-record FILE] CMD [ARGS...]
package main

import (
	"bufio"
	"flag"
	"io"
	"os"
	"os/exec"
	"sync"
)

type chunk struct{ b []byte }

var pool = sync.Pool{New: func() any { return make([]byte, 0, 64<<10) }}

func main() {
	record := flag.String("record", "", "append a copy of every chunk to this file, from a recorder goroutine")
	flag.Parse()
	args := flag.Args()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	// Pipes of our own: exec's StdoutPipe is closed by Wait, which could
	// cut the copy short.
	inR, in, err := os.Pipe()
	if err != nil {
		os.Exit(1)
	}
	out, outW, err := os.Pipe()
	if err != nil {
		os.Exit(1)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		os.Exit(127)
	}
	inR.Close()
	outW.Close()
	var items chan chunk
	recDone := make(chan struct{})
	if *record != "" {
		f, err := os.Create(*record)
		if err != nil {
			os.Exit(1)
		}
		items = make(chan chunk, 1024)
		go func() {
			bw := bufio.NewWriterSize(f, 256<<10)
			for it := range items {
				bw.Write(it.b)
				pool.Put(it.b[:0])
			drain:
				for {
					select {
					case it, ok := <-items:
						if !ok {
							break drain
						}
						bw.Write(it.b)
						pool.Put(it.b[:0])
					default:
						break drain
					}
				}
				bw.Flush()
			}
			bw.Flush()
			f.Close()
			close(recDone)
		}()
	} else {
		close(recDone)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	relay := func(dst io.WriteCloser, src io.Reader) {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
				if items != nil {
					items <- chunk{append(pool.Get().([]byte), buf[:n]...)}
				}
			}
			if err != nil {
				break
			}
		}
		dst.Close()
	}
	go relay(in, os.Stdin)
	go relay(os.Stdout, out)
	err = cmd.Wait()
	wg.Wait() // the host must close stdin, as with rpctap
	if items != nil {
		close(items)
	}
	<-recDone
	if err != nil {
		os.Exit(1)
	}
}
