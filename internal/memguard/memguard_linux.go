// Package memguard gives tests memory that faults at once when code reads
// or writes past a slice's ends: pages with a page on each side that the
// process may not touch. It is for tests of code the compiler does not
// bounds-check (assembly).
package memguard

import (
	"syscall"
	"testing"
)

// Region returns pages of memory between two guard pages, unmapped when
// the test ends. A slice cut from its end (region[len(region)-n:]) or its
// start (region[:n:n]) has a guard page right after or before it.
func Region(t testing.TB, pages int) []byte {
	t.Helper()
	size := syscall.Getpagesize()
	m, err := syscall.Mmap(-1, 0, (pages+2)*size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("cannot map guarded memory: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(m) })
	for _, guard := range [][]byte{m[:size], m[(pages+1)*size:]} {
		if err := syscall.Mprotect(guard, syscall.PROT_NONE); err != nil {
			t.Fatalf("cannot protect a guard page: %v", err)
		}
	}
	return m[size : (pages+1)*size : (pages+1)*size]
}
