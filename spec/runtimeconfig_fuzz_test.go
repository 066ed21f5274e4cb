package spec

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseRuntimeConfig: /etc/cordon/runtime.json is taken only when it
// is one valid JSON object of known keys, and what was taken survives a
// round trip unchanged (no key read two ways).
func FuzzParseRuntimeConfig(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"defaultPolicy":"agent"}`, `{"ignoreAnnotations":true}`,
		`{"policies":{"mine":{"seccomp":true,"readonlyRootfs":true,"capabilities":[]}}}`,
		`{"policies":{"agent":{}}}`, `{"defaultPolicy":"agent","typo":1}`, `{} {}`, `[]`, `null`,
		`{"policies":{"p":{"network":"none","allowedDomains":["*.example.com"]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseRuntimeConfig(data)
		if err != nil {
			return
		}
		if c == nil {
			t.Fatalf("ParseRuntimeConfig(%q): no config and no error", data)
		}
		if !json.Valid(data) {
			t.Fatalf("ParseRuntimeConfig(%q) took invalid JSON", data)
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseRuntimeConfig(again)
		if err != nil {
			t.Fatalf("ParseRuntimeConfig(%q) took it; its own encoding %s is refused: %v", data, again, err)
		}
		if twice, _ := json.Marshal(back); !bytes.Equal(again, twice) {
			t.Fatalf("round trip of %q: %s, then %s", data, again, twice)
		}
	})
}
