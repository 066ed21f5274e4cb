package policy

import "testing"

// TestCheckDomainPattern: patterns are normalised (case, trailing dot,
// IDNA, IP text, port) or refused with a reason; a name with an empty
// label (".", "..", "a..b", "*..") is no host's and is refused.
func TestCheckDomainPattern(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" for a refusal
	}{
		{"Example.COM", "example.com"},
		{"example.com.", "example.com"},
		{"*.example.com", "*.example.com"},
		{"example.com:8443", "example.com:8443"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"10.0.0.1:80", "10.0.0.1:80"},
		{"[::1]:443", "[::1]:443"},
		{"0:0::1", "::1"},
		{"*.com", ""},
		{"*.*.example.com", ""},
		{"https://example.com", ""},
		{"example.com:0", ""},
		{"example.com:", ""},
		{"[::1", ""},
		{"", ""},
		{".", ""},
		{"..", ""},
		{"a..b", ""},
		{".example.com", ""},
		{"*..", ""},
		{"*...com", ""},
	} {
		got, err := CheckDomainPattern(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("CheckDomainPattern(%q) = %q, want a refusal", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CheckDomainPattern(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
