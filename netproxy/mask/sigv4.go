package mask

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// AWS Signature Version 4. A command given a masked AWS key signs with
// the fake secret, a signature no substitution can repair: the proxy
// signs the request again with the real secret, keeping what the client
// signed (its scope, its signed headers, its date), over the request as
// it goes upstream. It does so only for a request whose signature names
// a masked key's fake access key id; one signed with any other key is
// left alone. Streaming uploads (each chunk signed off the last), URLs
// signed in their query and SigV4a (ECDSA, no shared key) cannot be
// signed again: the SigV4Policy says whether they are refused (403) or
// sent as they are, to be refused by AWS.

// SigV4Policy says, for each form the proxy cannot sign again, "deny" or
// "passthrough" (policy.SigV4).
type SigV4Policy struct {
	Streaming, Presigned, SigV4a string
}

// The signature algorithms.
const (
	sigv4Algorithm  = "AWS4-HMAC-SHA256"
	sigv4aAlgorithm = "AWS4-ECDSA-P256-SHA256"
	unsignedPayload = "UNSIGNED-PAYLOAD"
)

// awsPair is one AWS credential whose parts are masked.
type awsPair struct {
	fakeKeyID     string
	keyID, secret string
	token         string // "" when no session token is masked
	hosts         func(string) bool
	name          string
}

// PairAWS links masked secrets into an AWS credential: the fakes the
// sandbox holds for the access key id, the secret key and (optionally)
// the session token. It fails when one of them is not a whole secret of
// the Set.
func (s *Set) PairAWS(keyIDFake, secretFake, tokenFake string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	find := func(fake string) *Secret {
		for _, x := range s.secrets {
			if x.fake == fake {
				return x
			}
		}
		return nil
	}
	id, sec := find(keyIDFake), find(secretFake)
	if id == nil || sec == nil {
		return fmt.Errorf("pair AWS credential: the access key id and the secret key must be masked")
	}
	p := &awsPair{fakeKeyID: id.fake, keyID: id.real, secret: sec.real, hosts: id.hosts, name: id.Name}
	if tokenFake != "" {
		tok := find(tokenFake)
		if tok == nil {
			return fmt.Errorf("pair AWS credential: the session token is not masked")
		}
		p.token = tok.real
	}
	s.pairs = append(s.pairs, p)
	return nil
}

// sigv4Kind is the form of a signed request.
type sigv4Kind string

const (
	kindHeader    sigv4Kind = "header"
	kindStreaming sigv4Kind = "streaming"
	kindPresigned sigv4Kind = "presigned"
	kindSigV4a    sigv4Kind = "sigv4a"
)

var credentialKeyID = regexp.MustCompile(`Credential=([^/,\s]+)/`)

// detectSigV4 returns the form of req's signature and the access key id
// it names; "" when req is not signed.
func detectSigV4(h http.Header, rawQuery string) (sigv4Kind, string) {
	auth := h.Get("Authorization")
	switch {
	case strings.HasPrefix(auth, sigv4aAlgorithm):
		if m := credentialKeyID.FindStringSubmatch(auth); m != nil {
			return kindSigV4a, m[1]
		}
	case strings.HasPrefix(auth, sigv4Algorithm):
		if m := credentialKeyID.FindStringSubmatch(auth); m != nil {
			if strings.HasPrefix(h.Get("X-Amz-Content-Sha256"), "STREAMING-") {
				return kindStreaming, m[1]
			}
			return kindHeader, m[1]
		}
	}
	// A presigned URL: the signature is in the query.
	q, err := url.ParseQuery(rawQuery)
	if err != nil || q.Get("X-Amz-Signature") == "" {
		return "", ""
	}
	if alg := q.Get("X-Amz-Algorithm"); alg != sigv4Algorithm && alg != sigv4aAlgorithm {
		return "", ""
	}
	id, _, _ := strings.Cut(q.Get("X-Amz-Credential"), "/")
	if id == "" {
		return "", ""
	}
	return kindPresigned, id
}

// sigv4Auth is a parsed AWS4-HMAC-SHA256 Authorization value.
type sigv4Auth struct {
	keyID, date, region, service string
	signed                       []string
}

var (
	authCredential = regexp.MustCompile(`Credential=([^,\s]+)`)
	authSigned     = regexp.MustCompile(`SignedHeaders=([^,\s]+)`)
	authSignature  = regexp.MustCompile(`Signature=([0-9a-fA-F]+)`)
)

// parseSigV4Auth reads an Authorization value; false when a part is
// missing or the scope is not key/date/region/service/aws4_request.
func parseSigV4Auth(auth string) (sigv4Auth, bool) {
	var a sigv4Auth
	if !strings.HasPrefix(auth, sigv4Algorithm) {
		return a, false
	}
	cred, signed := authCredential.FindStringSubmatch(auth), authSigned.FindStringSubmatch(auth)
	if cred == nil || signed == nil || authSignature.FindStringSubmatch(auth) == nil {
		return a, false
	}
	parts := strings.Split(cred[1], "/")
	if len(parts) != 5 || parts[4] != "aws4_request" || slices.Contains(parts[:4], "") {
		return a, false
	}
	a.keyID, a.date, a.region, a.service = parts[0], parts[1], parts[2], parts[3]
	for _, h := range strings.Split(signed[1], ";") {
		if h != "" {
			a.signed = append(a.signed, strings.ToLower(h))
		}
	}
	return a, len(a.signed) > 0
}

// resign is the plan to sign a request again.
type resign struct {
	pair     *awsPair
	auth     sigv4Auth
	amzDate  string
	signed   []string
	unsigned bool // the client signed UNSIGNED-PAYLOAD
	hashHdr  bool // the client sent x-amz-content-sha256
}

// planSigV4 decides about a signed request before its fakes are
// replaced (the fake access key id is what tells it): nil when there is
// nothing to sign again, a *Refusal when the policy refuses it.
func (s *Set) planSigV4(req *http.Request, host string) (*resign, error) {
	s.mu.RLock()
	pairs := s.pairs
	pol := s.opts.SigV4
	s.mu.RUnlock()
	if len(pairs) == 0 {
		return nil, nil
	}
	kind, keyID := detectSigV4(req.Header, req.URL.RawQuery)
	if kind == "" {
		return nil, nil
	}
	i := slices.IndexFunc(pairs, func(p *awsPair) bool { return p.fakeKeyID == keyID })
	if i < 0 || !pairs[i].hosts(host) {
		// a real key, or one that may not go there
		return nil, nil
	}
	p := pairs[i]
	if kind != kindHeader {
		policy := map[sigv4Kind]string{kindStreaming: pol.Streaming, kindPresigned: pol.Presigned, kindSigV4a: pol.SigV4a}[kind]
		if policy == "passthrough" {
			return nil, nil
		}
		return nil, &Refusal{Reason: fmt.Sprintf("the request is signed (AWS SigV4, %s) with the masked credential %s, which the proxy cannot sign again; credentials.sigv4.%s \"passthrough\" sends it as it is (AWS then refuses the signature)",
			kind, p.name, map[sigv4Kind]string{kindStreaming: "streaming", kindPresigned: "presigned", kindSigV4a: "sigv4a"}[kind])}
	}
	auth, ok := parseSigV4Auth(req.Header.Get("Authorization"))
	if !ok {
		return nil, &Refusal{Reason: "the request is signed with a masked AWS credential, but its Authorization header cannot be read to sign it again"}
	}
	date := req.Header.Get("X-Amz-Date")
	if date == "" {
		return nil, &Refusal{Reason: "the request is signed with a masked AWS credential but has no X-Amz-Date to sign it again"}
	}
	signed := slices.Clone(auth.signed)
	for _, h := range signed {
		if h == "host" || h == "x-amz-security-token" && p.token != "" {
			continue
		}
		if _, ok := req.Header[http.CanonicalHeaderKey(h)]; !ok {
			return nil, &Refusal{Reason: fmt.Sprintf("the request is signed with a masked AWS credential over the header %q, which it does not carry", h)}
		}
	}
	if p.token != "" && !slices.Contains(signed, "x-amz-security-token") {
		signed = append(signed, "x-amz-security-token")
	}
	sha := req.Header.Get("X-Amz-Content-Sha256")
	return &resign{pair: p, auth: auth, amzDate: date, signed: signed, unsigned: sha == unsignedPayload, hashHdr: sha != ""}, nil
}

// apply signs req again, after its fakes were replaced.
func (r *resign) apply(req *http.Request) error {
	hash := unsignedPayload
	if !r.unsigned {
		body, err := bufferBody(req, maxResignBody)
		if err != nil {
			return err
		}
		hash = sumHex(body)
		if r.hashHdr {
			req.Header.Set("X-Amz-Content-Sha256", hash)
		}
	}
	if r.pair.token != "" {
		req.Header.Set("X-Amz-Security-Token", r.pair.token)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	scope := sigv4Scope{date: r.auth.date, region: r.auth.region, service: r.auth.service}
	auth, err := signV4(req.Method, req.URL.EscapedPath(), req.URL.RawQuery, req.Header, host, r.signed, hash, r.amzDate, scope, r.pair.keyID, r.pair.secret)
	if err != nil {
		return &Refusal{Reason: "signing the request again: " + err.Error()}
	}
	req.Header.Set("Authorization", auth)
	return nil
}

// sigv4Scope is a signature's credential scope.
type sigv4Scope struct{ date, region, service string }

func (s sigv4Scope) String() string {
	return s.date + "/" + s.region + "/" + s.service + "/aws4_request"
}

// signV4 returns the Authorization value of a request signed with
// keyID and secret (the AWS SigV4 signing process).
func signV4(method, path, rawQuery string, h http.Header, host string, signed []string, payloadHash, amzDate string, scope sigv4Scope, keyID, secret string) (string, error) {
	names := make([]string, len(signed))
	for i, n := range signed {
		names[i] = strings.ToLower(n)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	creq, err := canonicalRequest(method, path, rawQuery, h, host, names, payloadHash, scope.service)
	if err != nil {
		return "", err
	}
	toSign := sigv4Algorithm + "\n" + amzDate + "\n" + scope.String() + "\n" + sumHex([]byte(creq))
	key := hmacSHA256([]byte("AWS4"+secret), scope.date)
	key = hmacSHA256(key, scope.region)
	key = hmacSHA256(key, scope.service)
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	return fmt.Sprintf("%s Credential=%s/%s, SignedHeaders=%s, Signature=%s", sigv4Algorithm, keyID, scope, strings.Join(names, ";"), sig), nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalRequest is SigV4's canonical form of a request; names are the
// signed headers, lower case and sorted.
func canonicalRequest(method, path, rawQuery string, h http.Header, host string, names []string, payloadHash, service string) (string, error) {
	var lines []string
	for _, n := range names {
		var vals []string
		if n == "host" {
			vals = []string{host}
		} else {
			var ok bool
			if vals, ok = h[http.CanonicalHeaderKey(n)]; !ok {
				return "", fmt.Errorf("the signed header %q is missing", n)
			}
		}
		trimmed := make([]string, len(vals))
		for i, v := range vals {
			trimmed[i] = trimAll(v)
		}
		lines = append(lines, n+":"+strings.Join(trimmed, ","))
	}
	return strings.Join([]string{
		strings.ToUpper(method),
		canonicalURI(path, service),
		canonicalQuery(rawQuery),
		strings.Join(lines, "\n") + "\n",
		strings.Join(names, ";"),
		payloadHash,
	}, "\n"), nil
}

// trimAll trims a header value and folds its runs of spaces into one.
func trimAll(v string) string {
	return strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' }), " ")
}

// uriEncode escapes all but RFC 3986's unreserved characters, as SigV4
// wants.
func uriEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// canonicalURI is the path as SigV4 signs it: S3's as it is on the wire
// (its keys are bytes, "a/../b" a key); every other service's with its
// dot segments resolved, escaped once more over its escaping.
func canonicalURI(path, service string) string {
	if path == "" {
		return "/"
	}
	if service == "s3" {
		return path
	}
	var segs []string
	for _, seg := range strings.Split(path, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, seg)
		}
	}
	out := "/" + strings.Join(segs, "/")
	if len(segs) > 0 && strings.HasSuffix(path, "/") {
		out += "/"
	}
	return strings.ReplaceAll(uriEncode(out), "%2F", "/")
}

// canonicalQuery sorts the query's pairs by their escaped name then
// value, each unescaped and escaped again strictly ("+" stays a plus).
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type kv struct{ k, v string }
	var pairs []kv
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		pairs = append(pairs, kv{uriEncode(unescape(k)), uriEncode(unescape(v))})
	}
	slices.SortFunc(pairs, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p.k + "=" + p.v
	}
	return strings.Join(out, "&")
}

// unescape undoes percent escapes, leaving "+" and bad escapes as they
// are.
func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// sumHex is the hex SHA-256 of b.
func sumHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
