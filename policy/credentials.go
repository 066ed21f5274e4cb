package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Credentials are the secrets a sandboxed command sees only as fakes
// (sandbox-runtime's credentials block, mode "mask"): the command reads a
// fake value in its environment or in the file, and cordon's proxy puts
// the real value in its place in requests to the credential's hosts. The
// credentials denied outright (mode "deny") are in Env.Deny and
// Filesystem.DenyRead instead.
type Credentials struct {
	// Masked are the masked credentials, environment variables first.
	Masked []Credential `json:"masked,omitempty"`
	// AllowPlaintextInject lets the proxy put real values in plain HTTP
	// requests too (credentials.allowPlaintextInject): the upstream's
	// identity is then unverified and the secret crosses the network in
	// the clear. Off, real values go only into TLS connections whose
	// server cordon verified against the host's roots.
	AllowPlaintextInject bool `json:"allowPlaintextInject,omitempty"`
	// AWSPairs link masked variables into AWS credentials, for the proxy
	// to sign again (SigV4) what the command signed with the fake secret:
	// credentials.awsPairs, and the conventional AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when they are masked
	// whole and no pair names them.
	AWSPairs []AWSPair `json:"awsPairs,omitempty"`
	// SigV4 says what becomes of the signed AWS requests the proxy cannot
	// sign again.
	SigV4 SigV4 `json:"sigv4"`
}

// Credential is one masked secret: an environment variable (Env) or a
// file (File).
type Credential struct {
	// Env is the variable's name; File the file's absolute path (never a
	// pattern).
	Env  string `json:"env,omitempty"`
	File string `json:"file,omitempty"`
	// Extract, when set, is a regular expression (RE2) whose first group
	// finds the secrets in the value: only they are masked, the rest is
	// kept. Empty: the whole value is the secret.
	Extract string `json:"extract,omitempty"`
	// Decode "jwt" reads the value (or each match) as a JSON Web Token:
	// the fake is a token too, and MaskClaims names the claims of its
	// payload that are secret (none: the whole token is).
	Decode     string   `json:"decode,omitempty"`
	MaskClaims []string `json:"maskClaims,omitempty"`
	// MaskDuplicates masks the secrets found by Extract or Decode wherever
	// else they appear in the value too.
	MaskDuplicates bool `json:"maskDuplicates,omitempty"`
	// OnExtractNoMatch is what happens when Extract or Decode finds no
	// secret when the run starts: "deny" (the variable is unset, the file
	// hidden; cordon's default), "warn" (left as the rest of the policy
	// has it, with a warning) or "error" (nothing runs).
	OnExtractNoMatch string `json:"onExtractNoMatch,omitempty"`
	// InjectHosts are the host patterns (no port) whose requests receive
	// the real value: the entry's injectHosts, or every allowed domain.
	InjectHosts []string `json:"injectHosts"`
	// Source is where the entry was set.
	Source string `json:"source"`
}

// Name names the credential in messages and records, never its value:
// "env GH_TOKEN", "file /home/u/.npmrc".
func (c Credential) Name() string {
	if c.File != "" {
		return "file " + c.File
	}
	return "env " + c.Env
}

// Structured reports whether only parts of the value are secret (extract
// or decode), rather than the whole of it.
func (c Credential) Structured() bool { return c.Extract != "" || c.Decode != "" }

// AWSPair names the masked variables that make one AWS credential.
type AWSPair struct {
	AccessKeyID     string `json:"accessKeyIdVar"`
	SecretAccessKey string `json:"secretAccessKeyVar"`
	SessionToken    string `json:"sessionTokenVar,omitempty"`
}

// SigV4 are the policies for the AWS signatures the proxy cannot make
// again with the real secret: "deny" (the request is refused with 403) or
// "passthrough" (sent as it is: the server refuses the fake signature).
type SigV4 struct {
	Streaming string `json:"streaming"`
	Presigned string `json:"presigned"`
	SigV4a    string `json:"sigv4a"`
}

// The values of a credential's mode, its onExtractNoMatch and the SigV4
// policies.
const (
	credDeny        = "deny"
	credMask        = "mask"
	noMatchWarn     = "warn"
	noMatchError    = "error"
	sigv4Passthough = "passthrough"
)

// credEntry is a credentials.envVars or credentials.files entry of a
// layer.
type credEntry struct {
	Credential
	mode       string
	src        Source
	hostsSet   bool // injectHosts was written
	hostsSrc   []Source
	extractSrc Source
}

// key is what two layers' entries for the same secret share.
func (e credEntry) key() string { return e.Name() }

// credLayer is what one layer's credentials block says.
type credLayer struct {
	entries   []credEntry
	plaintext *setting[bool]
	pairs     []setting[AWSPair]
	sigv4     map[string]*setting[string]
}

// checkExtract compiles an extract pattern: RE2 syntax (sandbox-runtime
// takes JavaScript's), with a first group for the secret.
func checkExtract(s string) error {
	re, err := regexp.Compile(s)
	if err != nil {
		return fmt.Errorf("%q is not a regular expression cordon reads (RE2 syntax: no lookaround, no backreferences): %v", s, err)
	}
	if re.NumSubexp() < 1 {
		return fmt.Errorf("%q has no group: its first group is the secret to mask (as in \"token:\\\\s*(\\\\S+)\")", s)
	}
	return nil
}

// checkInjectHost validates one injectHosts entry: a host pattern without
// a port (a credential goes to a host, whatever its port).
func checkInjectHost(s string) (string, error) {
	v, err := CheckDomainPattern(s)
	if err != nil {
		return "", err
	}
	if h, _ := splitPatternPort(v); h != v {
		return "", fmt.Errorf("%q: injectHosts names hosts, without a port", s)
	}
	return v, nil
}

// injectCovered reports whether every host the injectHosts pattern h
// names is reachable through the allowed domain patterns (their ports
// dropped): an exact name must match one, "*.x" needs "*.x" or a wildcard
// above it.
func injectCovered(h string, allowed []string) bool {
	base, wild := strings.CutPrefix(h, "*.")
	for _, a := range allowed {
		a, _ = splitPatternPort(a)
		abase, awild := strings.CutPrefix(a, "*.")
		switch {
		case !wild && MatchDomain(a, h, 0):
			return true
		case wild && awild && (base == abase || strings.HasSuffix(base, "."+abase)):
			return true
		}
	}
	return false
}

// hostsOf drops the ports of domain patterns, once each.
func hostsOf(domains []string) []string {
	var out []string
	for _, d := range domains {
		h, _ := splitPatternPort(d)
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// credMerge folds the layers' credentials blocks.
type credMerge struct {
	masked    []credEntry       // in the order first named; a later layer's entry replaces
	denied    map[string]Source // the secrets some layer denies
	plaintext *setting[bool]
	pairs     []setting[AWSPair]
	sigv4     map[string]*setting[string]
}

// apply merges a layer's credentials block: a secret any layer denies
// stays denied; of the masks, the highest layer's entry decides.
func (c *credMerge) apply(l *layer) {
	if c.denied == nil {
		c.denied = map[string]Source{}
		c.sigv4 = map[string]*setting[string]{}
	}
	for _, e := range l.creds.entries {
		if e.mode == credDeny {
			if _, ok := c.denied[e.key()]; !ok {
				c.denied[e.key()] = e.src
			}
			continue
		}
		if i := slices.IndexFunc(c.masked, func(x credEntry) bool { return x.key() == e.key() }); i >= 0 {
			c.masked[i] = e
		} else {
			c.masked = append(c.masked, e)
		}
	}
	if l.creds.plaintext != nil {
		c.plaintext = l.creds.plaintext
	}
	c.pairs = append(c.pairs, l.creds.pairs...)
	for k, v := range l.creds.sigv4 {
		c.sigv4[k] = v
	}
}

// untrustedCredentials strips from an untrusted workspace's layer what
// would widen the sandbox: a mask sends the real value to hosts the
// command can reach, so it is applied as a deny (hiding the secret, as a
// mask does inside); allowPlaintextInject is dropped.
func (m *merger) untrustedCredentials(l *layer) {
	for i, e := range l.creds.entries {
		if e.mode != credMask {
			continue
		}
		m.ignored("credentials mode mask", e.Name(), e.src, untrustedReason+"; the secret is denied instead")
		l.creds.entries[i].mode = credDeny
		if e.File != "" {
			l.denyRead = append(l.denyRead, entry{V: EscapePattern(e.File), Src: e.src})
		}
	}
	if s := l.creds.plaintext; s != nil && s.V {
		m.ignored("credentials.allowPlaintextInject", "true", s.Src, untrustedReason)
		l.creds.plaintext = nil
	}
}

// maskedFiles settles masks against denies: a mask of a secret some
// layer denies goes (the deny wins), and so does a mask of a file the
// managed settings hide (themselves not masking it). A masked file stays
// in denyRead: the runtime binds its fake over it when the run starts,
// and when it cannot (the file is gone, extract finds nothing), the file
// stays hidden.
func (m *merger) maskedFiles() {
	c := &m.creds
	key := "sandbox.filesystem.denyRead"
	c.masked = slices.DeleteFunc(c.masked, func(e credEntry) bool {
		if src, ok := c.denied[e.key()]; ok {
			m.ignored("credentials mode mask", e.Name(), e.src, "mode \"deny\" for it at "+src.String()+" wins")
			return true
		}
		if e.File == "" {
			return false
		}
		pat := EscapePattern(e.File)
		for _, d := range m.lists[key] {
			if d.Src.Scope == ScopeManaged && e.src.Scope != ScopeManaged && reaches(pat, d.V) {
				m.ignored("credentials mode mask", e.Name(), e.src, "the managed settings deny reading it ("+d.Src.String()+")")
				return true
			}
		}
		return false
	})
	for _, e := range c.masked {
		pat := EscapePattern(e.File)
		if e.File != "" && !slices.ContainsFunc(m.lists[key], func(d entry) bool { return d.V == pat }) {
			m.lists[key] = append(m.lists[key], entry{V: pat, Src: e.src})
		}
	}
}

// conventional AWS variable names, paired when masked whole and no
// awsPairs entry names them.
var awsConventional = AWSPair{AccessKeyID: "AWS_ACCESS_KEY_ID", SecretAccessKey: "AWS_SECRET_ACCESS_KEY", SessionToken: "AWS_SESSION_TOKEN"}

// credentials fills Policy.Credentials once the allowed domains are
// known: each mask's hosts (its injectHosts, which the allowed domains
// must cover, or every allowed domain), the AWS pairs and the SigV4
// policies.
func (m *merger) credentials() error {
	c, p, rep := &m.creds, m.p, m.rep
	allowed := hostsOf(p.Network.AllowedDomains)
	out := &p.Credentials
	for _, e := range c.masked {
		cr := e.Credential
		cr.Source = e.src.String()
		if e.hostsSet {
			for i, h := range cr.InjectHosts {
				if !injectCovered(h, allowed) {
					src := e.hostsSrc[i]
					return &SettingsError{File: src.File, Pos: Pos{src.Line, src.Col},
						Msg: "injectHosts entry " + quote(h) + " is not reachable through allowedDomains: add it (or a wildcard covering it) to allowedDomains, or remove it from injectHosts"}
				}
			}
		} else {
			cr.InjectHosts = allowed
		}
		if cr.Structured() && cr.OnExtractNoMatch == "" {
			cr.OnExtractNoMatch = credDeny
		}
		if cr.InjectHosts == nil {
			cr.InjectHosts = []string{}
		}
		out.Masked = append(out.Masked, cr)
		hosts := strings.Join(cr.InjectHosts, ", ")
		if hosts == "" {
			hosts = "no host (nothing is allowed)"
		}
		rep.Values = append(rep.Values, ValueReport{Key: "credentials.masked", Value: cr.Name() + " → " + hosts, Source: cr.Source})
	}
	if c.plaintext != nil {
		out.AllowPlaintextInject = c.plaintext.V
		rep.Values = append(rep.Values, ValueReport{Key: "credentials.allowPlaintextInject", Value: fmt.Sprint(c.plaintext.V), Source: c.plaintext.Src.String()})
	}
	whole := func(name string) bool {
		return slices.ContainsFunc(out.Masked, func(cr Credential) bool { return cr.Env == name && !cr.Structured() })
	}
	used := map[string]bool{}
	for _, ps := range c.pairs {
		pair := ps.V
		for _, v := range []string{pair.AccessKeyID, pair.SecretAccessKey, pair.SessionToken} {
			if v == "" {
				continue
			}
			if used[v] {
				return &SettingsError{File: ps.Src.File, Pos: Pos{ps.Src.Line, ps.Src.Col}, Msg: "credentials.awsPairs: " + quote(v) + " is in more than one slot: each variable fills one"}
			}
			used[v] = true
			if !whole(v) {
				return &SettingsError{File: ps.Src.File, Pos: Pos{ps.Src.Line, ps.Src.Col},
					Msg: "credentials.awsPairs: " + quote(v) + " is not a credentials.envVars entry with mode \"mask\" and without extract or decode (an AWS pair links variables masked whole)"}
			}
		}
		out.AWSPairs = append(out.AWSPairs, pair)
		rep.Values = append(rep.Values, ValueReport{Key: "credentials.awsPairs", Value: pair.AccessKeyID + " " + pair.SecretAccessKey + " " + pair.SessionToken, Source: ps.Src.String()})
	}
	conv := awsConventional
	if !used[conv.AccessKeyID] && !used[conv.SecretAccessKey] && !used[conv.SessionToken] {
		switch {
		case whole(conv.AccessKeyID) && whole(conv.SecretAccessKey):
			if !whole(conv.SessionToken) {
				conv.SessionToken = ""
			}
			out.AWSPairs = append(out.AWSPairs, conv)
		case whole(conv.SecretAccessKey):
			rep.Notes = append(rep.Notes, "AWS_SECRET_ACCESS_KEY is masked but AWS_ACCESS_KEY_ID is not: the proxy cannot tell the signed requests to sign them again, and AWS refuses them (mask both)")
		}
	}
	out.SigV4 = SigV4{Streaming: credDeny, Presigned: credDeny, SigV4a: credDeny}
	for k, dst := range map[string]*string{"streaming": &out.SigV4.Streaming, "presigned": &out.SigV4.Presigned, "sigv4a": &out.SigV4.SigV4a} {
		if s := c.sigv4[k]; s != nil {
			*dst = s.V
			rep.Values = append(rep.Values, ValueReport{Key: "credentials.sigv4." + k, Value: s.V, Source: s.Src.String()})
		}
	}
	if len(out.Masked) > 0 {
		rep.Notes = append(rep.Notes, "a masked secret's real value goes only into requests to its hosts, over TLS that cordon terminates and verifies (plain HTTP too with allowPlaintextInject); the command reads a fake")
	}
	return nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
