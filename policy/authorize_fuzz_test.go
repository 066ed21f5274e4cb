package policy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/policy/shell"
)

// fuzzModes are the session modes the fuzz targets cycle through, the
// most permissive first.
var fuzzModes = []string{"bypassPermissions", "danger-full-access", "acceptEdits", "default", "dontAsk", "plan", "prompt", "workspace-write"}

func mustRules(tb testing.TB, specs ...string) []Rule {
	tb.Helper()
	var out []Rule
	for _, s := range specs {
		r, err := ParseRule(s)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// fuzzPolicy denies curl and allows, runs outside the sandbox and
// auto-allows all it can: nothing but the deny rule stands between a
// command and an allow.
func fuzzPolicy(tb testing.TB) *Policy {
	return &Policy{
		Workspace: "/home/u/proj", Home: "/home/u", Mode: Allow, ModeName: "bypassPermissions",
		Permissions: Permissions{
			Deny: mustRules(tb, "Bash(curl:*)"),
			Allow: mustRules(tb, "Bash(ls:*)", "Bash(echo:*)", "Bash(cat:*)", "Bash(bash:*)", "Bash(sh:*)", "Bash(sudo:*)",
				"Bash(env:*)", "Bash(xargs:*)", "Bash(find:*)", "Bash(timeout:*)", "Bash(nice:*)", "Bash(eval:*)",
				"Bash(command:*)", "Bash(exec:*)", "Bash(true)", "Bash(su:*)", "Bash(watch:*)", "Bash(trap:*)",
				"Bash(nohup:*)", "Bash(cu)", "Bash(rl:*)", "Bash(cd:*)", "Bash(test:*)", "Bash([[:*)"),
		},
		Sandbox: Sandbox{AutoAllowBashIfSandboxed: true, AllowUnsandboxedCommands: true, ExcludedCommands: []string{"curl", "bash", "ls"}},
	}
}

// curlSpellings are ways of writing curl as a simple command.
var curlSpellings = []string{
	"curl x", `"curl" x`, "'curl' x", `c\url x`, "/usr/bin/curl x", `c"u"rl x`, `$'\x63url' x`, "cu''rl x",
	`\curl x`, "curl", "curl${IFS}x", "curl -o /dev/null x",
}

// nest places a command inside a construct that still runs it.
func nest(kind byte, c string) (string, bool) {
	q := func(s string) (string, bool) {
		r, err := syntax.Quote(s, syntax.LangBash)
		return r, err == nil
	}
	switch kind % 24 {
	case 0:
		return c, true
	case 1:
		return "ls; " + c, true
	case 2:
		return c + " && ls", true
	case 3:
		return "true || " + c, true
	case 4:
		return "ls | " + c, true
	case 5:
		return "( " + c + " )", true
	case 6:
		return "{ " + c + "; }", true
	case 7:
		return "echo $( " + c + " )", true
	case 8:
		s, ok := q(c)
		return "bash -c " + s, ok
	case 9:
		s, ok := q(c)
		return "eval " + s, ok
	case 10:
		return "if true; then " + c + "; fi", true
	case 11:
		return "for i in 1 2; do " + c + "; done", true
	case 12:
		return "f() { " + c + "; }; f", true
	case 13:
		return "cat <( " + c + " )", true
	case 14:
		return "x=$( " + c + " )", true
	case 15:
		return "case a in a) " + c + ";; esac", true
	case 16:
		s, ok := q(c)
		return "sudo bash -c " + s, ok
	case 17:
		s, ok := q(c)
		return "su -c " + s, ok
	case 18:
		return "echo x > /etc/x; " + c, true
	case 19:
		return "cd /tmp && " + c, true
	case 20:
		s, ok := q(c)
		return "trap " + s + " EXIT", ok
	case 21:
		return c + " &", true
	case 22:
		return "! " + c, true
	case 23:
		return "time " + c, true
	}
	return c, true
}

// FuzzAuthorizeDenied: a command with curl somewhere in it, however
// nested, under a policy that denies curl and allows everything else it
// can, in every mode, sandboxed or asking not to be, is never allowed; when
// it parses it is denied.
func FuzzAuthorizeDenied(f *testing.F) {
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{0, 1, 3, 8, 9, 7})
	f.Add([]byte{1, 2, 1, 16, 12, 4})
	f.Add([]byte{1, 3, 5, 17, 20, 18})
	f.Add([]byte{0, 6, 11, 9, 13, 19, 21})
	p := fuzzPolicy(f)
	f.Fuzz(func(t *testing.T, plan []byte) {
		if len(plan) < 2 {
			return
		}
		src := curlSpellings[int(plan[1])%len(curlSpellings)]
		for _, k := range plan[2:min(len(plan), 12)] {
			var ok bool
			if src, ok = nest(k, src); !ok {
				return
			}
		}
		req := Request{Tool: "Bash", Command: src, Cwd: p.Workspace, Mode: fuzzModes[int(plan[0]>>1)%len(fuzzModes)], DisableSandbox: plan[0]&1 == 1}
		d, err := p.Authorize(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict == VerdictAllow {
			t.Fatalf("%q is allowed in mode %s: %s\n%v", src, req.Mode, d.Reason, d.Trace)
		}
		// What parses and is known now is denied; the rest at least asked.
		if s, _ := shell.Parse(src); d.Verdict != VerdictDeny && unsure(s, "deny") == "" {
			t.Fatalf("%q is %s in mode %s, want deny: %s\n%v", src, d.Verdict, req.Mode, d.Reason, d.Trace)
		}
	})
}

// FuzzAuthorize: no request panics, every decision is allow, ask or deny
// (or defer, for a tool cordon does not judge), and its trace ends with
// it.
func FuzzAuthorize(f *testing.F) {
	for _, s := range []string{"ls -la", "rm -rf ~", "curl x | sh", "README.md", "../../etc/passwd", "~/.ssh/id_rsa",
		"https://example.com/x", "http://[::1]:8080/", "file:///etc/passwd", "\x00", "$(", "docker ps"} {
		for tool := range byte(8) {
			f.Add(tool, s, byte(0))
		}
	}
	p := fuzzPolicy(f)
	p.Permissions.Deny = append(p.Permissions.Deny, mustRules(f, "Read(~/.ssh/**)", "WebFetch(domain:*.evil.example)", "mcp__x")...)
	p.Permissions.Ask = mustRules(f, "Edit(/home/u/proj/secret/**)", "Bash(git push:*)", "WebFetch(domain:example.com)")
	p.Filesystem.DenyRead = []string{"/home/u/.ssh", "/home/u/.aws"}
	p.Network.AllowedDomains = []string{"github.com", "*.npmjs.org:443"}
	tools := []string{"Bash", "Read", "Edit", "Write", "WebFetch", "Glob", "mcp__x__y", "Task"}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, tool byte, input string, mode byte) {
		req := Request{Tool: tools[int(tool)%len(tools)], Cwd: p.Workspace, Mode: fuzzModes[int(mode)%len(fuzzModes)], DisableSandbox: mode&0x80 != 0}
		switch kindOf(req.Tool) {
		case kindBash:
			req.Command = input
		case kindRead, kindWrite:
			// Keep file requests inside a directory of the test's own.
			req.Path = filepath.Join(root, input)
			if !paths.Under(req.Path, root) {
				return
			}
		case kindWeb:
			req.URL = input
		}
		d, err := p.Authorize(context.Background(), req)
		if err != nil {
			if d.Verdict != VerdictDeny {
				t.Fatalf("an error (%v) with a verdict %s", err, d.Verdict)
			}
			return
		}
		switch {
		case d.Verdict == VerdictAllow, d.Verdict == VerdictAsk, d.Verdict == VerdictDeny:
		case d.Verdict == VerdictDefer && kindOf(req.Tool) == kindOther:
			// a tool cordon does not judge, that no rule decides
		default:
			t.Fatalf("verdict %q", d.Verdict)
		}
		if n := len(d.Trace); n == 0 || !strings.HasPrefix(d.Trace[n-1].Result, string(d.Verdict)+": ") {
			t.Fatalf("%s %q: the trace does not end with the verdict %s: %v", req.Tool, input, d.Verdict, d.Trace)
		}
		if d.Required < ReadOnly || d.Required > DangerFullAccess {
			t.Fatalf("required %v", d.Required)
		}
	})
}
