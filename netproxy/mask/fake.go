package mask

import (
	"crypto/rand"
	"regexp"
	"strings"
)

// A fake stands in for a secret in the sandbox. It is random, so that a
// fake found in a request is the fake cordon made and nothing else, and
// no fake is part of another. It keeps what tools check of a token's
// form without learning anything secret: the token's type prefix
// ("ghp_", "sk-ant-api03-", "xoxb-", "github_pat_"), its length when the
// rest is long enough (a body keeps its Content-Length when the real
// value goes back in), and hex for a hex secret. A short secret (a
// password) gets a longer fake: its length would tell too much, and a
// fake must be long enough never to occur by chance.

// minRandom is the fewest random characters of a fake: 20 hexadecimal
// digits are 80 bits, 20 alphanumerics 119.
const minRandom = 20

// typePrefix finds a token type's prefix: a short lower-case word, at
// most two more words, each ended by - or _.
var typePrefix = regexp.MustCompile(`^[a-z]{2,8}(?:[-_][a-z][a-z0-9]{1,7}){0,2}[-_]`)

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	hexLower = "0123456789abcdef"
)

// newFake returns a fake for the secret real.
func newFake(real string) string {
	prefix := typePrefix.FindString(real)
	rest := real[len(prefix):]
	if len(rest) < minRandom {
		// Too short to keep its length, or a prefix that would be most
		// of it.
		prefix = ""
		rest = real
	}
	n, alphabet := max(len(rest), minRandom), alnum
	if len(rest) < minRandom {
		n = minRandom + 4
	}
	if rest != "" && strings.Trim(rest, hexLower) == "" {
		alphabet = hexLower
	}
	return prefix + randomString(n, alphabet)
}

// randomString returns n characters of alphabet, uniformly.
func randomString(n int, alphabet string) string {
	out := make([]byte, 0, n)
	buf := make([]byte, 64)
	limit := 256 - 256%len(alphabet) // rejection keeps it uniform
	for len(out) < n {
		rand.Read(buf)
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}
