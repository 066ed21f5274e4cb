package netproxy

import (
	"encoding/json"
	"testing"
)

// FuzzParseAnswer: an ask command's answer counts only as one JSON object
// with a boolean "allow"; what it says, and the reason of a refusal, is
// what encoding/json reads.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"allow":true}`, `{"allow":false}`, ` {"allow": true} ` + "\n", `{}`, `{"allow":"yes"}`,
		`{"allow":true}{"allow":false}`, `true`, ``, `{"allow":null}`, `{"Allow":true}`,
		`{"allow":false,"reason":"use the mirror"}`, `{"allow":true,"reason":"fine"}`, `{"allow":false,"reason":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		reply, err := parseAnswer(b)
		if err != nil {
			if reply.Allow || reply.Reason != "" {
				t.Fatalf("parseAnswer(%q) = %+v with an error: %v", b, reply, err)
			}
			return
		}
		var a Answer
		if jerr := json.Unmarshal(b, &a); jerr != nil || a.Allow == nil || *a.Allow != reply.Allow {
			t.Fatalf("parseAnswer(%q) = %+v; encoding/json reads %+v, %v", b, reply, a, jerr)
		}
		if want := a.Reason; reply.Allow && reply.Reason != "" || !reply.Allow && reply.Reason != want {
			t.Fatalf("parseAnswer(%q) = %+v; the reason is %q", b, reply, want)
		}
	})
}
