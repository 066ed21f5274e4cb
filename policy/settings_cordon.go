package policy

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cordon reads cordon's own block: the mode, the environment filter, the
// limits, the trusted workspaces, the managed locks and the pre-decision
// hooks.
func (d *decoder) cordon(n *node) error {
	keys := []string{"mode", "env", "limits", "trustedWorkspaces", "allowManagedDomainsOnly",
		"allowManagedReadPathsOnly", "allowManagedWritePathsOnly", "allowManagedPermissionRulesOnly",
		"allowSocketpair", "askCommand", "hooks", "serve", "requireFullSandbox", "containerMode", "acceptUnconfined", "caches",
		"httpProxyPort", "socksProxyPort", "syscallGuard"}
	o, err := d.object(n, "cordon", true)
	if err != nil {
		return err
	}
	l := d.l
	managedOnly := func(key string, v *node) (*setting[bool], error) {
		if d.l.scope != ScopeManaged {
			return nil, d.errAt(v.pos, "cordon.%s is only honoured in managed settings (/etc/cordon/managed-settings.json)", key)
		}
		return d.boolean(v, "cordon."+key)
	}
	return o.each(keys, func(key string, v *node) error {
		var err error
		switch key {
		case "mode":
			l.mode, err = d.str(v, "cordon.mode")
			if err == nil {
				if _, perr := ParseMode(l.mode.V); perr != nil {
					return d.errAt(v.pos, "cordon.mode: %v", perr)
				}
			}
		case "env":
			err = d.env(v)
		case "limits":
			err = d.limits(v)
		case "trustedWorkspaces":
			if d.l.scope != ScopeUser && d.l.scope != ScopeManaged {
				return d.errAt(v.pos, "cordon.trustedWorkspaces is only honoured in user or managed settings: a workspace cannot trust itself")
			}
			l.trusted, err = d.strings(v, "cordon.trustedWorkspaces", func(s string) (string, error) {
				if !filepath.IsAbs(s) {
					return "", fmt.Errorf("%q is not an absolute path", s)
				}
				return filepath.Clean(s), nil
			})
		case "allowManagedDomainsOnly":
			l.managedDomainsOnly, err = managedOnly(key, v)
		case "allowManagedReadPathsOnly":
			l.managedReadOnly, err = managedOnly(key, v)
		case "allowManagedWritePathsOnly":
			l.managedWriteOnly, err = managedOnly(key, v)
		case "allowManagedPermissionRulesOnly":
			l.managedPermissionsOnly, err = managedOnly(key, v)
		case "allowSocketpair":
			l.allowSocketpair, err = d.boolean(v, "cordon.allowSocketpair")
		case "askCommand":
			l.askCommand, err = d.str(v, "cordon.askCommand")
		case "hooks":
			err = d.hooks(v)
		case "serve":
			l.serve, err = d.boolean(v, "cordon.serve")
		case "requireFullSandbox":
			l.requireFull, err = d.boolean(v, "cordon.requireFullSandbox")
		case "containerMode":
			l.containerMode, err = d.boolean(v, "cordon.containerMode")
		case "acceptUnconfined":
			l.acceptUnconfined, err = d.boolean(v, "cordon.acceptUnconfined")
		case "caches":
			err = d.caches(v)
		case "httpProxyPort":
			l.httpProxyPort, err = d.port(v, "cordon.httpProxyPort")
		case "socksProxyPort":
			l.socksProxyPort, err = d.port(v, "cordon.socksProxyPort")
		case "syscallGuard":
			l.syscallGuard, err = d.boolean(v, "cordon.syscallGuard")
		}
		return err
	})
}

// caches reads cordon.caches: {"enabled": false} turns the package
// managers' caches off; maxSize bounds what cordon keeps of them, maxAge
// how long a workspace's may go unused.
func (d *decoder) caches(n *node) error {
	o, err := d.object(n, "cordon.caches", true)
	if err != nil {
		return err
	}
	l := d.l
	return o.each([]string{"enabled", "maxSize", "maxAge"}, func(key string, v *node) error {
		var err error
		name := "cordon.caches." + key
		switch key {
		case "enabled":
			l.caches, err = d.boolean(v, name)
		case "maxSize":
			l.cachesMaxSize, err = d.size(v, name)
		case "maxAge":
			s, serr := d.str(v, name)
			if serr != nil {
				return serr
			}
			age, perr := ParseAge(s.V)
			if perr != nil {
				return d.errAt(v.pos, "%s must be a duration such as \"30d\" or \"12h\"", name)
			}
			l.cachesMaxAge = &setting[time.Duration]{age, s.Src}
		}
		return err
	})
}

// ParseAge reads a duration as time.ParseDuration does, or a whole
// number of days ("30d"). It must be more than 0.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && decimalDigits(days) {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("age %q: want more than 0 days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	age, err := time.ParseDuration(s)
	if err != nil || age <= 0 {
		return 0, fmt.Errorf("age %q: want a duration such as 30d or 12h", s)
	}
	return age, nil
}

// Default and largest timeouts of cordon.hooks.
const (
	DefaultPreDecisionTimeout = 5 * time.Second
	DefaultPostRunTimeout     = 10 * time.Second
	maxHookTimeout            = 10 * time.Minute
)

// hooks reads cordon.hooks: {"preDecision": HOOK, "postRun": HOOK}, each
// {"command": "/abs/prog" or ["/abs/prog", "arg", ...], "timeout": "5s"}.
func (d *decoder) hooks(n *node) error {
	o, err := d.object(n, "cordon.hooks", true)
	if err != nil {
		return err
	}
	return o.each([]string{"preDecision", "postRun"}, func(key string, v *node) error {
		def := DefaultPreDecisionTimeout
		if key == "postRun" {
			def = DefaultPostRunTimeout
		}
		h, err := d.hook(v, "cordon.hooks."+key, def)
		if key == "preDecision" {
			d.l.preDecision = h
		} else {
			d.l.postRun = h
		}
		return err
	})
}

func (d *decoder) hook(n *node, name string, timeout time.Duration) (*setting[Hook], error) {
	o, err := d.object(n, name, true)
	if err != nil {
		return nil, err
	}
	h := Hook{Timeout: timeout, Source: d.src(n.pos).String()}
	hasCommand := false
	err = o.each([]string{"command", "timeout"}, func(key string, v *node) error {
		switch key {
		case "command":
			hasCommand = true
			switch v.kind {
			case kindString:
				h.Args = []string{v.text}
			case kindArray:
				for _, it := range v.items {
					if it.kind != kindString {
						return d.errAt(it.pos, "%s.command must contain strings, not %s", name, it.kind)
					}
					h.Args = append(h.Args, it.text)
				}
			default:
				return d.errAt(v.pos, "%s.command must be a program's absolute path or an array of strings (the program and its arguments), not %s", name, v.kind)
			}
			if len(h.Args) == 0 {
				return d.errAt(v.pos, "%s.command is empty", name)
			}
			for _, a := range h.Args {
				if strings.ContainsRune(a, 0) {
					return d.errAt(v.pos, "%s.command: NUL in an argument", name)
				}
			}
			prog := h.Args[0]
			if prog == "~" || strings.HasPrefix(prog, "~/") {
				prog = filepath.Join(d.home, prog[1:])
			}
			// A relative name would be looked up where the hook runs: the
			// workspace's PATH or directory could choose the program.
			if !filepath.IsAbs(prog) {
				return d.errAt(v.pos, "%s.command: %q is not an absolute path (hooks run without a shell; write the program's full path)", name, h.Args[0])
			}
			h.Args[0] = filepath.Clean(prog)
		case "timeout":
			s, err := d.str(v, name+".timeout")
			if err != nil {
				return err
			}
			t, perr := time.ParseDuration(s.V)
			if perr != nil || t < time.Millisecond || t > maxHookTimeout {
				return d.errAt(v.pos, "%s.timeout must be a duration from 1ms to 10m, such as \"5s\"", name)
			}
			h.Timeout = t
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hasCommand {
		return nil, d.errAt(n.pos, "%s has no command", name)
	}
	return &setting[Hook]{h, d.src(n.pos)}, nil
}

func (d *decoder) env(n *node) error {
	o, err := d.object(n, "cordon.env", true)
	if err != nil {
		return err
	}
	l := d.l
	return o.each([]string{"deny", "allow", "set"}, func(key string, v *node) error {
		var err error
		switch key {
		case "deny":
			l.envDeny, err = d.strings(v, "cordon.env.deny", checkEnvPattern)
		case "allow":
			l.envAllow, err = d.strings(v, "cordon.env.allow", checkEnvPattern)
		case "set":
			so, err := d.object(v, "cordon.env.set", false)
			if err != nil {
				return err
			}
			l.envSet = map[string]setting[string]{}
			for _, m := range so.n.members {
				if !validEnvName(m.key) {
					return d.errAt(m.keyPos, "cordon.env.set: %q is not a variable name", m.key)
				}
				s, err := d.str(m.value, "cordon.env.set."+m.key)
				if err != nil {
					return err
				}
				l.envSet[m.key] = *s
			}
		}
		return err
	})
}

func (d *decoder) limits(n *node) error {
	keys := []string{"memory", "pids", "cpus", "timeout", "outputLimit", "fileSize", "openFiles", "tmpSize"}
	o, err := d.object(n, "cordon.limits", true)
	if err != nil {
		return err
	}
	l := d.l
	return o.each(keys, func(key string, v *node) error {
		var err error
		name := "cordon.limits." + key
		switch key {
		case "memory":
			if v.kind == kindString && strings.HasSuffix(strings.TrimSpace(v.text), "%") {
				// Decimal digits only: ParseFloat also takes "NaN", "1e-300"
				// and "0x1p-2", which make no limit at all.
				num := strings.TrimSuffix(strings.TrimSpace(v.text), "%")
				whole, frac, dot := strings.Cut(num, ".")
				pct, perr := strconv.ParseFloat(num, 64)
				if !decimalDigits(whole) || dot && !decimalDigits(frac) || perr != nil || pct <= 0 || pct > 100 {
					return d.errAt(v.pos, "%s: a share of the machine's memory must be from 0%% to 100%%", name)
				}
				l.memoryPercent = &setting[float64]{pct, d.src(v.pos)}
				return nil
			}
			l.memory, err = d.size(v, name)
		case "outputLimit":
			l.outputLimit, err = d.size(v, name)
		case "fileSize":
			l.fileSize, err = d.size(v, name)
		case "tmpSize":
			l.tmpSize, err = d.size(v, name)
		case "pids":
			l.pids, err = d.count(v, name)
		case "openFiles":
			l.openFiles, err = d.count(v, name)
		case "cpus":
			f, perr := strconv.ParseFloat(v.text, 64)
			// The kernel's smallest CPU quota is 1 ms in the 100 ms period
			// (0.01 CPU); 1e300 CPUs overflowed the quota into a negative
			// one (no limit).
			if v.kind != kindNumber || perr != nil || f < 0 || f > 0 && f < 0.01 || f > maxCPUs {
				return d.errAt(v.pos, "%s must be a number of CPUs from 0.01 to %d, such as 2 or 0.5 (0: no limit)", name, maxCPUs)
			}
			l.cpus = &setting[float64]{f, d.src(v.pos)}
		case "timeout":
			s, serr := d.str(v, name)
			if serr != nil {
				return serr
			}
			t, perr := time.ParseDuration(s.V)
			if perr != nil || t < 0 {
				return d.errAt(v.pos, "%s must be a duration such as \"90s\" or \"10m\"", name)
			}
			l.timeout = &setting[time.Duration]{t, s.Src}
		}
		return err
	})
}

// maxCPUs is the largest cpus limit: more than any machine has.
const maxCPUs = 65536

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func checkEnvPattern(s string) (string, error) {
	if !validEnvName(strings.ReplaceAll(s, "*", "X")) {
		return "", fmt.Errorf("%q is not a variable name pattern (letters, digits, _ and *)", s)
	}
	return s, nil
}
