// Package gitindex reads the paths git's index lists: the files a
// repository tracks (and has staged), whose content git's objects hold
// whatever the working tree shows. cordon reads it to tell the user when a
// file its policy hides from commands is tracked, and so stays readable
// through git (git show HEAD:.env). It reads the index formats git writes
// (versions 2, 3 and 4, SHA-1 or SHA-256 object names, a split index's
// link to its shared index); it does not check the file's checksum, nor
// read the entries' other fields: a torn or foreign file gives an error
// or a list of names, never more.
package gitindex

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// ErrFormat is wrapped by every error about the index's bytes.
var ErrFormat = errors.New("not a git index")

// Hash sizes of git's object formats (extensions.objectFormat).
const (
	SHA1   = 20
	SHA256 = 32
)

// Index is what Parse reads of an index file.
type Index struct {
	Version int
	// Paths are the entries' paths, relative to the working tree's top,
	// in the index's order (sorted), each once (a conflict's stages are
	// one path). A sparse index's directory entries end in "/". A split
	// index's own entries that replace one of its shared index have no
	// path and are left out.
	Paths []string
	// Shared is, for a split index, the hex name of its shared index
	// (the file sharedindex.<Shared> in the git directory), whose paths
	// are tracked too; "" otherwise.
	Shared string
}

// The fixed part of an entry before its object name (ctime, mtime, dev,
// ino, mode, uid, gid, size: ten 32-bit fields), and the flags after it.
const (
	statSize   = 40
	flagsSize  = 2
	flagExtend = 0x4000
)

// Parse reads the index in data, whose object names are hashSize bytes
// (SHA1 or SHA256).
func Parse(data []byte, hashSize int) (Index, error) {
	var ix Index
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return ix, fmt.Errorf("%w: no DIRC header", ErrFormat)
	}
	ix.Version = int(binary.BigEndian.Uint32(data[4:8]))
	if ix.Version < 2 || ix.Version > 4 {
		return ix, fmt.Errorf("%w: version %d", ErrFormat, ix.Version)
	}
	count := binary.BigEndian.Uint32(data[8:12])
	fixed := statSize + hashSize + flagsSize
	// Every entry takes more than its fixed part: a count the data cannot
	// hold is refused before anything is allocated for it.
	if uint64(count) > uint64(len(data)-12)/uint64(fixed) {
		return ix, fmt.Errorf("%w: %d entries in %d bytes", ErrFormat, count, len(data))
	}
	ix.Paths = make([]string, 0, count)
	off := 12
	var prev []byte // the previous entry's path (version 4 compresses against it)
	for i := range count {
		start := off
		if len(data)-off < fixed {
			return ix, fmt.Errorf("%w: entry %d is cut short", ErrFormat, i)
		}
		flags := binary.BigEndian.Uint16(data[off+statSize+hashSize:])
		off += fixed
		if flags&flagExtend != 0 {
			if ix.Version < 3 {
				return ix, fmt.Errorf("%w: entry %d has extended flags in a version %d index", ErrFormat, i, ix.Version)
			}
			if len(data)-off < 2 {
				return ix, fmt.Errorf("%w: entry %d is cut short", ErrFormat, i)
			}
			off += 2
		}
		var name []byte
		if ix.Version == 4 {
			strip, n := varint(data[off:])
			if n == 0 || strip > uint64(len(prev)) {
				return ix, fmt.Errorf("%w: entry %d: bad path prefix", ErrFormat, i)
			}
			off += n
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return ix, fmt.Errorf("%w: entry %d: path without its end", ErrFormat, i)
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], data[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return ix, fmt.Errorf("%w: entry %d: path without its end", ErrFormat, i)
			}
			name = data[off : off+end]
			// An entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
			size := (off - start + end + 8) &^ 7
			if len(data)-start < size {
				return ix, fmt.Errorf("%w: entry %d is cut short", ErrFormat, i)
			}
			off = start + size
		}
		prev = name
		if len(name) == 0 {
			continue
		}
		if n := len(ix.Paths); n > 0 && ix.Paths[n-1] == string(name) {
			continue
		}
		ix.Paths = append(ix.Paths, string(name))
	}
	// Extensions: a 4-byte signature and a 32-bit size each, up to the
	// trailing checksum.
	for len(data)-off >= 8+hashSize {
		sig := string(data[off : off+4])
		size := binary.BigEndian.Uint32(data[off+4:])
		off += 8
		if uint64(size) > uint64(len(data)-off) {
			return ix, fmt.Errorf("%w: extension %q is cut short", ErrFormat, sig)
		}
		if sig == "link" {
			if size < uint32(hashSize) {
				return ix, fmt.Errorf("%w: link extension is cut short", ErrFormat)
			}
			ix.Shared = hex.EncodeToString(data[off : off+hashSize])
		}
		off += int(size)
	}
	return ix, nil
}

// varint decodes git's offset varint (varint.c): the value and the bytes
// it took, 0 when data ends first or the value overflows.
func varint(data []byte) (uint64, int) {
	if len(data) == 0 {
		return 0, 0
	}
	c := data[0]
	val := uint64(c & 0x7f)
	n := 1
	for c&0x80 != 0 {
		val++
		if val == 0 || val>>(64-7) != 0 || n >= len(data) {
			return 0, 0
		}
		c = data[n]
		n++
		val = val<<7 + uint64(c&0x7f)
	}
	return val, n
}
