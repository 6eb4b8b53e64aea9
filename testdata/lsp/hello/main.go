// Command hello is the Go file rpctap's tests open in gopls (rpctap watch
// --framing lsp --open testdata/lsp/hello/main.go -- gopls).
package main

import "fmt"

// Greet says hello to name.
func Greet(name string) string { return "hello, " + name }

func main() { fmt.Println(Greet("world")) }
