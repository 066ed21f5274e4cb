package policy

import (
	"strconv"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // -1: an error
	}{
		{"4096", 4096},
		{"0", 0},
		{"512M", 512 << 20},
		{"512m", 512 << 20},
		{"2G", 2 << 30},
		{"1.5GiB", 3 << 29},
		{"1.5gib", 3 << 29},
		{"10KB", 10 << 10},
		{"1T", 1 << 40},
		{" 64 M ", 64 << 20},
		{"7B", 7},
		{"8388607T", 8388607 << 40},
		{"8388608T", -1}, // 2^63
		{"9223372036854775807", -1},
		{"", -1},
		{"M", -1},
		{"-1", -1},
		{"-1G", -1},
		{"+1G", -1},
		{"1e3", -1},
		{"0x10", -1},
		{"0x1p4", -1},
		{"1_000", -1},
		{"NaN", -1},
		{"nan", -1},
		{"Inf", -1},
		{"infinity", -1},
		{".5G", -1},
		{"1.G", -1},
		{"1.5.5G", -1},
		{"1P", -1},
		{"1GG", -1},
		{"lots", -1},
	} {
		got, err := ParseSize(tc.in)
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("ParseSize(%q) = %d, want an error", tc.in, got)
		case tc.want >= 0 && err != nil:
			t.Errorf("ParseSize(%q): %v, want %d", tc.in, err, tc.want)
		case tc.want >= 0 && got != tc.want:
			t.Errorf("ParseSize(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzParseSize: a size is never negative, a plain number of bytes reads
// as itself, and a unit multiplies within a rounding of the fraction.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4096", "512M", "1.5GiB", "nan", "1e3", "8388608T", "-0", " 1 k "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSize(s)
		if err != nil {
			if v != 0 {
				t.Fatalf("ParseSize(%q) = %d with an error", s, v)
			}
			return
		}
		if v < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, v)
		}
		back, err := ParseSize(strconv.FormatInt(v, 10))
		if err != nil || back != v {
			t.Fatalf("ParseSize(%q) = %d, which does not read back: %d, %v", s, v, back, err)
		}
		if g, err := ParseSize(s + "G"); err == nil && g < v {
			t.Fatalf("ParseSize(%q) = %d > ParseSize(%q) = %d", s, v, s+"G", g)
		}
	})
}
