package mask

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	exampleKeyID  = "AKIDEXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	exampleDate   = "20150830T123600Z"
)

// TestSignV4: signatures as AWS's test suite (get-vanilla) and botocore
// compute them for the same requests.
func TestSignV4(t *testing.T) {
	for _, tc := range []struct {
		name, method, target, body, service string
		header                              http.Header
		signed                              []string
		want                                string
	}{
		{"get-vanilla", "GET", "/", "", "service", nil, []string{"host", "x-amz-date"},
			"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{"dot segments, query order, spaces", "GET", "/a/./b/../c%20d?Param2=value2&Param1=value%2B1", "", "service",
			http.Header{"X-Custom": {"  a   b  "}}, []string{"host", "x-amz-date", "x-custom"},
			"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-custom, Signature=20f04784327aa4c1f4abd9a27ea93e888b60efe84adf3dbb4d68448216594d4d"},
		{"post body", "POST", "/", "Param1=value1", "service",
			http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []string{"content-type", "host", "x-amz-date"},
			"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
		{"s3 path as on the wire", "PUT", "/key/a/../b%2Fc", "hello", "s3",
			http.Header{"X-Amz-Content-Sha256": {"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}}, []string{"host", "x-amz-content-sha256", "x-amz-date"},
			"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=4a18844eaad7f07552fcb585dde182d7f74142c57445ccf156934fc670149df4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := "example.amazonaws.com"
			if tc.service == "s3" {
				host = "bucket.s3.amazonaws.com"
			}
			req := httptest.NewRequest(tc.method, "https://"+host+tc.target, strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header[k] = v
			}
			req.Header.Set("X-Amz-Date", exampleDate)
			hash := sha256Hex(tc.body)
			got, err := signV4(req.Method, req.URL.EscapedPath(), req.URL.RawQuery, req.Header, host, tc.signed, hash, exampleDate,
				sigv4Scope{"20150830", "us-east-1", tc.service}, exampleKeyID, exampleSecret)
			if err != nil || got != tc.want {
				t.Errorf("got  %s (%v)\nwant %s", got, err, tc.want)
			}
		})
	}
}

// TestResign: a request signed with the masked key goes out signed with
// the real one, over the body with its fakes replaced; the forms the
// proxy cannot sign again are refused, or passed as they are when the
// policy says so; a request signed with another key is left alone.
func TestResign(t *testing.T) {
	fakeSecret := "placeholder"
	setup := func(pol SigV4Policy) (*Set, string, string, string) {
		s := New(Options{SigV4: pol})
		hosts := only("example.amazonaws.com")
		id, _ := s.Mask(Rule{Name: "env AWS_ACCESS_KEY_ID", Hosts: hosts}, exampleKeyID)
		sec, _ := s.Mask(Rule{Name: "env AWS_SECRET_ACCESS_KEY", Hosts: hosts}, exampleSecret)
		tok, _ := s.Mask(Rule{Name: "env AWS_SESSION_TOKEN", Hosts: hosts}, "real-session-token-0123456789")
		if err := s.PairAWS(id, sec, tok); err != nil {
			t.Fatal(err)
		}
		return s, id, sec, tok
	}
	// sign signs a request as a client holding keyID and secret does.
	sign := func(req *http.Request, keyID, secret, body string, extra ...string) {
		req.Header.Set("X-Amz-Date", exampleDate)
		signed := append([]string{"host", "x-amz-date"}, extra...)
		auth, err := signV4(req.Method, req.URL.EscapedPath(), req.URL.RawQuery, req.Header, req.Host, signed, sha256Hex(body), exampleDate,
			sigv4Scope{"20150830", "us-east-1", "service"}, keyID, secret)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
	}
	// verify checks req's signature as AWS does, with the real key.
	verify := func(t *testing.T, req *http.Request) {
		t.Helper()
		body, _ := io.ReadAll(req.Body)
		a, ok := parseSigV4Auth(req.Header.Get("Authorization"))
		if !ok || a.keyID != exampleKeyID {
			t.Fatalf("authorization %q", req.Header.Get("Authorization"))
		}
		want, _ := signV4(req.Method, req.URL.EscapedPath(), req.URL.RawQuery, req.Header, req.Host, a.signed, sha256Hex(string(body)), exampleDate,
			sigv4Scope{a.date, a.region, a.service}, exampleKeyID, exampleSecret)
		if req.Header.Get("Authorization") != want {
			t.Errorf("signature does not verify:\n got %s\nwant %s", req.Header.Get("Authorization"), want)
		}
		if req.Header.Get("X-Amz-Security-Token") != "real-session-token-0123456789" {
			t.Errorf("session token %q", req.Header.Get("X-Amz-Security-Token"))
		}
	}
	t.Run("header signature", func(t *testing.T) {
		s, id, sec, tok := setup(SigV4Policy{})
		body := `{"Token":"` + tok + `"}`
		req := httptest.NewRequest("POST", "https://example.amazonaws.com/", strings.NewReader(body))
		req.Header.Set("X-Amz-Security-Token", tok)
		sign(req, id, sec, body, "x-amz-security-token")
		if err := s.Request(req, tlsTo("example.amazonaws.com"), nil); err != nil {
			t.Fatal(err)
		}
		verify(t, req)
		_ = fakeSecret
	})
	t.Run("session token added to what is signed", func(t *testing.T) {
		s, id, sec, _ := setup(SigV4Policy{})
		req := httptest.NewRequest("GET", "https://example.amazonaws.com/?a=b", nil)
		sign(req, id, sec, "")
		if err := s.Request(req, tlsTo("example.amazonaws.com"), nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req.Header.Get("Authorization"), "SignedHeaders=host;x-amz-date;x-amz-security-token,") {
			t.Errorf("authorization %q", req.Header.Get("Authorization"))
		}
		verify(t, req)
	})
	t.Run("other host: not signed again", func(t *testing.T) {
		s, id, sec, _ := setup(SigV4Policy{})
		req := httptest.NewRequest("GET", "https://other.example/", nil)
		sign(req, id, sec, "")
		before := req.Header.Get("Authorization")
		if err := s.Request(req, tlsTo("other.example"), nil); err != nil || req.Header.Get("Authorization") != before {
			t.Errorf("changed: %v %q", err, req.Header.Get("Authorization"))
		}
	})
	t.Run("plain HTTP: not signed again", func(t *testing.T) {
		s, id, sec, _ := setup(SigV4Policy{})
		req := httptest.NewRequest("GET", "http://example.amazonaws.com/", nil)
		sign(req, id, sec, "")
		before := req.Header.Get("Authorization")
		if err := s.Request(req, Dest{Host: "example.amazonaws.com", Port: 80}, nil); err != nil || req.Header.Get("Authorization") != before {
			t.Errorf("changed: %v %q", err, req.Header.Get("Authorization"))
		}
	})
	t.Run("real key: left alone", func(t *testing.T) {
		s, _, _, _ := setup(SigV4Policy{})
		req := httptest.NewRequest("GET", "https://example.amazonaws.com/", nil)
		sign(req, "AKIAREALOTHERKEY", "other-secret", "")
		before := req.Header.Get("Authorization")
		if err := s.Request(req, tlsTo("example.amazonaws.com"), nil); err != nil || req.Header.Get("Authorization") != before {
			t.Errorf("changed: %v %q", err, req.Header.Get("Authorization"))
		}
	})
	for _, tc := range []struct {
		name string
		make func(id, sec string) *http.Request
		pol  SigV4Policy
		deny bool
	}{
		{"streaming denied", func(id, sec string) *http.Request {
			req := httptest.NewRequest("PUT", "https://example.amazonaws.com/k", strings.NewReader("x"))
			req.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
			req.Header.Set("Authorization", sigv4Algorithm+" Credential="+id+"/20150830/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
			return req
		}, SigV4Policy{Streaming: "deny"}, true},
		{"streaming passthrough", func(id, sec string) *http.Request {
			req := httptest.NewRequest("PUT", "https://example.amazonaws.com/k", strings.NewReader("x"))
			req.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
			req.Header.Set("Authorization", sigv4Algorithm+" Credential="+id+"/20150830/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
			return req
		}, SigV4Policy{Streaming: "passthrough"}, false},
		{"presigned denied", func(id, sec string) *http.Request {
			return httptest.NewRequest("GET", "https://example.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="+id+"%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=00", nil)
		}, SigV4Policy{}, true},
		{"sigv4a denied", func(id, sec string) *http.Request {
			req := httptest.NewRequest("GET", "https://example.amazonaws.com/", nil)
			req.Header.Set("Authorization", sigv4aAlgorithm+" Credential="+id+"/20150830/s3/aws4_request, SignedHeaders=host, Signature=00")
			return req
		}, SigV4Policy{}, true},
		{"missing signed header", func(id, sec string) *http.Request {
			req := httptest.NewRequest("GET", "https://example.amazonaws.com/", nil)
			req.Header.Set("X-Amz-Date", exampleDate)
			req.Header.Set("Authorization", sigv4Algorithm+" Credential="+id+"/20150830/us-east-1/s3/aws4_request, SignedHeaders=host;x-gone, Signature=00")
			return req
		}, SigV4Policy{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, id, sec, _ := setup(tc.pol)
			err := s.Request(tc.make(id, sec), tlsTo("example.amazonaws.com"), nil)
			var r *Refusal
			if got := errors.As(err, &r); got != tc.deny {
				t.Errorf("refused %v (%v), want %v", got, err, tc.deny)
			}
		})
	}
}

func sha256Hex(s string) string {
	r := httptest.NewRequest("POST", "https://h/", strings.NewReader(s))
	b, _ := bufferBody(r, 1<<20)
	sum := sumHex(b)
	return sum
}
