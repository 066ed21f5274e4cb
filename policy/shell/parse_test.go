package shell

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

// summary renders what Parse found about a command, compactly.
func summary(c *Command) string {
	var b strings.Builder
	for _, w := range c.Wrappers {
		fmt.Fprintf(&b, "[%s] ", w.Name)
	}
	for _, a := range c.Assigns {
		fmt.Fprintf(&b, "%s=%s ", a.Name, a.Value.Value)
	}
	b.WriteString(wordSummary(c.Name))
	for _, a := range c.Args {
		b.WriteString(" " + wordSummary(a))
	}
	for _, r := range c.Redirects {
		fmt.Fprintf(&b, " %s%s%s", r.Fd, r.Op, wordSummary(r.Target))
	}
	if c.Dynamic != "" {
		fmt.Fprintf(&b, " dynamic(%s)", c.Dynamic)
	}
	if c.ExtraArgs {
		b.WriteString(" +args")
	}
	if c.Piped {
		fmt.Fprintf(&b, " piped%v", c.Upstream)
	}
	if c.Dirs != nil {
		fmt.Fprintf(&b, " dirs%q", c.Dirs)
	}
	if c.DirsUnknown {
		b.WriteString(" dirs?")
	}
	if c.Function {
		b.WriteString(" func")
	}
	return b.String()
}

func wordSummary(w Word) string {
	s := w.Value
	if w.Home {
		s = "HOME:" + s
	}
	if w.Dynamic {
		s = "{" + s
		if w.Base != "" {
			s += " under " + w.Base
		}
		if w.Guess != "" {
			s += " guess " + w.Guess
		}
		s += "}"
	}
	return s
}

func TestParse(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`"curl" x`, []string{"curl x"}},
		{`c\url 'a b' "c\"d"`, []string{`curl a b c"d`}},
		{`cu''rl "$(echo)"x`, []string{"echo", "curl {$(echo)x guess x}"}},
		{`$'\x63url' $'a\nb' $'\101\u00e9\c[x'`, []string{"curl a\nb Aé\x1bx"}},
		{`/usr/bin/curl -s`, []string{"/usr/bin/curl -s"}},
		{"ls \\\n  -la # comment; curl", []string{"ls -la"}},
		// a comment ends at the newline, a backslash before it or not
		{"ls # x\\\ncurl x", []string{"ls", "curl x"}},
		{"ls # x\\\nif a; then curl x; fi", []string{"ls", "a", "curl x"}},
		{"if a; then b # x\\\ncurl x; fi", []string{"a", "b", "curl x"}},
		{"ls #\\\r\ncurl x #\\\n#\\\nwget y", []string{"ls", "curl x", "wget y"}},
		{"f() { # x\\\ncurl x\n}; a $(# y\\\nwget z\n)", []string{"curl x", "wget z", "a {$(# y \nwget z\n)}"}},
		{"a && b || c; d & e | f", []string{"a", "b", "c", "d", "e", "f piped[e]"}},
		{"a | (b; c | d)", []string{"a", "b piped[a]", "c piped[a]", "d piped[a c]"}},
		{"x=$(a) y `b` <(c) >(d)", []string{"a", "b", "c", "d", "x=$(a) y {`b`} {<(c)} {>(d)}"}},
		{"X=1 Y=$Z cmd", []string{"X=1 Y=$Z cmd"}},
		{"X=1", []string{"X=1 "}},
		{"> out.txt", []string{" >out.txt"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"while a; do b; done; until c; do d; done", []string{"a", "b", "c", "d"}},
		{"for i in $(a); do b $i; done", []string{"a", "b {$i}"}},
		{"case $(a) in x) b;; esac", []string{"a", "b"}},
		{"f() { a; }; f", []string{"a", "f func"}},
		{"[[ $(a) == x ]] && (( $(b) )) ; let x=$(c)", []string{"a", "b", "c"}},
		{"echo ${x:$(a):`b`}", []string{"a", "b", "echo {${x:$(a):`b`}}"}},
		{"{ a; } > out", []string{" >out", "a"}},
		{"time -p a", []string{"[time] a"}},
		{"sudo -u bob -E env X=1 nice -n 5 timeout -s KILL 3 a b", []string{"[sudo] [env] [nice] [timeout] X=1 a b"}},
		{"sudo VAR=x -- a", []string{"[sudo] VAR=x a"}},
		{"sudo -i", []string{"sudo -i"}},
		{"env -i", []string{"env -i"}},
		{"command -v a", []string{"command -v a"}},
		{"exec >log 2>&1", []string{"exec >log 2>&1"}},
		{"nohup a &", []string{"[nohup] a"}},
		{"stdbuf -oL a; setsid -f b; ionice -c3 c; chrt 10 d; taskset -c 1 e", []string{"[stdbuf] a", "[setsid] b", "[ionice] c", "[chrt] d", "[taskset] e"}},
		{"busybox wget x; unbuffer -p y; flock /tmp/l z; flock /tmp/l -c 'w'", []string{"[busybox] wget x", "[unbuffer] y", "[flock] z", "[flock -c] w"}},
		{"bash -c 'a; b' arg0", []string{"[bash -c] a", "[bash -c] b"}},
		{"sh -euc 'a'", []string{"[sh -c] a"}},
		{"bash -o pipefail -c 'a | b'", []string{"[bash -c] a", "[bash -c] b piped[a]"}},
		{"zsh -c a; dash -c b; su -c c bob", []string{"[zsh -c] a", "[dash -c] b", "su -c c bob", "[su -c] c"}},
		{"bash script.sh arg", []string{"bash script.sh arg"}},
		{`bash -c "$X"`, []string{"bash -c {$X} dynamic(bash -c runs text known only at run time: $X)"}},
		{`sh -c 'a "$1"' _ b`, []string{"[sh -c] a {$1 guess b}"}},
		{"bash -c 'a (' ", []string{`bash -c a ( dynamic(bash -c script does not parse: 1:1: "foo(" must be followed by ))`}},
		{"eval a b; eval 'c; d'", []string{"[eval] a b", "[eval] c", "[eval] d"}},
		{"eval eval eval a", []string{"[eval] [eval] [eval] a"}},
		{`eval "$X y"`, []string{"eval {$X y guess  y} dynamic(eval runs text known only at run time: $X y)", "[eval] y dynamic(eval runs text known only at run time: $X y)"}},
		{"bash <<'EOF'\na $x\nEOF", []string{"[bash <<] a {$x}"}},
		{"bash <<EOF\na $x\nEOF", []string{"bash dynamic(bash << runs text known only at run time: a $x\n)", "[bash <<] a dynamic(bash << runs text known only at run time: a $x\n)"}},
		{"sh <<< 'a; b'", []string{"[sh <<] a", "[sh <<] b"}},
		{"bash < script.sh", []string{"bash <script.sh"}},
		{"trap 'a; b' EXIT; trap - EXIT", []string{"trap a; b EXIT", "[trap] a", "[trap] b", "trap - EXIT"}},
		{"watch -n1 'a | b'; watch -x c d", []string{"[watch] a", "[watch] b piped[a]", "[watch] c d"}},
		{"echo x | xargs -0 -n1 a", []string{"echo x", "[xargs] a +args piped[echo]"}},
		{"xargs", []string{"[xargs] echo +args"}},
		{"xargs -I{} a {} x{}y z", []string{"[xargs] a {{}} {x{}y guess xy} z"}},
		{"xargs -i a {}", []string{"[xargs] a {{}}"}},
		{`find src -name '*.go' -exec a {} \; -execdir b {} +`, []string{
			"find src -name *.go -exec a {} ; -execdir b {} +",
			"[find -exec] a {{} under src guess {}}",
			"[find -execdir] b {{} under src guess {}} dirs?",
		}},
		{`find -exec sh -c 'a "$0"' {} \;`, []string{"find -exec sh -c a \"$0\" {} ;", "[find -exec] [sh -c] a {$0 guess {}}"}},
		{"uv run pytest -x; poetry run a; bundle exec b; npx -c 'c'; npm exec -c d", []string{"[uv run] pytest -x", "[poetry run] a", "[bundle exec] b", "[npx -c] c", "[npm -c] d"}},
		{"npx prettier", []string{"npx prettier"}},
		{"mise exec node@20 -- node x", []string{"[mise exec] node x"}},
		{"cd /etc && a; cd; b", []string{`cd /etc`, `a dirs["" "/etc"]`, `cd dirs["" "/etc"]`, `b dirs["" "/etc" "~"]`}},
		{"cd src; cd ../..; a", []string{`cd src`, `cd ../.. dirs["" "src"]`, `a dirs["" "src" "../.." ".."]`}},
		{`cd "$D"; a`, []string{"cd {$D}", "a dirs?"}},
		{"(cd /x); a", []string{"cd /x", `a dirs["" "/x"]`}},
		{"f() { cd /; }; a; f", []string{`cd / dirs["" "/"] dirs?`, `a dirs["" "/"]`, `f dirs["" "/"] func`}},
		{"g() { a; }; cd /x; g", []string{`a dirs["" "/x"]`, "cd /x", `g dirs["" "/x"] func`}},
		{"while b; do a; cd sub; done", []string{`b dirs["" "sub" "sub/sub" "sub/sub/sub" "sub/sub/sub/sub"] dirs?`, `a dirs["" "sub" "sub/sub" "sub/sub/sub" "sub/sub/sub/sub"] dirs?`, `cd sub dirs["" "sub" "sub/sub" "sub/sub/sub" "sub/sub/sub/sub"] dirs?`}},
		{"ls ~ ~/x $HOME/y \"$HOME\"/z ~bob ~+ ${HOME}x '~'", []string{"ls HOME:~ HOME:~/x HOME:~/y HOME:~/z {~bob guess ~bob} . {~x guess ~x} ~"}},
		{"HOME=/tmp; rm ~/x", []string{"HOME=/tmp ", "rm {~/x guess ~/x}"}},
		{"rm *.o /etc/* .* a/*/b ../*", []string{"rm {*.o under . guess *.o} {/etc/* under /etc guess /etc/*} {.* guess .*} {a/*/b under a guess a/*/b} {../* under .. guess ../*}"}},
		{"rm {a,b}/c x{1..3} y{1..1000}", []string{"rm a/c b/c x1 x2 x3 {y{1..1000} guess y{1..1000}}"}},
		{"{rm,-rf} x", []string{"rm -rf x dynamic(brace expansion in the command name)"}},
		{"$X a; ${Y} b; $(c) d", []string{"{$X} a dynamic(command name is dynamic: $X)", "{${Y}} b dynamic(command name is dynamic: ${Y})", "c", "{$(c)} d dynamic(command name is dynamic: $(c))"}},
		{"a${IFS}b", []string{"{a${IFS}b guess a b} dynamic(command name is dynamic: a${IFS}b)"}},
		{`""`, []string{" dynamic(empty command name)"}},
		{"LD_PRELOAD=x a", []string{"LD_PRELOAD=x a dynamic(LD_PRELOAD set: loads a library into every program)"}},
		{"export A=1 PATH=/x; declare -x B", []string{"A=1 PATH=/x export A=1 PATH=/x dynamic(PATH set: changes which program a command name runs)", "declare -x B"}},
		{"a 2>&1 >out <in 3<>f <<<s", []string{"a 2>&1 >out <in 3<>f <<<s"}},
		{"git -C /x status", []string{"git -C /x status"}},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			s, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range s.Commands {
				got = append(got, summary(c))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src     string
		err     error
		partial []string // what bash still runs
	}{
		{"ls |", ErrSyntax, nil},
		{"a\nb\n)", ErrSyntax, []string{"a", "b"}},
		{"a\nif b; then\nc\n)", ErrSyntax, []string{"a"}},
		{"echo 'open", ErrSyntax, nil},
		{"a=(1) b", ErrSyntax, nil},
		{"a\x00b", ErrNUL, nil},
		// read otherwise than bash by the parser: refused, never analysed
		// (what it saw stays, for the deny rules)
		{"ls \u0080; curl x", ErrSyntax, []string{"ls"}},
		{"ls a\u0081b; curl x", ErrSyntax, []string{"ls a\u0081b", "curl x"}},
		{"ls \r# ; curl x", ErrSyntax, []string{"ls"}},
		{"ls a\\\r\ncurl x", ErrSyntax, []string{"ls acurl x"}},
		{strings.Repeat("x", maxSource+1), ErrTooLarge, nil},
		{strings.Repeat("a;", maxCommands+1), ErrTooComplex, nil},
	}
	for _, tc := range tests {
		name := tc.src
		if len(name) > 20 {
			name = name[:20]
		}
		t.Run(name, func(t *testing.T) {
			s, err := Parse(tc.src)
			if !errors.Is(err, tc.err) || !errors.Is(s.Err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.err == ErrTooComplex {
				return
			}
			var got []string
			for _, c := range s.Commands {
				got = append(got, summary(c))
			}
			if diff := cmp.Diff(tc.partial, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseNestedMisread: a nested script the parser would read otherwise
// than bash is not analysed: the command that runs it is known only at run
// time.
func TestParseNestedMisread(t *testing.T) {
	for _, src := range []string{"bash -c $'ls \\u0080; curl x'", "bash -c $'ls \\r# ; curl x'", "eval $'ls \\u0081 curl'"} {
		s, err := Parse(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if !slices.ContainsFunc(s.Commands, func(c *Command) bool { return strings.Contains(c.Dynamic, "not read as bash does") }) {
			t.Errorf("%q: want the command running the script dynamic, got %+v", src, s.Commands)
		}
	}
}

func TestParseNestingLimit(t *testing.T) {
	src := "curl x"
	for range maxDepth + 2 {
		src = "bash -c " + mustQuote(t, src)
	}
	s, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	dynamic := false
	for _, c := range s.Commands {
		dynamic = dynamic || strings.Contains(c.Dynamic, "nested too deeply")
	}
	if !dynamic {
		t.Errorf("no command flags the nesting: %v", commandStrings(s))
	}
	if Classify(s, tableContext).Level != DangerFullAccess {
		t.Error("too deep nesting is not DangerFullAccess")
	}
}

func mustQuote(t *testing.T, s string) string {
	t.Helper()
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestAnsiC(t *testing.T) {
	tests := map[string]string{
		`\x63url`: "curl", `\143url`: "curl", `\u0063url`: "curl", `\U00000063url`: "curl",
		`a\0b`: "a", `\x`: `\x`, `\q`: `\q`, `\cA`: "\x01", `\'`: "'", `0\0`: "0", `\`: `\`, `\x4g`: "\x04g",
		"\\\x10": "\\\x10",
	}
	for in, want := range tests {
		if got := ansiC(in); got != want {
			t.Errorf("ansiC(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommandString(t *testing.T) {
	tests := map[string]string{
		"sudo -u bob env X=1 curl 'a b' > out": "sudo -u bob env X=1 curl 'a b' > out",
		"FOO=1 bash -c 'ls -la'":               "FOO=1 bash -c ls -la",
		"export PATH=/x":                       "export PATH=/x",
		"echo x 2>&1":                          "echo x 2>&1",
		"find . -exec rm {} +":                 "find . -exec rm {}",
	}
	for src, want := range tests {
		s, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Commands[len(s.Commands)-1].String(); got != want {
			t.Errorf("%q: String() = %q, want %q", src, got, want)
		}
	}
}
