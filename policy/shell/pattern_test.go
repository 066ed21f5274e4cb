package shell

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePatternErrors(t *testing.T) {
	for _, spec := range []string{"", "Bash()", "  ", "ls | grep x", "a; b", "a && b", "echo > x", "$(x)", "`x`", `"open`, "'open", "(ls)"} {
		if _, err := ParsePattern(spec); !errors.Is(err, ErrPattern) {
			t.Errorf("ParsePattern(%q) = %v, want ErrPattern", spec, err)
		}
	}
	for _, spec := range []string{"Bash", "Bash(*)", "*", "Bash(ls)", "npm run test:*", `git commit -m "a b"`, `echo \*`, "echo $HOME"} {
		if _, err := ParsePattern(spec); err != nil {
			t.Errorf("ParsePattern(%q): %v", spec, err)
		}
	}
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		spec, cmd    string
		deny, allows bool // Match (deny, ask) and Allows (allow) of the last command
	}{
		// exact
		{"npm run build", "npm run build", true, true},
		{"npm run build", "npm run build --watch", false, false},
		{"npm run build", "npm  run   build", true, true},
		{"Bash(npm run build)", "'npm' run \"build\"", true, true},
		// prefix, legacy and space-star, at a word boundary
		{"npm run test:*", "npm run test", true, true},
		{"npm run test:*", "npm run test --watch", true, true},
		{"npm run test:*", "npm run test:unit", false, false},
		{"npm run test:*", "npm run tests", false, false},
		{"npm run test *", "npm run test", true, true},
		{"npm run test *", "npm run test -- -t x", true, true},
		{"npm run test *", "npm run test:unit", false, false},
		{"ls *", "lsof", false, false},
		{"ls *", "ls -la", true, true},
		// wildcards
		{"ls*", "lsof -i", true, true},
		{"ls*", "ls -la", true, true},
		{"ls*", "ls", true, true},
		{"git * main", "git push origin main", true, true},
		{"git * main", "git push origin main2", false, false},
		{"git * main", "git main", false, false},
		{"* --version", "go --version", true, true},
		{"* --version", "go version", false, false},
		{"*", "anything at all", true, true},
		{"Bash", "anything", true, true},
		{`echo \*`, "echo '*'", true, true},
		{`echo \*`, "echo x", false, false},
		{`echo "*"`, "echo '*'", true, true},
		{"git commit -m *", "git commit -m 'a b c'", true, true},
		{`git commit -m "a b"`, "git commit -m 'a b'", true, true},
		{`git commit -m "a b"`, "git commit -m a b", false, false},
		// paths: a bare name matches any path for deny, system paths for allow
		{"curl:*", "/usr/bin/curl x", true, true},
		{"ls:*", "/bin/ls -l", true, true},
		{"ls:*", "./ls -l", true, false},
		{"ls:*", "/tmp/x/ls", true, false},
		{"/usr/local/bin/tool:*", "/usr/local/bin/tool x", true, true},
		{"/usr/local/bin/tool:*", "tool x", false, false},
		// wrappers: deny sees through all, allow through transparent ones
		{"curl:*", "sudo curl x", true, false},
		{"curl:*", "timeout 5 curl x", true, true},
		{"curl:*", "env A=1 curl x", true, true},
		{"curl:*", "bash -c 'curl x'", true, true},
		{"curl:*", "echo | xargs curl", true, true},
		{"sudo:*", "sudo curl x", true, false},
		{"sudo curl:*", "sudo curl x", true, true},
		{"sudo apt update", "sudo apt update", true, true},
		{"timeout 5 curl:*", "timeout 5 curl x", true, true},
		{"timeout:*", "timeout 5 curl x", true, false},
		{"bash -c:*", "bash -c 'curl x'", true, false},
		{"env:*", "env curl x", true, false},
		{"xargs:*", "echo | xargs curl", true, false},
		// arguments appended at run time defeat exact rules
		{"rm build", "echo | xargs rm build", true, false},
		{"sh:*", "echo x | xargs sh -c", true, false},
		{"rm build:*", "echo | xargs rm build", true, true},
		{"rm build *", "echo | xargs rm build", true, true},
		// dynamic: deny guesses, allow never
		{"curl:*", "curl${IFS}x", true, false},
		{"curl:*", "c$@url x", true, false},
		{"curl:*", `bash -c "curl $U"`, true, false},
		{"*", "$CMD", true, false},
		{"curl:*", "/usr/bin/cu?l x", true, false},
		{"curl:*", "cu* x", true, false},
		{"/usr/bin/curl:*", "/usr/*/curl x", true, false},
		{"wget:*", "cu* x", false, false},
		{"ls:*", "LD_PRELOAD=x ls", true, false},
		{"ls:*", "PATH=/tmp ls", true, false},
		// git's options before its subcommand, and aliases -c sets
		{"git push:*", "git -C /x push", true, false},
		{"git push:*", "git --no-pager -c a.b=c push origin", true, false},
		{"git push:*", "git --git-dir=.git --work-tree . push", true, false},
		{"git push:*", "git -c alias.p=push p", true, false},
		{"git push:*", "git -c alias.P='push --force' p origin", true, false},
		{"git push:*", "git -c alias.a=b -c alias.b=push a", true, false},
		{"git push:*", "sudo git -C /x push", true, false},
		// a deny rule may match a little more: push may be -C's directory
		{"git push:*", "git -C push status", true, false},
		// git ignores an alias named as one of its commands
		{"git push:*", "git -c alias.push=status push", true, false},
		{"git status:*", "git -c alias.push=status push", false, false},
		// the subcommand after any program's options
		{"npm publish:*", "npm --force publish", true, false},
		{"npm publish:*", "npm -w pkg --registry https://r.example publish --tag x", true, false},
		{"git push:*", "git --no-pager log --grep push", false, false},
		{"docker push:*", "docker --debug run --name push alpine", false, false},
		{"docker run:*", "docker -H tcp://x run alpine", true, false},
		{"kubectl delete:*", "kubectl -n prod delete pod x", true, false},
		{"cargo publish:*", "cargo +nightly publish", true, false},
		{"npm publish:*", "npm --force run publish", false, false},
		{"npm publish:*", "npm test publish", false, false},
		{"git log:*", "git -c core.pager='curl x' log", true, false},
		{"git log:*", "git -c alias.l='!git log' l", false, false},
		// a function may run its arguments
		{"curl:*", `f() { "$@"; }; f curl x`, true, false},
		// word boundaries hold against lookalikes
		{"curl:*", "curly x", false, false},
		{"curl:*", "ｃurl x", false, false},
		{"c:*", "curl x", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.spec+" ~ "+tc.cmd, func(t *testing.T) {
			p, err := ParsePattern(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			c := s.Commands[len(s.Commands)-1]
			got := [2]bool{p.Match(c), p.Allows(c)}
			if diff := cmp.Diff([2]bool{tc.deny, tc.allows}, got); diff != "" {
				t.Errorf("[Match Allows] (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatternsCompound(t *testing.T) {
	allow := Patterns{mustPattern(t, "ls:*"), mustPattern(t, "grep:*"), mustPattern(t, "git status")}
	deny := Patterns{mustPattern(t, "rm:*")}
	tests := []struct {
		cmd   string
		allow bool
		deny  bool
	}{
		{"ls | grep x", true, false},
		{"ls && git status", true, false},
		{"ls && git push", false, false},
		{"ls; rm -rf x", false, true},
		{"ls $(rm x)", false, true},
		{"X=1; ls", true, false},
		{"> out.txt", true, false},
		{"", true, false},
		{"ls |", false, false},
		{"rm x\n)", false, true},
		{"$X", false, false},
		{"ls $X", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			s, _ := Parse(tc.cmd)
			ok, why := allow.Allow(s)
			_, denied := deny.Match(s)
			if ok != tc.allow || denied != tc.deny {
				t.Errorf("allow %v (%s), deny %v; want %v, %v", ok, why, denied, tc.allow, tc.deny)
			}
		})
	}
	// a pattern matching everything matches even a script without commands
	any := Patterns{mustPattern(t, "Bash")}
	s, _ := Parse("")
	if _, ok := any.Match(s); !ok {
		t.Error("Bash does not match the empty script")
	}
}
