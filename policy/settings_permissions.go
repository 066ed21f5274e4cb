package policy

import (
	"errors"
	"fmt"
	"strings"
)

// permissions reads Claude Code's permissions block: the allow, deny and
// ask rules (and what each means for the sandbox's paths), the default
// mode, the additional directories and the mode locks.
func (d *decoder) permissions(n *node) error {
	keys := []string{"allow", "deny", "ask", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode",
		"disableAutoMode", "blockReadsOutsideWorkingDirectories"}
	o, err := d.object(n, "permissions", true)
	if err != nil {
		return err
	}
	l := d.l
	return o.each(keys, func(key string, v *node) error {
		var err error
		name := "permissions." + key
		switch key {
		case "allow":
			l.permAllow, err = d.rules(v, name, true)
			if err == nil {
				err = d.ruleEffects(l.permAllow, true)
			}
		case "deny":
			l.permDeny, err = d.rules(v, name, false)
			if err == nil {
				err = d.ruleEffects(l.permDeny, false)
			}
		case "ask":
			l.permAsk, err = d.rules(v, name, false)
			if err == nil {
				err = d.rulePaths(l.permAsk)
			}
		case "defaultMode":
			l.defaultMode, err = d.str(v, name)
			if err == nil {
				if _, perr := ParseMode(l.defaultMode.V); perr != nil {
					return d.errAt(v.pos, "%s: %v", name, perr)
				}
			}
		case "additionalDirectories":
			// Directories, not patterns: "~/p[1]" is that directory.
			dir := d.pathDir
			if d.sandboxPathDir != nil {
				dir = d.sandboxPathDir
			}
			l.additionalDirs, err = d.strings(v, name, func(s string) (string, error) { return dir(EscapePattern(s)) })
		case "disableBypassPermissionsMode":
			l.disableBypass, err = d.str(v, name)
			if err == nil && l.disableBypass.V != "disable" {
				return d.errAt(v.pos, "%s must be \"disable\"", name)
			}
		case "disableAutoMode":
			l.disableAuto, err = d.str(v, name)
			if err == nil && l.disableAuto.V != "disable" {
				return d.errAt(v.pos, "%s must be \"disable\"", name)
			}
		case "blockReadsOutsideWorkingDirectories":
			b, berr := d.boolean(v, name)
			if berr == nil && b.V {
				// a restriction cordon cannot enforce as Claude Code does:
				// dropping it would run with less than the file asks
				return d.errAt(v.pos, "%s is not supported by cordon: list what to hide in sandbox.filesystem.denyRead (and re-open with allowRead)", name)
			}
			err = berr
		}
		return err
	})
}

// rules reads a list of permission rules. In a deny or ask list a rule
// cordon cannot read is an error: dropping it would drop a restriction
// the user wrote. In an allow list it is ignored, and so is a rule Claude
// Code reads but never applies (Rule.Inert), saying why: Claude Code
// skips such rules when it loads the file, and allowing less than it
// would is safe, where refusing the file would stop every run.
func (d *decoder) rules(n *node, key string, allow bool) ([]entry, error) {
	if n.kind != kindArray {
		return nil, d.errAt(n.pos, "%s must be an array of strings, not %s", key, n.kind)
	}
	var out []entry
	for _, it := range n.items {
		if it.kind != kindString {
			if allow {
				d.l.ignored = append(d.l.ignored, entry{V: key + ": not a string; Claude Code skips it", Src: d.src(it.pos)})
				continue
			}
			return nil, d.errAt(it.pos, "%s must contain strings, not %s", key, it.kind)
		}
		r, err := ParseRule(it.text)
		reason := r.Inert
		if strings.TrimSpace(it.text) == "" {
			// an empty rule restricts nothing: Claude Code skips it
			d.l.ignored = append(d.l.ignored, entry{V: key + ": an empty rule; Claude Code skips it", Src: d.src(it.pos), Rule: it.text})
			continue
		}
		if err != nil {
			if !allow {
				return nil, d.errAt(it.pos, "%s: %v", key, err)
			}
			reason = err.Error()
		}
		if allow && reason != "" {
			d.l.ignored = append(d.l.ignored, entry{V: key + ": " + reason, Src: d.src(it.pos), Rule: it.text})
			continue
		}
		out = append(out, entry{V: r.String(), Src: d.src(it.pos)})
	}
	return out, nil
}

// rulePaths records the path patterns of file tools' ask rules.
func (d *decoder) rulePaths(rules []entry) error {
	for _, e := range rules {
		r, _ := ParseRule(e.V)
		if isPath, _ := r.pathTool(); isPath {
			if _, err := d.rulePath(r, e, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// rulePath resolves a file tool's rule against this file, records the
// pattern its decisions match (Rule.Path) and returns the one the sandbox
// takes. They differ for a relative path: Claude Code's decisions read it
// as gitignore does, relative to the current directory (a name without
// a slash, `.env`, `*.env`, at any depth; in a deny or ask rule a
// directory and its contents, `secrets/**`, too), while its sandbox takes
// it as a path below the current directory.
func (d *decoder) rulePath(r Rule, e entry, allow bool) (string, error) {
	p, err := d.pathDir(starsInName(r.Specifier))
	if err == nil {
		err = ValidatePattern(p)
	}
	if err != nil {
		return "", &SettingsError{File: d.l.file, Pos: Pos{e.Src.Line, e.Src.Col}, Msg: fmt.Sprintf("rule %s: %v", e.V, err)}
	}
	decide := p
	if rel, ok := anyDepth(starsInName(r.Specifier), allow); ok && d.ruleDir != "" {
		decide = cleanPattern(EscapePattern(d.ruleDir) + "/" + rel)
		if ValidatePattern(decide) != nil {
			decide = p
		}
	}
	if d.l.rulePaths == nil {
		d.l.rulePaths = map[string]string{}
	}
	d.l.rulePaths[e.V] = decide
	return p, nil
}

// starsInName reads a rule path's "**" inside a name (`a**`) as
// gitignore does, as "*": only a whole element "**" crosses directories.
func starsInName(p string) string {
	if !strings.Contains(p, "**") {
		return p
	}
	elems := strings.Split(p, "/")
	for i, el := range elems {
		for el != "**" && strings.Contains(el, "**") {
			el = strings.ReplaceAll(el, "**", "*")
		}
		elems[i] = el
	}
	return strings.Join(elems, "/")
}

// anyDepth returns a relative rule path as gitignore matches it below
// the current directory, "**/" before a pattern that matches at any
// depth, and whether the path is relative at all.
func anyDepth(spec string, allow bool) (string, bool) {
	if spec == "" || spec[0] == '/' || spec[0] == '~' {
		return "", false
	}
	rel := spec
	for strings.HasPrefix(rel, "./") {
		rel = rel[2:]
	}
	core := strings.TrimSuffix(rel, "/")
	first, rest, nested := strings.Cut(core, "/")
	switch {
	case core == "" || core == "." || core == ".." || first == ".." || first == "**":
		return rel, true
	case !nested:
		// a name without a slash matches at any depth
		return "**/" + rel, true
	case !allow && rest == "**":
		// Claude Code's deny and ask rules take `dir/**` at any depth
		return "**/" + rel, true
	}
	return rel, true
}

// ruleEffects feeds the sandbox from permission rules, as Claude Code does:
// Read rules name readable or unreadable paths, Edit and Write rules
// writable or read-only ones, WebFetch(domain:...) rules the network.
func (d *decoder) ruleEffects(rules []entry, allow bool) error {
	l := d.l
	for _, e := range rules {
		r, _ := ParseRule(e.V)
		if isPath, writes := r.pathTool(); isPath {
			p, err := d.rulePath(r, e, allow)
			if err != nil && allow {
				// a path cordon cannot read allows nothing
				msg := err.Error()
				if se := (*SettingsError)(nil); errors.As(err, &se) {
					msg = se.Msg
				}
				l.ignored = append(l.ignored, entry{V: "permissions.allow: " + msg, Src: e.Src, Rule: e.V})
				continue
			}
			if err != nil {
				return err
			}
			pe := entry{p, e.Src, e.V}
			switch {
			case writes && allow:
				l.allowWrite = append(l.allowWrite, pe)
			case writes:
				l.denyWrite = append(l.denyWrite, pe)
			case allow:
				// Claude Code's sandbox takes no Read allow rule: it
				// allows the Read tool, and re-opens nothing a denyRead
				// hides from commands.
			default:
				l.denyRead = append(l.denyRead, pe)
			}
			continue
		}
		if r.Tool == "WebFetch" && r.HasSpecifier && r.Param == "" {
			de := entry{strings.TrimPrefix(r.Specifier, "domain:"), e.Src, e.V}
			switch {
			case de.V == "*" && allow:
				// Claude Code's sandbox then reaches every host; cordon's
				// proxy takes names only: it allows less.
				l.ignored = append(l.ignored, entry{V: "permissions.allow: cordon's sandbox cannot allow every host; name the domains in sandbox.network.allowedDomains (WebFetch itself is allowed)", Src: e.Src, Rule: e.V})
				continue
			case de.V == "*":
				// every host, for sandboxed commands too
				l.denyAllDomains = append(l.denyAllDomains, de)
				continue
			case strings.HasPrefix(de.V, "*.") && !strings.Contains(de.V[2:], ".") && allow:
				l.ignored = append(l.ignored, entry{V: "permissions.allow: " + de.V + " is too broad for cordon's proxy; the rule allows fetches only", Src: e.Src, Rule: e.V})
				continue
			case strings.HasPrefix(de.V, "*.") && !strings.Contains(de.V[2:], "."):
				// *.com: the proxy takes no such pattern; no host, rather
				// than hosts the rule denies
				l.denyAllDomains = append(l.denyAllDomains, de)
				continue
			case strings.Contains(strings.TrimPrefix(de.V, "*."), "*"):
				// a * within a label matches fetches and, as in Claude
				// Code, does nothing to sandboxed commands
				continue
			}
			if allow {
				l.allowedDomains = append(l.allowedDomains, de)
			} else {
				l.deniedDomains = append(l.deniedDomains, de)
			}
		}
	}
	return nil
}
