package seccomp

import (
	"regexp"
	"strconv"
	"testing"
)

// FuzzParseKernel: only the empty release is no version; a release that
// starts with two decimal numbers parses to them; an error comes with no
// version.
func FuzzParseKernel(f *testing.F) {
	for _, s := range []string{"6.18.44-fc-v445", "5.4", "6", "", "x.y", "4.19.0-25-amd64", "-1.2", "99999999999999999999.1"} {
		f.Add(s)
	}
	leading := regexp.MustCompile(`^(\d{1,9})\.(\d{1,9})(\D|$)`)
	f.Fuzz(func(t *testing.T, release string) {
		v, err := parseKernel(release)
		switch {
		case release == "":
			if v != nil || err != nil {
				t.Fatalf("parseKernel(\"\") = %v, %v", v, err)
			}
			return
		case err != nil && v != nil:
			t.Fatalf("parseKernel(%q) = %v with an error", release, v)
		case err == nil && v == nil:
			t.Fatalf("parseKernel(%q): no version and no error", release)
		}
		if m := leading.FindStringSubmatch(release); m != nil {
			k, _ := strconv.ParseUint(m[1], 10, 64)
			j, _ := strconv.ParseUint(m[2], 10, 64)
			if err != nil || v.Kernel != k || v.Major != j {
				t.Fatalf("parseKernel(%q) = %v, %v, want %d.%d", release, v, err, k, j)
			}
		}
	})
}
