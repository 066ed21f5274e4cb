//go:build linux && cgo

package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// label names a position in a program under assembly: the instruction
// that follows the place it is put, or the end of the program.
type label int

// next is the target of a conditional jump that falls through to the
// instruction after it.
const next label = -1

// asm assembles a classic BPF program whose jumps name their targets by
// label, forward only. A conditional jump keeps its one-instruction form
// while both targets are within the 255 instructions its 8-bit offsets
// reach; otherwise it becomes a jump to two unconditional jumps, whose
// 32-bit offsets reach anywhere.
type asm struct {
	items  []asmItem
	places []int // by label: the index in items it precedes; -1 while unplaced
}

// asmItem is one instruction of the source: a plain instruction, an
// unconditional jump (ja) or a conditional jump (jif).
type asmItem struct {
	insn   bpf.Instruction // plain instructions only
	ja     bool
	jif    bool
	test   bpf.JumpTest
	val    uint32
	jt, jf label // ja uses jt
}

// label returns a new, unplaced label.
func (a *asm) label() label {
	a.places = append(a.places, -1)
	return label(len(a.places) - 1)
}

// place puts l before the next instruction added.
func (a *asm) place(l label) {
	a.places[l] = len(a.items)
}

// insn adds an instruction that does not jump.
func (a *asm) insn(i bpf.Instruction) {
	a.items = append(a.items, asmItem{insn: i})
}

// jump adds an unconditional jump to l.
func (a *asm) jump(l label) {
	a.items = append(a.items, asmItem{ja: true, jt: l})
}

// jumpIf adds "if A test val then jt else jf". Only the tests the machine
// has are taken (jeq, jgt, jge, jset); a negation is written by swapping
// jt and jf.
func (a *asm) jumpIf(test bpf.JumpTest, val uint32, jt, jf label) {
	a.items = append(a.items, asmItem{jif: true, test: test, val: val, jt: jt, jf: jf})
}

// assemble resolves the labels and returns the program.
func (a *asm) assemble() ([]bpf.RawInstruction, error) {
	for i, it := range a.items {
		if it.jif {
			switch it.test {
			case bpf.JumpEqual, bpf.JumpGreaterThan, bpf.JumpGreaterOrEqual, bpf.JumpBitsSet:
			default:
				return nil, fmt.Errorf("instruction %d: jump test %v is not a machine instruction", i, it.test)
			}
		}
		for _, l := range []label{it.jt, it.jf} {
			if (it.ja || it.jif) && l != next && (int(l) >= len(a.places) || a.places[l] < 0) {
				return nil, fmt.Errorf("instruction %d: jump to an unplaced label", i)
			}
		}
	}
	// Lengthening a jump only moves later targets further away, so marking
	// jumps long until none changes ends, with the shortest program this
	// scheme gives.
	long := make([]bool, len(a.items))
	var pos []int
	for {
		pos = a.positions(long)
		changed := false
		for i, it := range a.items {
			if !it.jif || long[i] {
				continue
			}
			for _, l := range []label{it.jt, it.jf} {
				d, err := a.distance(pos, i, l, 1)
				if err != nil {
					return nil, err
				}
				if d > 255 {
					long[i], changed = true, true
				}
			}
		}
		if !changed {
			break
		}
	}
	var out []bpf.Instruction
	for i, it := range a.items {
		switch {
		case it.ja:
			d, err := a.distance(pos, i, it.jt, 1)
			if err != nil {
				return nil, err
			}
			out = append(out, bpf.Jump{Skip: uint32(d)})
		case it.jif && !long[i]:
			dt, err := a.distance(pos, i, it.jt, 1)
			if err != nil {
				return nil, err
			}
			df, err := a.distance(pos, i, it.jf, 1)
			if err != nil {
				return nil, err
			}
			out = append(out, bpf.JumpIf{Cond: it.test, Val: it.val, SkipTrue: uint8(dt), SkipFalse: uint8(df)})
		case it.jif:
			// jif to the first ja when true, the second when false
			dt, err := a.distance(pos, i, it.jt, 2)
			if err != nil {
				return nil, err
			}
			df, err := a.distance(pos, i, it.jf, 3)
			if err != nil {
				return nil, err
			}
			out = append(out,
				bpf.JumpIf{Cond: it.test, Val: it.val, SkipTrue: 0, SkipFalse: 1},
				bpf.Jump{Skip: uint32(dt)},
				bpf.Jump{Skip: uint32(df)},
			)
		default:
			out = append(out, it.insn)
		}
	}
	raw, err := bpf.Assemble(out)
	if err != nil {
		return nil, fmt.Errorf("assemble: %w", err)
	}
	return raw, nil
}

// positions returns the index in the output of each item, and of the end
// of the program after the last.
func (a *asm) positions(long []bool) []int {
	pos := make([]int, len(a.items)+1)
	for i := range a.items {
		size := 1
		if long[i] {
			size = 3
		}
		pos[i+1] = pos[i] + size
	}
	return pos
}

// distance returns how many instructions a jump at offset from the start
// of item i's output skips to reach l.
func (a *asm) distance(pos []int, i int, l label, offset int) (int, error) {
	from := pos[i] + offset
	if l == next {
		return pos[i+1] - from, nil
	}
	d := pos[a.places[l]] - from
	if d < 0 {
		return 0, fmt.Errorf("instruction %d: backward jump", i)
	}
	return d, nil
}
