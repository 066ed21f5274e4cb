package main

import (
	"strings"
	"testing"
)

// Written by TestUnmapInitCodeKeepsWrites before unmapInitCode runs: one
// in a data page the file initialises, one in a zero-filled one.
var (
	unmapData = [2]int{1, 2}
	unmapBSS  int
)

// TestUnmapInitCodeKeepsWrites: what the process wrote before
// unmapInitCode, in the binary's writable segments and on the heap, is
// there after it, and the code it dropped runs again from the file.
func TestUnmapInitCodeKeepsWrites(t *testing.T) {
	if traced() {
		t.Skip("under a tracer unmapInitCode does nothing")
	}
	if phdr, phnum := auxPhdr(); phdr == 0 || phnum == 0 {
		t.Skip("no AT_PHDR in /proc/self/auxv: unmapInitCode does nothing")
	}
	unmapData[0], unmapBSS = 7, 42
	heap := strings.Repeat("x", 1<<20)
	unmapInitCode()
	if unmapData[0] != 7 || unmapBSS != 42 {
		t.Errorf("after unmapInitCode: data %d, bss %d; want 7, 42", unmapData[0], unmapBSS)
	}
	if strings.Count(heap, "x") != 1<<20 {
		t.Error("the heap changed")
	}
}
