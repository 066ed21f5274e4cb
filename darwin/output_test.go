package darwin

import (
	"strings"
	"testing"
)

func TestLimitWriter(t *testing.T) {
	var b strings.Builder
	w := newLimitWriter(&b, "stdout", 5)
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	w.Done()
	want := "abcde\n[cordon: stdout truncated: 5 bytes kept, 5 dropped (output limit)]\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}

	b.Reset()
	w = newLimitWriter(&b, "stderr", 5)
	_, _ = w.Write([]byte("abcde"))
	w.Done()
	if b.String() != "abcde" {
		t.Errorf("nothing dropped, no marker: got %q", b.String())
	}
}
