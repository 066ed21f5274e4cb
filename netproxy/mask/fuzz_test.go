package mask

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzMask: any value masked under any extract pattern (or as a token)
// comes back whole when its fakes go to the secret's host, and the masked
// value holds none of the secrets found.
func FuzzMask(f *testing.F) {
	f.Add("machine h password abcdefghijklmnop\n", `password (\S+)`, false, false)
	f.Add("a=xyzxyzxyzxyz b=xyzxyzxyzxyz # xyzxyzxyzxyz", `a=(\w+)`, true, false)
	f.Add(`{"t":"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"}`, "", false, true)
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln", "", false, true)
	f.Add("k", `k(=\w+)?`, false, false)
	f.Add("", `()`, false, false)
	f.Fuzz(func(t *testing.T, value, pattern string, dup, jwt bool) {
		r := Rule{Name: "n", Duplicates: dup, JWT: jwt, Hosts: only("h")}
		if pattern != "" {
			re, err := regexp.Compile(pattern)
			if err != nil || re.NumSubexp() < 1 {
				return
			}
			r.Extract = re
		}
		s := New(Options{})
		masked, err := s.Mask(r, value)
		if err != nil {
			return
		}
		req := httptest.NewRequest("POST", "https://h/", iotest.HalfReader(strings.NewReader(masked)))
		if err := s.Request(req, tlsTo("h"), nil); err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(req.Body)
		if err != nil || string(back) != value {
			t.Fatalf("masked %q came back %q, want %q", masked, back, value)
		}
		// With duplicates masked, no secret found is left anywhere
		// outside the fakes.
		pieces := []string{masked}
		for _, x := range s.secrets {
			var next []string
			for _, p := range pieces {
				next = append(next, strings.Split(p, x.fake)...)
			}
			pieces = next
		}
		for _, x := range s.secrets {
			for _, p := range pieces {
				if dup && !jwt && strings.Contains(p, x.real) {
					t.Fatalf("secret %q left in %q with duplicates masked", x.real, masked)
				}
			}
		}
	})
}

// FuzzSigV4: the SigV4 readers take anything without panicking, and the
// canonical query is its own canonical form.
func FuzzSigV4(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab", "a=1&b=%7E&c", "/a/./b/../c%20d")
	f.Add("AWS4-ECDSA-P256-SHA256 Credential=A/", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2Fx&X-Amz-Signature=1", "")
	f.Add("", "%zz=%&&=", "//..//")
	f.Fuzz(func(t *testing.T, auth, query, path string) {
		parseSigV4Auth(auth)
		h := httptest.NewRequest("GET", "https://h/", nil).Header
		h.Set("Authorization", auth)
		detectSigV4(h, query)
		if q := canonicalQuery(query); canonicalQuery(q) != q {
			t.Fatalf("canonicalQuery(%q) = %q is not canonical: %q", query, q, canonicalQuery(q))
		}
		canonicalURI(path, "service")
		canonicalURI(path, "s3")
	})
}

// FuzzReplacer: a body cut anywhere comes out as a whole-string
// replacement of the fakes.
func FuzzReplacer(f *testing.F) {
	f.Add("xFAKEAAAAyFAKEBBBBBz", 3)
	f.Add("FAKEAAAFAKEAAAA", 1)
	f.Fuzz(func(t *testing.T, in string, cut int) {
		pairs := []pair{{[]byte("FAKEAAAA"), []byte("real-a"), &Secret{}}, {[]byte("FAKEBBBBB"), []byte("rb"), &Secret{}}}
		want := strings.NewReplacer("FAKEAAAA", "real-a", "FAKEBBBBB", "rb").Replace(in)
		var r io.Reader = strings.NewReader(in)
		if cut%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		got, err := io.ReadAll(newReplacer(r, pairs, func(pair) {}))
		if err != nil || string(got) != want {
			t.Fatalf("%q: got %q, want %q", in, got, want)
		}
	})
}
