package serve

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRequest: a request line the daemon takes has a command, an absolute
// working directory, NAME=value environment entries, and no NUL byte in
// any string it hands on to the sandbox's init.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"cordon":1,"args":["--","true"],"cwd":"/","env":["A=b"]}`,
		`{"cordon":1,"args":["--","true"],"cwd":"/","env":["A=1\u0000LD_PRELOAD=/x"]}`,
		`{"cordon":1,"args":["a\u0000b"],"cwd":"/w"}`,
		`{"cordon":2,"args":["x"],"cwd":"/"}`, `{"cordon":1,"args":[],"cwd":"/"}`, `{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var r Request
		if json.Unmarshal(line, &r) != nil || r.Check() != nil {
			return
		}
		if r.Cordon != Version || len(r.Args) == 0 || !filepath.IsAbs(r.Cwd) || strings.ContainsRune(r.Cwd, 0) {
			t.Fatalf("Check took %+v", r)
		}
		for _, s := range append(append([]string(nil), r.Args...), r.Env...) {
			if strings.ContainsRune(s, 0) {
				t.Fatalf("Check took %q with a NUL byte", s)
			}
		}
		for _, kv := range r.Env {
			if !strings.Contains(kv, "=") {
				t.Fatalf("Check took the environment entry %q", kv)
			}
		}
	})
}
