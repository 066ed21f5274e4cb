package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// CheckDomainPattern validates a network destination pattern and returns it
// normalised: an exact host name, `*.example.com` (its subdomains, never
// example.com itself), an IP address (IPv6 in brackets when a port
// follows), each with an optional `:port`. Names are lowercased, a trailing
// dot dropped, internationalised names turned into their ASCII form.
func CheckDomainPattern(s string) (string, error) {
	if !utf8.ValidString(s) {
		// idna would read the bad bytes as U+FFFD: a name nobody wrote
		return "", fmt.Errorf("%q is not UTF-8 text", s)
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/ \t?#@") {
		return "", fmt.Errorf("%q is not a host name (write the name alone, as in example.com)", s)
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", fmt.Errorf("%q: unclosed [", s)
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if s[end+1:] != "" && !strings.HasPrefix(s[end+1:], ":") {
			return "", fmt.Errorf("%q: unexpected text after ]", s)
		}
	} else if i := strings.LastIndex(s, ":"); i >= 0 && strings.Count(s, ":") == 1 {
		host, port = s[:i], s[i+1:]
	}
	if port != "" || strings.HasSuffix(s, ":") {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		port = ":" + strconv.Itoa(n)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Is6() {
			if port == "" {
				return addr.String(), nil
			}
			return "[" + addr.String() + "]" + port, nil
		}
		return addr.String() + port, nil
	}
	wildcard := strings.HasPrefix(host, "*.")
	name := strings.TrimSuffix(strings.TrimPrefix(host, "*."), ".")
	if strings.Contains(name, "*") {
		return "", fmt.Errorf("%q: a wildcard may only be a leading *. (as in *.example.com)", s)
	}
	ascii, err := idna.Lookup.ToASCII(name)
	if err != nil || ascii == "" {
		return "", fmt.Errorf("%q is not a valid host name", s)
	}
	ascii = strings.ToLower(ascii)
	if slices.Contains(strings.Split(ascii, "."), "") {
		// ".", "..", "a..b": no host has an empty label
		return "", fmt.Errorf("%q is not a valid host name (an empty label)", s)
	}
	if wildcard && !strings.Contains(ascii, ".") {
		return "", fmt.Errorf("%q is too broad: a wildcard must name a domain, not a top-level domain", s)
	}
	if wildcard {
		ascii = "*." + ascii
	}
	return ascii + port, nil
}
