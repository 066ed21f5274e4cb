package policy

import (
	"strings"
)

// credentials reads sandbox-runtime's credentials block (and Claude Code's
// sandbox.credentials): files and environment variables the command must
// not read. A "deny" entry hides the file (denyRead) or drops the variable
// (env deny); a "mask" entry gives the command a fake value that cordon's
// proxy swaps for the real one in requests to the entry's hosts.
func (d *decoder) credentials(n *node, path string) error {
	o, err := d.object(n, path, true)
	if err != nil {
		return err
	}
	l := d.l
	if l.creds.sigv4 == nil {
		l.creds.sigv4 = map[string]*setting[string]{}
	}
	each := func(v *node, name string, fn func(o *object) error) error {
		if v.kind != kindArray {
			return d.errAt(v.pos, "%s must be an array of objects, not %s", name, v.kind)
		}
		for _, it := range v.items {
			o, err := d.object(it, name+"[]", true)
			if err != nil {
				return err
			}
			if err := fn(o); err != nil {
				return err
			}
		}
		return nil
	}
	return o.each([]string{"files", "envVars", "allowPlaintextInject", "awsPairs", "sigv4"}, func(key string, v *node) error {
		name := path + "." + key
		switch key {
		case "files":
			return each(v, name, func(o *object) error { return d.credential(o, name, true) })
		case "envVars":
			return each(v, name, func(o *object) error { return d.credential(o, name, false) })
		case "allowPlaintextInject":
			b, err := d.boolean(v, name)
			l.creds.plaintext = b
			return err
		case "awsPairs":
			return each(v, name, func(o *object) error {
				var pair AWSPair
				fields := map[string]*string{"accessKeyIdVar": &pair.AccessKeyID, "secretAccessKeyVar": &pair.SecretAccessKey, "sessionTokenVar": &pair.SessionToken}
				err := o.each([]string{"accessKeyIdVar", "secretAccessKeyVar", "sessionTokenVar"}, func(k string, v *node) error {
					s, err := d.str(v, name+"[]."+k)
					if err != nil {
						return err
					}
					if !validEnvName(s.V) {
						return d.errAt(v.pos, "%s[].%s: %q is not a variable name", name, k, s.V)
					}
					*fields[k] = s.V
					return nil
				})
				if err != nil {
					return err
				}
				if pair.AccessKeyID == "" || pair.SecretAccessKey == "" {
					return d.errAt(o.n.pos, "%s[] needs an accessKeyIdVar and a secretAccessKeyVar", name)
				}
				l.creds.pairs = append(l.creds.pairs, setting[AWSPair]{pair, d.src(o.n.pos)})
				return nil
			})
		case "sigv4":
			so, err := d.object(v, name, true)
			if err != nil {
				return err
			}
			return so.each([]string{"streaming", "presigned", "sigv4a"}, func(k string, v *node) error {
				s, err := d.str(v, name+"."+k)
				if err != nil {
					return err
				}
				if s.V != credDeny && s.V != sigv4Passthough {
					return d.errAt(v.pos, "%s.%s must be \"deny\" or \"passthrough\", not %q", name, k, s.V)
				}
				l.creds.sigv4[k] = s
				return nil
			})
		}
		return nil
	})
}

// credential reads one credentials.files (file) or credentials.envVars
// entry.
func (d *decoder) credential(o *object, name string, file bool) error {
	l := d.l
	what := "name"
	if file {
		what = "path"
	}
	target, mode := o.member(what), o.member("mode")
	if target == nil || mode == nil {
		return d.errAt(o.n.pos, "%s[] needs a %s and a mode", name, what)
	}
	md, err := d.str(mode, name+"[].mode")
	if err != nil {
		return err
	}
	if md.V != credDeny && md.V != credMask {
		return d.errAt(mode.pos, "%s[].mode must be \"deny\" or \"mask\", not %q", name, md.V)
	}
	e := credEntry{mode: md.V, src: d.src(o.n.pos)}
	keys := []string{what, "mode", "extract", "onExtractNoMatch", "decode", "maskClaims", "maskDuplicates", "injectHosts"}
	err = o.each(keys, func(k string, v *node) error {
		key := name + "[]." + k
		switch k {
		case "extract":
			s, err := d.str(v, key)
			if err != nil {
				return err
			}
			if err := checkExtract(s.V); err != nil {
				return d.errAt(v.pos, "%s: %v", key, err)
			}
			e.Extract, e.extractSrc = s.V, s.Src
		case "onExtractNoMatch":
			s, err := d.str(v, key)
			if err != nil {
				return err
			}
			if s.V != noMatchWarn && s.V != credDeny && s.V != noMatchError {
				return d.errAt(v.pos, "%s must be \"warn\", \"deny\" or \"error\", not %q", key, s.V)
			}
			e.OnExtractNoMatch = s.V
		case "decode":
			s, err := d.str(v, key)
			if err != nil {
				return err
			}
			if s.V != "jwt" {
				return d.errAt(v.pos, "%s must be \"jwt\", not %q", key, s.V)
			}
			e.Decode = s.V
		case "maskClaims":
			es, err := d.strings(v, key, nil)
			if err != nil {
				return err
			}
			if len(es) == 0 {
				return d.errAt(v.pos, "%s is empty: no claim would be masked (leave it out to mask the whole token, or name the claims)", key)
			}
			for _, c := range es {
				e.MaskClaims = append(e.MaskClaims, c.V)
			}
		case "maskDuplicates":
			b, err := d.boolean(v, key)
			if err != nil {
				return err
			}
			e.MaskDuplicates = b.V
		case "injectHosts":
			es, err := d.strings(v, key, checkInjectHost)
			if err != nil {
				return err
			}
			if len(es) == 0 {
				return d.errAt(v.pos, "%s is empty: the secret would be masked and sent nowhere (leave it out for every allowed domain, or name the hosts)", key)
			}
			e.hostsSet = true
			for _, h := range es {
				e.InjectHosts = append(e.InjectHosts, h.V)
				e.hostsSrc = append(e.hostsSrc, h.Src)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if e.MaskClaims != nil && e.Decode == "" {
		return d.errAt(o.member("maskClaims").pos, "%s[].maskClaims needs decode: it names claims of the decoded token (set decode to \"jwt\", or leave maskClaims out to mask the whole value)", name)
	}
	if file {
		s, err := d.str(target, name+"[].path")
		if err != nil {
			return err
		}
		if strings.TrimSpace(s.V) == "" {
			return d.errAt(target.pos, "%s[].path is empty", name)
		}
		if md.V == credDeny {
			// hidden as a denyRead pattern is
			arr := &node{kind: kindArray, pos: target.pos, items: []*node{target}}
			es, err := d.paths(arr, name+"[].path")
			if err != nil {
				return err
			}
			l.denyRead = append(l.denyRead, es...)
			e.File = UnescapePattern(es[0].V)
		} else {
			// A masked file is one file, named literally: it is read
			// and a fake bound over it.
			if strings.HasSuffix(s.V, "/") {
				return d.errAt(target.pos, "%s[].path %q is a directory: mode \"mask\" applies to one file (use mode \"deny\" for a directory, or name the file in it)", name, s.V)
			}
			abs, err := d.pathDir(EscapePattern(s.V))
			if err != nil {
				return d.errAt(target.pos, "%s[].path: %v", name, err)
			}
			e.File = UnescapePattern(abs)
		}
	} else {
		s, err := d.str(target, name+"[].name")
		if err != nil {
			return err
		}
		if !validEnvName(s.V) {
			return d.errAt(target.pos, "%s[].name: %q is not a variable name", name, s.V)
		}
		e.Env = s.V
		// Never passed in as it is, masked or not: a masked variable
		// gets its fake value in its place.
		l.envDeny = append(l.envDeny, entry{V: s.V, Src: s.Src})
	}
	l.creds.entries = append(l.creds.entries, e)
	return nil
}
