package policy

import "testing"

func TestMatchDomain(t *testing.T) {
	for _, tc := range []struct {
		pattern, host string
		port          int
		want          bool
	}{
		{"example.com", "example.com", 443, true},
		{"example.com", "EXAMPLE.com.", 80, true},
		{"example.com", "www.example.com", 443, false},
		{"example.com", "example.com.evil.org", 443, false},
		{"example.com", "notexample.com", 443, false},
		{"*.example.com", "www.example.com", 443, true},
		{"*.example.com", "a.b.example.com", 443, true},
		{"*.example.com", "example.com", 443, false},
		{"*.example.com", "wwwexample.com", 443, false},
		{"example.com:8443", "example.com", 8443, true},
		{"example.com:8443", "example.com", 443, false},
		{"10.0.0.1", "10.0.0.1", 80, true},
		{"*.0.0.1", "10.0.0.1", 80, false},
		{"[::1]:8080", "::1", 8080, true},
		{"[::1]:8080", "[::1]", 8080, true},
		{"::1", "0:0::1", 80, true},
		{"xn--bcher-kva.example", "bücher.example", 443, true},
		{"github.com", "", 443, false},
		// WebFetch(domain:...) rules' forms
		{"*", "anything.example", 443, true},
		{"example.*", "example.org", 443, true},
		{"example.*", "EXAMPLE.org.", 443, true},
		{"example.*", "example.evil.com", 443, false},
		{"example.*", "example", 443, false},
		{"api*.example.com", "api2.example.com", 443, true},
		{"api*.example.com", "x.api2.example.com", 443, false},
		{"example.*", "10.0.0.1", 443, false},
	} {
		if got := MatchDomain(tc.pattern, tc.host, tc.port); got != tc.want {
			t.Errorf("MatchDomain(%q, %q, %d) = %v", tc.pattern, tc.host, tc.port, got)
		}
	}
}

// FuzzMatchDomain: no pattern or host panics, and a normalised exact
// pattern matches itself.
func FuzzMatchDomain(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "10.0.0.1:80", "[::1]:443", "bücher.example", "a..b", ""} {
		f.Add(s, s, 443)
	}
	f.Fuzz(func(t *testing.T, pattern, host string, port int) {
		MatchDomain(pattern, host, port)
		norm, err := CheckDomainPattern(pattern)
		if err != nil || norm[0] == '*' || norm[0] == '[' || len(norm) > 0 && norm[len(norm)-1] == ']' {
			return
		}
		h, p := splitPatternPort(norm)
		if p == 0 {
			p = 443
		}
		if !MatchDomain(norm, h, p) {
			t.Fatalf("%q (from %q) does not match %q:%d", norm, pattern, h, p)
		}
	})
}
