package mask

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// jwtPattern finds JSON Web Token candidates: every token's header is
// base64url of a JSON object, so it starts "eyJ" ({"). isJWT sorts out
// what merely looks like one.
const jwtPattern = `(eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)`

// fakeSignature is base64url("cordon-fake"): never a valid signature.
const fakeSignature = "Y29yZG9uLWZha2U"

// fakeJWTHeader declares HS256, not "none", so that a verifier the fake
// reaches unswapped rejects it for its signature.
var fakeJWTHeader = b64(`{"alg":"HS256","typ":"JWT"}`)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// decodeSegment reads a base64url segment (padded or not) as JSON.
func decodeSegment(seg string) (json.RawMessage, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil || !json.Valid(raw) {
		return nil, false
	}
	return raw, true
}

// isJWT reports whether s is a JSON Web Token as sandbox-runtime checks
// one: three segments, the first two JSON, the header an object with an
// "alg".
func isJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	h, ok := decodeSegment(parts[0])
	if !ok {
		return false
	}
	var header map[string]json.RawMessage
	if json.Unmarshal(h, &header) != nil || header["alg"] == nil {
		return false
	}
	_, ok = decodeSegment(parts[1])
	return ok
}

// fakeJWT returns a token of the right form whose subject is a random
// fake and whose expiry is far away, so tools that read a token before
// they send it keep working.
func fakeJWT() string {
	payload, _ := json.Marshal(map[string]any{"sub": randomString(32, alnum), "exp": 9999999999})
	return fakeJWTHeader + "." + b64(string(payload)) + "." + fakeSignature
}

// member is one member of a JSON object, in its order.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers reads a JSON object's members in order; false when raw
// is not an object.
func objectMembers(raw json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{k, v})
	}
	return out, true
}

// maskClaims replaces, in the token's payload, the string claims named by
// claims with fakes from fakeFor, keeping the header and the other claims
// and putting a filler in place of the signature (the real signature over
// the changed payload would let the sandbox test guesses of a claim
// offline). It returns the fake token, or false when no named claim is a
// string.
func maskClaims(token string, claims []string, fakeFor func(claim, real string) string) (string, bool) {
	parts := strings.Split(token, ".")
	raw, ok := decodeSegment(parts[1])
	if !ok {
		return "", false
	}
	ms, ok := objectMembers(raw)
	if !ok {
		return "", false
	}
	changed := false
	for i, m := range ms {
		var s string
		if !contains(claims, m.key) || json.Unmarshal(m.value, &s) != nil {
			continue
		}
		v, _ := json.Marshal(fakeFor(m.key, s))
		ms[i].value = v
		changed = true
	}
	if !changed {
		return "", false
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return parts[0] + "." + b64(b.String()) + "." + fakeSignature, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
