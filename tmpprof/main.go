package main

import (
	"bufio"
	"os"
	"runtime/pprof"

	"github.com/rpctap/rpctap/sessions/check"
)

func main() {
	pf, _ := os.Create(os.Args[2])
	pprof.StartCPUProfile(pf)
	for i := 0; i < 3; i++ {
		f, _ := os.Open(os.Args[1])
		check.Run(bufio.NewReaderSize(f, 1<<20), check.Options{})
		f.Close()
	}
	pprof.StopCPUProfile()
}
