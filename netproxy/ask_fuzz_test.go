package netproxy

import (
	"encoding/json"
	"testing"
)

// FuzzParseAnswer: an ask command's answer counts only as one JSON object
// with a boolean "allow"; what it says is what encoding/json reads.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"allow":true}`, `{"allow":false}`, ` {"allow": true} ` + "\n", `{}`, `{"allow":"yes"}`,
		`{"allow":true}{"allow":false}`, `true`, ``, `{"allow":null}`, `{"Allow":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		allow, err := parseAnswer(b)
		if err != nil {
			if allow {
				t.Fatalf("parseAnswer(%q) allowed with an error: %v", b, err)
			}
			return
		}
		var a Answer
		if jerr := json.Unmarshal(b, &a); jerr != nil || a.Allow == nil || *a.Allow != allow {
			t.Fatalf("parseAnswer(%q) = %v; encoding/json reads %+v, %v", b, allow, a, jerr)
		}
	})
}
