package policy

import (
	"errors"
	"testing"
)

// FuzzParseOverride: a hook's answer is no override, one of the three
// verdicts, or an ErrHook; never a verdict the engine does not know.
func FuzzParseOverride(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"decision":"deny","reason":"no"}`, `{"decision":"maybe"}`,
		`{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"ok"}}`,
		`{"decision":"ask","hookSpecificOutput":{"permissionDecision":"allow"}}`,
		`not json`, `[]`, `{"decision":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		o, err := ParseOverride(out)
		if err != nil {
			if !errors.Is(err, ErrHook) {
				t.Fatalf("ParseOverride(%q): %v is not an ErrHook", out, err)
			}
			if o != (Override{}) {
				t.Fatalf("ParseOverride(%q) = %+v with an error", out, o)
			}
			return
		}
		switch o.Verdict {
		case "", VerdictAllow, VerdictAsk, VerdictDeny:
		default:
			t.Fatalf("ParseOverride(%q) = verdict %q", out, o.Verdict)
		}
	})
}
