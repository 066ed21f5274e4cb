package policy

import (
	"path"
	"testing"
)

// matchName must answer as path.Match does, whatever the shapes.
func TestMatchNameIsPathMatch(t *testing.T) {
	patterns := []string{"", "*", "**", "*_TOKEN", "AWS_*", "TOKEN", "A*B", "*A*", "?", "A?", "[AB]*", `\\*`, `A\\`,
		"*/X", "X/*", "/", "*_", "_*", "[", "A[", "*[", "SSH_AUTH_SOCK", "*TOKEN*", "GITHUB_*_TOKEN",
		"*PASSWORD*", "***", "*A**", "**A*", "*?*", "*[A]*", "*\\**"}
	names := []string{"", "A", "B", "AB", "A_TOKEN", "_TOKEN", "TOKEN", "AWS_SECRET", "AWS_", "AWS", "X/Y", "A/B_TOKEN",
		"AWS_/X", "/", "*", "A*", "SSH_AUTH_SOCK", "GITHUB_CI_TOKEN", "[", "_", "__",
		"DB_PASSWORD", "PASSWORD", "PASSWORD_FILE", "MY_PASSWORD_2", "PASS/WORD", "X/PASSWORD", "*A*", "**"}
	for _, p := range patterns {
		for _, n := range names {
			want, err := path.Match(p, n)
			want = want && err == nil
			if got := matchName(p, n); got != want {
				t.Errorf("matchName(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
}
