// Package mask keeps a run's masked secrets: it makes the fakes a
// sandboxed command sees in place of the real values (a whole value, the
// parts an extract pattern finds, a JSON Web Token or some of its claims)
// and puts the real values back into the requests cordon's proxy forwards
// to each secret's hosts: in every header value (inside Basic
// credentials too), in the query, in bodies as they stream, and in AWS
// SigV4 signatures, which it computes again with the real secret.
//
// It decides nothing about where a connection may go (netproxy does) and
// sees only what the proxy decrypts: a fake the command sends to a host
// that is not terminated, or inside something it cannot read (compressed
// or base64 bodies), goes out as the fake — the failure is a refused
// login, never a leaked secret. Real values live only in the memory of
// the process that holds the Set: they are never written, logged or
// reported; events name the secret, not its value.
package mask

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Rule is how one credential is masked (policy.Credential, with its hosts
// compiled).
type Rule struct {
	// Name names the credential in events ("env GH_TOKEN", "file
	// /home/u/.npmrc").
	Name string
	// Extract, when set, finds the secrets in the value (group 1 of each
	// match); otherwise the whole value is the secret.
	Extract *regexp.Regexp
	// JWT reads the value (or each match, the default pattern finding
	// tokens in a file) as a JSON Web Token; Claims names the secret
	// claims of its payload (none: the whole token).
	JWT    bool
	Claims []string
	// Duplicates masks a found secret wherever else it appears too.
	Duplicates bool
	// Hosts reports whether a host (lower case, no port) may receive the
	// real value.
	Hosts func(host string) bool
}

// Secret is one real value and the fake that stands for it.
type Secret struct {
	// Name is the rule's name, with the part for a structured mask
	// ("file /x #2", "env J claim key").
	Name       string
	fake, real string
	hosts      func(string) bool
}

// Set holds a run's secrets. Its methods may be called from many
// goroutines.
type Set struct {
	mu      sync.RWMutex
	secrets []*Secret
	pairs   []*awsPair
	opts    Options
}

// Options are a Set's policies (policy.Credentials).
type Options struct {
	// SigV4 says what becomes of the AWS signatures the proxy cannot
	// make again.
	SigV4 SigV4Policy
	// Plaintext lets real values go into plain HTTP requests too
	// (allowPlaintextInject); otherwise only into TLS the proxy verified.
	Plaintext bool
}

// Dest is where a request goes.
type Dest struct {
	// Host is the destination's name (lower case, no port), which the
	// secrets' hosts are matched against; Port its port.
	Host string
	Port int
	// TLS: the request goes over a TLS connection whose server the proxy
	// verified; false: plain HTTP.
	TLS bool
}

// Event is a use of a secret on the wire, reported once per request and
// secret; never its value.
type Event struct {
	Dest
	// Name is the secret's name.
	Name string
	// Own: Host is among the secret's hosts.
	Own bool
	// Substituted: the real value went in. Otherwise the fake went out as
	// it is: to a host that is not the secret's (Own false), or over plain
	// HTTP without Options.Plaintext.
	Substituted bool
}

// ErrNoMatch is returned by Mask when an extract pattern or decode finds
// no secret in the value.
var ErrNoMatch = errors.New("no secret found")

// New returns an empty Set with the policies o.
func New(o Options) *Set { return &Set{opts: o} }

// Len is the number of secrets.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets)
}

// Mask registers the secrets of value under r and returns what the
// sandbox sees instead. A whole value loses its trailing line ends to the
// fake's end (a token file's last newline is no part of the token).
// ErrNoMatch: r is structured and found nothing; the caller applies the
// credential's onExtractNoMatch.
func (s *Set) Mask(r Rule, value string) (string, error) {
	if r.Hosts == nil {
		return "", fmt.Errorf("mask %s: no hosts", r.Name)
	}
	switch {
	case r.JWT && r.Extract == nil && !r.Duplicates && isJWT(strings.TrimRight(value, "\r\n")):
		tok := strings.TrimRight(value, "\r\n")
		fake, ok := s.maskToken(r, r.Name, tok)
		if !ok {
			return "", ErrNoMatch
		}
		return fake + value[len(tok):], nil
	case r.JWT || r.Extract != nil:
		return s.maskParts(r, value)
	}
	secret := strings.TrimRight(value, "\r\n")
	if secret == "" {
		return value, nil
	}
	return s.add(r.Name, newFake(secret), secret, r.Hosts) + value[len(secret):], nil
}

// maskToken registers a token: a fake token for the whole, and with
// claims a fake for each named claim too. False when claims are named and
// none is a string claim.
func (s *Set) maskToken(r Rule, name, tok string) (string, bool) {
	if len(r.Claims) == 0 {
		return s.add(name, fakeJWT(), tok, r.Hosts), true
	}
	fake, ok := maskClaims(tok, r.Claims, func(claim, real string) string {
		return s.add(name+" claim "+claim, newFake(real), real, r.Hosts)
	})
	if !ok {
		return "", false
	}
	return s.add(name, fake, tok, r.Hosts), true
}

// span is a part of the value replaced by a fake.
type span struct {
	start, end int
	fake       string
}

// maskParts masks what r.Extract (or, for a token, the JWT pattern)
// finds: group 1 of every match, each distinct secret with one fake; with
// Duplicates, a found secret's other occurrences too.
func (s *Set) maskParts(r Rule, value string) (string, error) {
	re := r.Extract
	if re == nil {
		re = jwtRE
	}
	var spans []span
	fakes := map[string]string{} // secret → its fake; "" when declined
	var order []string
	n := 0
	for _, m := range re.FindAllStringSubmatchIndex(value, -1) {
		if len(m) < 4 || m[2] < 0 {
			return "", fmt.Errorf("mask %s: the extract pattern matched at %d without its group 1: the group must find the secret in every match", r.Name, m[0])
		}
		secret := value[m[2]:m[3]]
		if secret == "" {
			continue
		}
		fake, seen := fakes[secret]
		if !seen {
			n++
			part := fmt.Sprintf("%s #%d", r.Name, n)
			switch {
			case !r.JWT:
				fake = s.add(part, newFake(secret), secret, r.Hosts)
			case isJWT(secret):
				fake, _ = s.maskToken(r, part, secret)
			}
			fakes[secret] = fake
			order = append(order, secret)
		}
		if fake != "" {
			spans = append(spans, span{m[2], m[3], fake})
		}
	}
	if len(spans) == 0 {
		return "", ErrNoMatch
	}
	if r.Duplicates {
		// Longest first: a secret inside a longer one must not take part
		// of the longer one's occurrence.
		slices.SortStableFunc(order, func(a, b string) int { return len(b) - len(a) })
		for _, secret := range order {
			fake := fakes[secret]
			if fake == "" {
				continue
			}
			for i := strings.Index(value, secret); i >= 0; {
				end := i + len(secret)
				if !slices.ContainsFunc(spans, func(sp span) bool { return i < sp.end && sp.start < end }) {
					spans = append(spans, span{i, end, fake})
				}
				next := strings.Index(value[i+1:], secret)
				if next < 0 {
					break
				}
				i += 1 + next
			}
		}
		slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	}
	var b strings.Builder
	pos := 0
	for _, sp := range spans {
		b.WriteString(value[pos:sp.start])
		b.WriteString(sp.fake)
		pos = sp.end
	}
	b.WriteString(value[pos:])
	return b.String(), nil
}

var jwtRE = regexp.MustCompile(jwtPattern)

// add registers a secret and returns its fake. A fake that would clash
// with a value already held (inside it, or holding it) is drawn again.
func (s *Set) add(name, fake, real string, hosts func(string) bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.clashes(fake, real) {
		if strings.HasPrefix(fake, fakeJWTHeader+".") {
			fake = fakeJWT()
		} else {
			fake = newFake(real)
		}
	}
	s.secrets = append(s.secrets, &Secret{Name: name, fake: fake, real: real, hosts: hosts})
	return fake
}

// clashes reports whether fake could be confused with what is held: a
// fake inside another (or the reverse) would make the replacement depend
// on where a body is cut, and a fake inside a real value would be
// replaced in it.
func (s *Set) clashes(fake, real string) bool {
	if strings.Contains(real, fake) {
		return true
	}
	for _, x := range s.secrets {
		if strings.Contains(x.fake, fake) || strings.Contains(fake, x.fake) || strings.Contains(x.real, fake) {
			return true
		}
	}
	return false
}

// Names lists the secrets' names, for cordon config and tests.
func (s *Set) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, x := range s.secrets {
		out = append(out, x.Name)
	}
	return out
}

// Injects reports whether some secret's real value may go to host: the
// proxy terminates TLS to exactly those hosts.
func (s *Set) Injects(host string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, x := range s.secrets {
		if x.hosts(host) {
			return true
		}
	}
	return false
}
