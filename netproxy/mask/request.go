package mask

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Refusal is a request the proxy must answer with 403 instead of
// forwarding: a signed AWS request it cannot sign again.
type Refusal struct {
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// maxResignBody bounds the body buffered to sign a request again whose
// signature covers the body's hash (sandbox-runtime's bound too).
const maxResignBody = 64 << 20

// Request puts the real values of the secrets d.Host may receive into
// req, which goes to d: in every header value (and the user and password
// of Basic credentials), in the query, and in the body unless it is
// encoded (gzip: the fakes stay). Over plain HTTP it does so only with
// Options.Plaintext. Every fake it meets is reported to on (when not
// nil), the ones that go out as they are too: another host's secret, or
// its own over plain HTTP. A request signed (AWS SigV4) with a masked key
// is signed again with the real one, or refused (*Refusal) as the SigV4
// policies say. With no secret at all, req is left alone.
func (s *Set) Request(req *http.Request, d Dest, on func(Event)) error {
	inject := d.TLS || s.opts.Plaintext
	s.mu.RLock()
	var own, others []pair
	for _, x := range s.secrets {
		if inject && x.hosts(d.Host) {
			own = append(own, pair{[]byte(x.fake), []byte(x.real), x})
		} else {
			others = append(others, pair{[]byte(x.fake), []byte(x.fake), x})
		}
	}
	s.mu.RUnlock()
	if len(own)+len(others) == 0 {
		return nil
	}
	ev := &events{dest: d, on: on}
	var plan *resign
	if inject {
		var err error
		if plan, err = s.planSigV4(req, d.Host); err != nil {
			return err
		}
	}
	all := append(own, others...)
	for name, vs := range req.Header {
		for i, v := range vs {
			if strings.EqualFold(name, "Authorization") {
				v = basic(v, all, ev)
			}
			vs[i] = replaceString(v, all, ev)
		}
	}
	if q := req.URL.RawQuery; q != "" {
		req.URL.RawQuery = replaceQuery(q, own, others, ev)
	}
	if req.Body != nil && req.Body != http.NoBody && identity(req.Header.Get("Content-Encoding")) {
		req.Body = newReplacer(req.Body, all, ev.saw)
		for _, p := range own {
			if len(p.from) != len(p.to) {
				// The length changes: the body goes chunked (or with
				// its length, once buffered to be signed).
				req.ContentLength = -1
				req.Header.Del("Content-Length")
				break
			}
		}
	}
	if plan != nil {
		return plan.apply(req)
	}
	return nil
}

// identity reports whether a Content-Encoding leaves the body readable.
func identity(enc string) bool {
	enc = strings.TrimSpace(enc)
	return enc == "" || strings.EqualFold(enc, "identity")
}

// events reports each secret once per request.
type events struct {
	dest Dest
	on   func(Event)
	mu   sync.Mutex
	done map[*Secret]bool
}

// saw reports a fake met in the request: p's secret, its real value put
// in when p replaces the fake with another value.
func (e *events) saw(p pair) {
	if e.on == nil {
		return
	}
	e.mu.Lock()
	if e.done == nil {
		e.done = map[*Secret]bool{}
	}
	first := !e.done[p.sec]
	e.done[p.sec] = true
	e.mu.Unlock()
	if first {
		e.on(Event{Dest: e.dest, Name: p.sec.Name, Own: p.sec.hosts(e.dest.Host), Substituted: !bytes.Equal(p.from, p.to)})
	}
}

// replaceString replaces every fake of pairs in v.
func replaceString(v string, pairs []pair, ev *events) string {
	for _, p := range pairs {
		if strings.Contains(v, string(p.from)) {
			v = strings.ReplaceAll(v, string(p.from), string(p.to))
			ev.saw(p)
		}
	}
	return v
}

// basic replaces the fakes inside Basic credentials (base64 of
// user:password), where git and most HTTP clients put a token.
func basic(v string, pairs []pair, ev *events) string {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return v
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return v
	}
	out := replaceString(string(raw), pairs, ev)
	if out == string(raw) {
		return v
	}
	return scheme + " " + base64.StdEncoding.EncodeToString([]byte(out))
}

// replaceQuery replaces the fakes in a raw query: a fake is letters and
// digits, so it appears as it is; the real value goes in escaped.
func replaceQuery(q string, own, others []pair, ev *events) string {
	for _, p := range own {
		if strings.Contains(q, string(p.from)) {
			q = strings.ReplaceAll(q, string(p.from), url.QueryEscape(string(p.to)))
			ev.saw(p)
		}
	}
	for _, p := range others {
		if strings.Contains(q, string(p.from)) {
			ev.saw(p)
		}
	}
	return q
}

// bufferBody reads req's whole body (at most limit bytes) and puts it
// back, with its length.
func bufferBody(req *http.Request, limit int64) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &Refusal{Reason: fmt.Sprintf("the request is signed with a masked AWS credential over its body's hash, and its body is over the %d bytes the proxy holds to sign it again (sign it as UNSIGNED-PAYLOAD)", limit)}
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.ContentLength = int64(len(b))
	req.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return b, nil
}
