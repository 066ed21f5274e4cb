package policy

import (
	"fmt"
	"strings"
)

// Summary is the text an agent puts in its system prompt so that it knows
// its sandbox before it runs into it: what is readable, writable and
// reachable, what else is restricted, and how to ask for more. It is
// written from the effective policy.
func (p *Policy) Summary() string {
	var b strings.Builder
	home := func(s string) string {
		if p.Home != "" && p.Home != "/" {
			if s == p.Home {
				return "~"
			}
			if rest, ok := strings.CutPrefix(s, p.Home+"/"); ok {
				return "~/" + rest
			}
		}
		return s
	}
	list := func(xs []string) string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = home(UnescapePattern(x))
		}
		return strings.Join(out, ", ")
	}
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	ses, _, _ := p.session("")
	if p.Sandbox.Disabled {
		line("Shell commands run WITHOUT a sandbox (sandbox.enabled is false): the permission rules below are all that limits them.")
	} else {
		line("Shell commands run in a sandbox (cordon). Its limits are enforced by the operating system; a command that crosses them fails (\"Permission denied\", \"Read-only file system\", no network).")
	}
	line("")
	line("Permission mode: %s. %s", ses.name, modeText(ses))
	line("")
	line("Readable: the whole file system, except:")
	if len(p.Filesystem.DenyRead) == 0 {
		line("  (nothing is hidden)")
	}
	for _, d := range p.Filesystem.DenyRead {
		line("  - %s", home(UnescapePattern(d)))
	}
	if len(p.Filesystem.AllowRead) > 0 {
		line("  (re-opened inside those: %s)", list(p.Filesystem.AllowRead))
	}
	line("")
	roots := p.WritableRoots()
	if len(roots) == 0 {
		line("Writable: nothing but /tmp (read-only mode): the workspace %s is read-only.", home(p.Workspace))
	} else {
		line("Writable: the workspace %s%s, and /tmp (private to each command, emptied when it ends).", home(p.Workspace), func() string {
			if len(roots) > 1 {
				return ", " + list(roots[1:])
			}
			return ""
		}())
		line("Everything else is read-only. Always read-only, even in the workspace: %s.", strings.Join(protectedShort(p), ", "))
		if len(p.Filesystem.DenyWrite) > 0 {
			line("Also read-only: %s.", list(p.Filesystem.DenyWrite))
		}
	}
	line("")
	switch {
	case len(p.Network.AllowedDomains) == 0 && p.Network.AskCommand == "":
		line("Network: none. No command can reach the internet or other machines (package installs and git fetches over the network fail).")
	default:
		line("Network: only through cordon's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set), to: %s.", strings.Join(p.Network.AllowedDomains, ", "))
		if len(p.Network.DeniedDomains) > 0 {
			line("Never: %s.", strings.Join(p.Network.DeniedDomains, ", "))
		}
		if p.Network.AskCommand != "" {
			line("Other destinations are asked of the user.")
		}
	}
	line("")
	line("Environment: variables that look like secrets (%s) are not passed in. CORDON_SANDBOX=1 is set.", strings.Join(firstN(p.Env.Deny, 6), ", "))
	var lim []string
	switch mem, pct := p.Limits.Memory, p.Limits.MemoryPercent; {
	case mem > 0 && pct > 0:
		lim = append(lim, fmt.Sprintf("memory %d MiB or %g%% of the machine, the smaller", mem>>20, pct))
	case mem > 0:
		lim = append(lim, fmt.Sprintf("memory %d MiB", mem>>20))
	case pct > 0:
		lim = append(lim, fmt.Sprintf("memory %g%% of the machine", pct))
	}
	if p.Limits.Pids > 0 {
		lim = append(lim, fmt.Sprintf("%d processes", p.Limits.Pids))
	}
	if p.Limits.Timeout > 0 {
		lim = append(lim, fmt.Sprintf("%v per command", p.Limits.Timeout))
	}
	if len(lim) > 0 {
		line("Limits: %s.", strings.Join(lim, ", "))
	}
	line("Each command runs in a fresh sandbox: what it starts in the background ends with it.")
	if len(p.Sandbox.ExcludedCommands) > 0 {
		line("These commands run outside the sandbox (when nothing else is in the same command line): %s.", strings.Join(p.Sandbox.ExcludedCommands, ", "))
	}
	var rules []string
	for _, r := range p.Permissions.Deny {
		rules = append(rules, r.String())
	}
	if len(rules) > 0 {
		line("")
		line("Denied by rule, whatever the mode: %s.", strings.Join(rules, ", "))
	}
	rules = rules[:0]
	for _, r := range p.Permissions.Ask {
		rules = append(rules, r.String())
	}
	if len(rules) > 0 {
		line("Always asked of the user: %s.", strings.Join(rules, ", "))
	}
	line("")
	line("To do more: do not work around the sandbox. When a command fails because of it, say which path, domain or permission it needs and let the user widen the settings (cordon config shows them)%s.", func() string {
		if p.Sandbox.AllowUnsandboxedCommands && !p.Sandbox.Disabled {
			return ", or run that one command outside the sandbox with dangerouslyDisableSandbox: true, which the user is asked to approve"
		}
		return ""
	}())
	return b.String()
}

func modeText(s session) string {
	switch {
	case s.tier == ReadOnly:
		return "Commands may only read; anything that writes is refused."
	case s.tier == Prompt:
		return "Anything beyond reading is asked of the user."
	case s.tier == WorkspaceWrite && s.dontAsk():
		return "Commands may change the workspace; anything more is refused without asking."
	case s.tier == WorkspaceWrite && s.asksEdits():
		return "Commands may change the workspace; file edits and anything beyond the workspace are asked of the user."
	case s.tier == WorkspaceWrite:
		return "Commands may change the workspace; anything beyond it is asked of the user."
	}
	return "Commands are not asked about; the sandbox still applies."
}

// protectedShort names the always-protected paths of the workspace,
// briefly.
func protectedShort(p *Policy) []string {
	in, _ := p.Protected()
	var out []string
	for _, rel := range in {
		if strings.Contains(rel, "*") {
			continue
		}
		out = append(out, rel)
	}
	return out
}

func firstN(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), "...")
}
