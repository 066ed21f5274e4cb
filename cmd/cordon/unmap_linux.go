package main

import (
	"encoding/binary"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// unmapInitCode drops from the process's page table the pages of cordon's
// binary that package initialisation mapped, once it is over: the code
// and read-only data of the binary's read-only segments (never the
// writable ones, nor the RELRO pages, which the C startup wrote). They
// stay in the page cache; what the command then runs is mapped again by
// its first touch, 64 KiB at a time.
//
// Every linked package is initialised in every process, and its
// initialisation sits wherever the linker put the package: some 180
// packages touch windows all over the binary's 6 MB of code and 4 MB of
// function tables, and each first touch maps the 64 KiB around it. A cold
// run kept 1.2 MB of them mapped to its end for nothing (peak RSS 12.3 →
// 11.05 MB, docs/performance.md). The page cache holds the same pages
// either way; only the process's share of them, its RSS, changes.
//
// It does nothing when /proc/self/auxv gives no AT_PHDR and AT_PHNUM, or
// when the program headers /proc/self/exe holds do not describe this
// process as expected; nor under a tracer (strace too): a debugger's
// breakpoints are written into private copies of the code pages, which
// MADV_DONTNEED would drop. (A uprobe's copy is dropped all the same:
// nothing here sees one.)
func unmapInitCode() {
	if traced() {
		return
	}
	phdr, phnum := auxPhdr()
	if phdr == 0 || phnum == 0 || phnum > 64 {
		return
	}
	// The program headers, as the file has them (the ELF header says
	// where).
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return
	}
	defer f.Close()
	head := make([]byte, 4096)
	if n, _ := f.ReadAt(head, 0); n < 64 || string(head[:4]) != "\x7fELF" || head[4] != 2 { // 64-bit
		return
	}
	const (
		ptLoad  = 1
		ptPhdr  = 6
		ptRelro = 0x6474e552
		pfW     = 2
		size    = 56 // Elf64_Phdr
	)
	off := binary.NativeEndian.Uint64(head[32:])
	if binary.NativeEndian.Uint16(head[54:]) != size || binary.NativeEndian.Uint16(head[56:]) != uint16(phnum) || off+uint64(phnum)*size > uint64(len(head)) {
		return
	}
	type seg struct {
		typ, flags  uint32
		vaddr, size uint64
	}
	segs := make([]seg, phnum)
	for i := range segs {
		b := head[off+uint64(i)*size:]
		segs[i] = seg{
			typ:   binary.NativeEndian.Uint32(b[0:]),
			flags: binary.NativeEndian.Uint32(b[4:]),
			vaddr: binary.NativeEndian.Uint64(b[16:]),
			size:  binary.NativeEndian.Uint64(b[40:]),
		}
	}
	// The load address: 0 for cordon's static, position-dependent build;
	// PT_PHDR says otherwise for a position-independent one.
	var base uint64
	for _, s := range segs {
		if s.typ == ptPhdr {
			base = uint64(phdr) - s.vaddr
		}
	}
	// The program headers lie in a loaded segment: if they do not, the
	// load address is not what it seems, and nothing is dropped.
	inLoad := false
	for _, s := range segs {
		if s.typ == ptLoad && base+s.vaddr <= uint64(phdr) && uint64(phdr) < base+s.vaddr+s.size {
			inLoad = true
		}
	}
	if !inLoad {
		return
	}
	const page = 4096
	var relroLo, relroHi uint64
	for _, s := range segs {
		if s.typ == ptRelro {
			relroLo, relroHi = (base+s.vaddr)&^(page-1), (base+s.vaddr+s.size+page-1)&^(page-1)
		}
	}
	for _, s := range segs {
		if s.typ != ptLoad || s.flags&pfW != 0 {
			continue
		}
		lo, hi := (base+s.vaddr)&^(page-1), (base+s.vaddr+s.size)&^(page-1) // whole pages only
		if relroHi > relroLo && lo < relroHi && relroLo < hi {
			continue
		}
		if hi > lo {
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
		}
	}
}

// traced reports whether /proc/self/status names a tracer.
func traced() bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if pid, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strings.TrimSpace(pid) != "0"
		}
	}
	return false
}

// The auxiliary vector's keys for the program headers (elf.h).
const (
	atPhdr  = 3
	atPhnum = 5
)

// auxPhdr returns AT_PHDR and AT_PHNUM from the auxiliary vector.
func auxPhdr() (phdr uintptr, phnum int) {
	data, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 0, 0
	}
	for i := 0; i+16 <= len(data); i += 16 {
		switch key, val := binary.NativeEndian.Uint64(data[i:]), binary.NativeEndian.Uint64(data[i+8:]); key {
		case atPhdr:
			phdr = uintptr(val)
		case atPhnum:
			phnum = int(val)
		}
	}
	return phdr, phnum
}
