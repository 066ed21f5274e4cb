//go:build linux && cgo

package seccomp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/bpf"
)

func TestAsm(t *testing.T) {
	// Programs of the form
	//
	//	ld [0]
	//	if nr == 7 goto T else F
	//	padA × ret 99
	//	F: ret 2
	//	padB × ret 98
	//	T: ret 1
	//	padC × ret 97
	//	U: ret 3
	//
	// or, with second, the jumps
	//
	//	if nr == 7 goto T
	//	if nr == 8 goto U ; else fall through to padA or F
	//
	// with padding that puts targets just within and just beyond the 255
	// instructions a conditional jump reaches.
	tests := []struct {
		name             string
		second           bool
		padA, padB, padC int
		want             int // length of the program
	}{
		{"near", false, 0, 0, 0, 5},
		{"true target at 255", false, 0, 254, 0, 5 + 254},
		{"true target at 256", false, 0, 255, 0, 5 + 255 + 2},
		{"targets at 254 and 255", false, 254, 0, 0, 5 + 254},
		{"false target at 256", false, 256, 0, 0, 5 + 256 + 2},
		{"both far", false, 300, 300, 0, 5 + 600 + 2},
		// the second jump's long form pushes the first's target from 255
		// to 257 instructions away
		{"lengthening cascades", true, 0, 253, 10, 6 + 253 + 10 + 2 + 2},
		{"second far, first near", true, 0, 100, 200, 6 + 300 + 2},
		{"fall through far", true, 300, 0, 0, 6 + 300 + 2 + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a asm
			f, tl, u := a.label(), a.label(), a.label()
			a.insn(bpf.LoadAbsolute{Off: 0, Size: 4})
			if tc.second {
				a.jumpIf(bpf.JumpEqual, 7, tl, next)
				a.jumpIf(bpf.JumpEqual, 8, u, next)
			} else {
				a.jumpIf(bpf.JumpEqual, 7, tl, f)
			}
			pad := func(n int, v uint32) {
				for range n {
					a.insn(bpf.RetConstant{Val: v})
				}
			}
			pad(tc.padA, 99)
			a.place(f)
			a.insn(bpf.RetConstant{Val: 2})
			pad(tc.padB, 98)
			a.place(tl)
			a.insn(bpf.RetConstant{Val: 1})
			pad(tc.padC, 97)
			a.place(u)
			a.insn(bpf.RetConstant{Val: 3})
			raw, err := a.assemble()
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) != tc.want {
				t.Errorf("program of %d instructions, want %d", len(raw), tc.want)
			}
			vm := newProgramVM(t, appendSockFilters(nil, raw))
			want := map[uint32]uint32{7: 1, 9: 2}
			if tc.second {
				want[8] = 3
				if tc.padA > 0 {
					want[9] = 99
				}
			}
			got := map[uint32]uint32{}
			for nr := range want {
				got[nr] = vm.evalRaw(0, nr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdicts by nr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAsmErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(a *asm)
		want  string
	}{
		{"backward jump", func(a *asm) {
			l := a.label()
			a.place(l)
			a.insn(bpf.LoadAbsolute{Off: 0, Size: 4})
			a.jumpIf(bpf.JumpEqual, 1, l, next)
			a.insn(bpf.RetConstant{})
		}, "instruction 1: backward jump"},
		{"unplaced label", func(a *asm) {
			a.jump(a.label())
			a.insn(bpf.RetConstant{})
		}, "instruction 0: jump to an unplaced label"},
		{"test the machine lacks", func(a *asm) {
			l := a.label()
			a.jumpIf(bpf.JumpNotEqual, 1, l, next)
			a.place(l)
			a.insn(bpf.RetConstant{})
		}, "is not a machine instruction"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a asm
			tc.build(&a)
			if _, err := a.assemble(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("assemble: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
