package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzParse: no input panics, and every simple command has a name, is
// flagged dynamic, or is a bare assignment or redirection.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ls -la", "curl x | sh", `bash -c "curl $URL"`, "find . -exec rm {} \\;", "echo x | xargs -I{} sh -c 'echo {}'",
		"cd /etc && rm -rf x", "for f in *; do rm $f; done", "f() { cd /; }; f; rm x", "{a,b}{c,d}",
		"x{1..100000}", "cat <<EOF\n$(ls)\nEOF\n", "sudo -u bob env X=1 nice -n 5 timeout 3 curl a",
		"eval \"$(echo ls)\"", "trap 'rm x' EXIT", "echo $'\\x63url'", "a=(1 2); echo ${a[@]}",
	} {
		f.Add(s)
	}
	ctx := tableContext
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if s == nil {
			t.Fatal("nil script")
		}
		if (err == nil) != (s.Err == nil) {
			t.Fatalf("error %v but Script.Err %v", err, s.Err)
		}
		for _, c := range s.Commands {
			if c.Name.Value == "" && !c.Name.Dynamic && c.Dynamic == "" &&
				(len(c.Args) > 0 || len(c.Assigns)+len(c.Redirects) == 0) {
				t.Fatalf("%q: command %#v has no name and is not dynamic", src, c)
			}
			_ = c.String()
		}
		cl := Classify(s, ctx)
		if cl.Level > ReadOnly && len(cl.Findings) == 0 {
			t.Fatalf("%q: level %v without a finding", src, cl.Level)
		}
		if err != nil && cl.Level != DangerFullAccess {
			t.Fatalf("%q: does not parse but classifies %v", src, cl.Level)
		}
		ps := fuzzAllow(t)
		if ok, _ := ps.Allow(s); ok && err != nil {
			t.Fatalf("%q: allowed although it does not parse", src)
		}
		ps.Match(s)
	})
}

// FuzzParsePattern: no specifier panics, and matching with it does not.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"npm run test:*", "Bash(ls)", "Bash", "git * main", "* --version", `ls\*`, `"a b" *`, "ls*", "*"} {
		f.Add(s, "npm run test --watch")
	}
	f.Fuzz(func(t *testing.T, spec, cmd string) {
		p, err := ParsePattern(spec)
		if err != nil {
			return
		}
		s, _ := Parse(cmd)
		for _, c := range s.Commands {
			p.Match(c)
			p.Allows(c)
		}
	})
}

// fuzzAllow is an allow list that names many commands but never curl.
func fuzzAllow(t *testing.T) Patterns {
	var ps Patterns
	for _, spec := range []string{
		"ls:*", "echo:*", "cat:*", "grep:*", "bash:*", "sh:*", "sudo:*", "env:*", "xargs:*", "find:*",
		"timeout:*", "nice:*", "eval:*", "command:*", "exec:*", "git:*", "true", "false", "x:*", "f", "su:*",
		"watch:*", "trap:*", "nohup:*", "time:*", "busybox:*", "bash -c:*", "sh -c:*", "cu", "rl:*", "c:*",
		"/usr/bin/env:*", "[[:*", "test:*", "cd:*", "read:*",
	} {
		p, err := ParsePattern(spec)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// curls are spellings of curl as a simple command.
var curls = []string{
	"curl x", `"curl" x`, "'curl' x", `c\url x`, "/usr/bin/curl x", `c"u"rl x`, `$'\x63url' x`, "cu''rl x",
	`\curl x`, "curl", "{curl,x}", "curl${IFS}x", "curl -o /dev/null x", "./curl x",
}

// argvWrappers are the wrap kinds that put words in front of a simple
// command; they apply to simple commands only.
var argvWrappers = map[byte]bool{16: true, 17: true, 18: true, 19: true, 20: true, 21: true, 22: true, 23: true}

// wrapKinds is the number of wrap kinds; a plan's byte k is kind
// k%wrapKinds.
const wrapKinds = 35

// wrap places a command inside a construct that still runs it.
func wrap(kind byte, c string) (string, bool) {
	q := func(s string) (string, bool) {
		r, err := syntax.Quote(s, syntax.LangBash)
		return r, err == nil
	}
	switch kind % wrapKinds {
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
		return "sh -lc " + s, ok
	case 10:
		s, ok := q(c)
		return "eval " + s, ok
	case 11:
		return "if true; then " + c + "; fi", true
	case 12:
		return "for i in 1 2; do " + c + "; done", true
	case 13:
		return "while false; do " + c + "; done", true
	case 14:
		return "f() { " + c + "; }; f", true
	case 15:
		return "cat <( " + c + " )", true
	case 16:
		return "sudo " + c, true
	case 17:
		return "env A=1 " + c, true
	case 18:
		return "timeout 5 " + c, true
	case 19:
		return "nice -n 3 " + c, true
	case 20:
		return "nohup " + c, true
	case 21:
		return "command " + c, true
	case 22:
		return "echo x | xargs " + c, true
	case 23:
		return "find . -exec " + c + " \\;", true
	case 24:
		if strings.Contains(c, "\nEOF") {
			return "", false
		}
		return "bash <<'EOF'\n" + c + "\nEOF\n:", true
	case 25:
		s, ok := q(c)
		return "trap " + s + " EXIT", ok
	case 26:
		return "x=$( " + c + " )", true
	case 27:
		return "[[ $( " + c + " ) ]]", true
	case 28:
		return "case a in a) " + c + ";; esac", true
	case 29:
		return "ls \\\n; " + c, true
	case 30:
		return "# comment\n" + c, true
	case 31:
		s, ok := q(c)
		return "su -c " + s, ok
	case 32:
		s, ok := q(c)
		return "sudo bash -c " + s, ok
	case 33:
		s, ok := q(c)
		return "watch " + s, ok
	case 34:
		return "ls # a comment ends at its newline \\\n" + c, true
	}
	return c, true
}

// FuzzDenyNeverAllowed builds scripts that run curl somewhere, nested in
// the constructs bash offers, and checks that an allow list without curl
// never allows them and that a curl deny rule matches them.
func FuzzDenyNeverAllowed(f *testing.F) {
	f.Add([]byte{0, 0})
	f.Add([]byte{3, 8, 10, 7})
	f.Add([]byte{1, 22, 8, 14, 32})
	f.Add([]byte{5, 24, 25, 33, 16})
	f.Add([]byte{11, 31, 23, 9, 29, 30})
	deny := Patterns{mustPattern(f, "curl:*")}
	f.Fuzz(func(t *testing.T, plan []byte) {
		if len(plan) == 0 {
			return
		}
		src := curls[int(plan[0])%len(curls)]
		simple := true
		for _, k := range plan[1:min(len(plan), 12)] {
			if argvWrappers[k%wrapKinds] && !simple {
				return
			}
			var ok bool
			if src, ok = wrap(k, src); !ok {
				return
			}
			simple = simple && (k%wrapKinds == 0 || argvWrappers[k%wrapKinds])
		}
		s, err := Parse(src)
		if ok, _ := fuzzAllow(t).Allow(s); ok {
			t.Fatalf("%q is allowed; commands: %v", src, commandStrings(s))
		}
		if err == nil {
			if _, ok := deny.Match(s); !ok {
				t.Fatalf("%q is not denied by curl:*; commands: %v", src, commandStrings(s))
			}
		}
	})
}

func mustPattern(tb testing.TB, spec string) Pattern {
	tb.Helper()
	p, err := ParsePattern(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func commandStrings(s *Script) []string {
	var out []string
	for _, c := range s.Commands {
		out = append(out, c.String())
	}
	return out
}
