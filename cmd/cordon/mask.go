package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/netproxy/mask"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/spec"
)

// masking is a run's masked credentials: the secrets (in this process's
// memory only), the fakes the command sees, and the CA that terminates
// TLS to their hosts.
type masking struct {
	set  *mask.Set
	ca   *netproxy.CA
	dir  string // the fake files and the trust bundle; removed after the run
	spec spec.Masked
}

// maxMaskedFile bounds a masked file: credential files are small.
const maxMaskedFile = 1 << 20

// processCA is the CA of this process: one per cordon run, one for the
// life of cordon serve.
var processCA = sync.OnceValues(netproxy.NewCA)

// maskCredentials reads the real values of the policy's masked
// credentials (from env, the caller's environment, and the files) and
// makes their fakes, written under state for the run id; with some secret
// to put back on the wire, or tlsTerminate, the CA that ends TLS and the
// bundle the sandbox trusts. Warnings go to warn. Nil when nothing is
// masked and no TLS is ended.
func maskCredentials(p *policy.Policy, env []string, state, id string, warn io.Writer) (*masking, error) {
	cr, tt := p.Credentials, p.Network.TLSTerminate
	if !spec.Proxied(p) {
		tt = nil // no network: no TLS to end
	}
	if len(cr.Masked) == 0 && tt == nil {
		return nil, nil
	}
	m := &masking{set: mask.New(mask.Options{
		SigV4:     mask.SigV4Policy{Streaming: cr.SigV4.Streaming, Presigned: cr.SigV4.Presigned, SigV4a: cr.SigV4.SigV4a},
		Plaintext: cr.AllowPlaintextInject,
	})}
	m.spec.Env = map[string]string{}
	var files []spec.MaskedFile
	var contents []string
	for _, c := range cr.Masked {
		hosts, err := injectHosts(c.InjectHosts)
		if err != nil {
			return nil, fmt.Errorf("%s: credentials %s: %w", c.Source, c.Name(), err)
		}
		rule := mask.Rule{Name: c.Name(), JWT: c.Decode == "jwt", Claims: c.MaskClaims, Duplicates: c.MaskDuplicates, Hosts: hosts}
		if c.Extract != "" {
			rule.Extract = regexp.MustCompile(c.Extract) // checked when the settings were read
		}
		value, ok, err := credentialValue(c, env)
		if err != nil {
			return nil, err
		}
		if !ok {
			// nothing to protect: an unset variable, a missing file
			// (which stays hidden)
			continue
		}
		fake, err := m.set.Mask(rule, value)
		if errors.Is(err, mask.ErrNoMatch) {
			switch c.OnExtractNoMatch {
			case "error":
				return nil, fmt.Errorf("%s: credentials %s: no secret found to mask (onExtractNoMatch \"error\")", c.Source, c.Name())
			case "warn":
				fmt.Fprintf(warn, "cordon: warning: credentials %s (%s): no secret found to mask; the command reads it unprotected (onExtractNoMatch \"warn\")\n", c.Name(), c.Source)
				if c.Env != "" {
					m.spec.Env[c.Env] = value
				} else {
					files = append(files, spec.MaskedFile{Path: c.File, Fake: c.File})
					contents = append(contents, "")
				}
			default:
				fmt.Fprintf(warn, "cordon: warning: credentials %s (%s): no secret found to mask; it is hidden from the command (onExtractNoMatch \"deny\")\n", c.Name(), c.Source)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: credentials %s: %w", c.Source, c.Name(), err)
		}
		if c.Env != "" {
			m.spec.Env[c.Env] = fake
		} else {
			files = append(files, spec.MaskedFile{Path: c.File})
			contents = append(contents, fake)
		}
	}
	for _, pair := range cr.AWSPairs {
		id, sec, tok := m.spec.Env[pair.AccessKeyID], m.spec.Env[pair.SecretAccessKey], m.spec.Env[pair.SessionToken]
		if id == "" || sec == "" {
			continue // not set on this host
		}
		if err := m.set.PairAWS(id, sec, tok); err != nil {
			return nil, err
		}
	}
	if m.set.Len() == 0 && len(files) == 0 && tt == nil {
		return m, nil
	}
	m.dir = runtime.RunFilesDir(state, id)
	if err := os.Mkdir(m.dir, 0o700); err != nil {
		return nil, fmt.Errorf("masked credentials: %w", err)
	}
	for i := range files {
		if files[i].Fake != "" {
			continue // onExtractNoMatch "warn": the file itself
		}
		files[i].Fake = filepath.Join(m.dir, strconv.Itoa(i))
		if err := os.WriteFile(files[i].Fake, []byte(contents[i]), 0o600); err != nil {
			m.close()
			return nil, fmt.Errorf("masked credentials: %w", err)
		}
	}
	m.spec.Files = files
	if m.set.Len() > 0 || tt != nil {
		ca, err := terminationCA(tt)
		if err != nil {
			m.close()
			return nil, err
		}
		var extra []string
		if tt != nil {
			extra = tt.ExtraCACertPaths
		}
		m.ca = ca
		m.spec.TrustBundle = filepath.Join(m.dir, "trust.pem")
		if err := os.WriteFile(m.spec.TrustBundle, ca.TrustBundle(extra...), 0o644); err != nil {
			m.close()
			return nil, fmt.Errorf("masked credentials: %w", err)
		}
	}
	return m, nil
}

// terminationCA is the CA that ends TLS: the user's of tlsTerminate's
// caCertPath and caKeyPath, else this process's ephemeral one.
func terminationCA(tt *policy.TLSTerminate) (*netproxy.CA, error) {
	if tt != nil && tt.CACertPath != "" {
		ca, err := netproxy.LoadCA(tt.CACertPath, tt.CAKeyPath)
		if err != nil {
			return nil, fmt.Errorf("sandbox.network.tlsTerminate: %w", err)
		}
		return ca, nil
	}
	ca, err := processCA()
	if err != nil {
		return nil, fmt.Errorf("TLS termination: %w", err)
	}
	return ca, nil
}

// injectHosts is a credential's hosts: whether a host (no port) matches
// one of the patterns.
func injectHosts(patterns []string) (func(string) bool, error) {
	rules, err := netproxy.NewRules(patterns, nil)
	if err != nil {
		return nil, err
	}
	return func(host string) bool {
		match, err := rules.Match(host, 443)
		return err == nil && match.Verdict == netproxy.Allowed
	}, nil
}

// credentialValue reads a credential's real value; false when there is
// none (the variable is unset, the file missing).
func credentialValue(c policy.Credential, env []string) (string, bool, error) {
	if c.Env != "" {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], c.Env+"="); ok {
				return v, true, nil
			}
		}
		return "", false, nil
	}
	fi, err := os.Stat(c.File)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: credentials %s: %w", c.Source, c.Name(), err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxMaskedFile {
		return "", false, fmt.Errorf("%s: credentials %s: mode \"mask\" takes a regular file of at most %d bytes", c.Source, c.Name(), maxMaskedFile)
	}
	b, err := os.ReadFile(c.File)
	if err != nil {
		return "", false, fmt.Errorf("%s: credentials %s: %w", c.Source, c.Name(), err)
	}
	if !utf8.Valid(b) {
		return "", false, fmt.Errorf("%s: credentials %s: mode \"mask\" takes text, and the file is not UTF-8 (use mode \"deny\")", c.Source, c.Name())
	}
	return string(b), true, nil
}

// close removes the fakes; nil-safe.
func (m *masking) close() {
	if m != nil && m.dir != "" {
		os.RemoveAll(m.dir)
	}
}
