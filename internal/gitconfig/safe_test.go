package gitconfig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Var
	}{
		{"sections and keys", "[core]\n\tbare = false\n[remote \"Origin\"]\n\turl = /src/x\n[Remote.Up]\n\tURL = y\n", []Var{
			{Name: "core.bare", Value: "false"},
			{Name: "remote.Origin.url", Value: "/src/x"},
			{Name: "remote.up.url", Value: "y"},
		}},
		{"a key on the header's line, no value, comments", "\ufeff[core] bare\n# c\n; c\n[user]name=a b # c\n", []Var{
			{Name: "core.bare", NoValue: true},
			{Name: "user.name", Value: "a b"},
		}},
		{"quotes, escapes, continuations", "[a]\n\tx = \" q ; # \" \\\"t\\\\\n\ty = a\\\n b\n\tz = \"\\n\\t\"\r\n", []Var{
			{Name: "a.x", Value: ` q ; #  "t\`},
			{Name: "a.y", Value: "a b"},
			{Name: "a.z", Value: "\n\t"},
		}},
		{"a subsection with escapes and dots", "[submodule \"lib/a.b\\\"c\"]\n\tpath = lib\n", []Var{
			{Name: `submodule.lib/a.b"c.path`, Value: "lib"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
		})
	}
	for _, in := range []string{
		"bare = true\n",                  // outside a section
		"[core\n",                        // unfinished header
		"[]\n",                           // empty section
		"[.a]\n",                         // empty section part
		"[a b]\n",                        // subsection not quoted
		"[a \"b\n",                       // unfinished subsection
		"[a \"b\" ]\n",                   // space before ]
		"[a]\n\tx = \"open\n",            // unfinished quote
		"[a]\n\tx = \\q\n",               // unknown escape
		"[a]\n\tx # c\n",                 // comment after a bare key
		"[a]\n\t1x = y\n",                // key starts with a digit
		"[a]\n\tx_y = z\n",               // _ in a key
		"[a]\n\tx = y\x00z\n",            // NUL: git's value would end there
		"[a]\n\tx = y\rz\n",              // lone CR
		"[core]\n\tfsmonitor = a\x1bb\n", // control character
	} {
		if got, err := Parse([]byte(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrSyntax", in, got, err)
		}
	}
}

// gitList is what git itself reads in the config file data (git config
// --file --list), as Vars, or an error when it refuses the file.
func gitList(t testing.TB, data []byte) ([]Var, error) {
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "--file", f, "--list", "-z")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var vars []Var
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		name, value, ok := bytes.Cut(rec, []byte{'\n'})
		vars = append(vars, Var{Name: string(name), Value: string(value), NoValue: !ok})
	}
	return vars, nil
}

// sameAsGit fails when Parse reads data and git reads it otherwise: a
// variable Parse would let through that git reads differently. (Parse
// may refuse more than git.) git before 2.42 reads a tab inside a value
// as a space.
func sameAsGit(t testing.TB, data []byte) {
	got, err := Parse(data)
	if err != nil {
		return
	}
	want, gerr := gitList(t, data)
	if gerr != nil {
		t.Fatalf("Parse(%q) read %+v; git refuses it: %v", data, got, gerr)
	}
	tabs := cmp.Transformer("tabs", func(s string) string { return strings.ReplaceAll(s, "\t", " ") })
	if d := cmp.Diff(want, got, tabs); d != "" {
		t.Fatalf("Parse(%q) (-git +Parse):\n%s", data, d)
	}
}

var parseSeeds = []string{
	"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = /src/x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
	"[core] bare\n[Remote.Up]URL = y ; c\n[a \"b\\\"c\"]x=\"q;#\" \\\\ z  \n",
	"[a]\n\ty = a\\\n b\n\tz = \"\\n\\t\"\r\n\tw =\n\tv = \t x \t y \t\n",
	"\ufeff[a][b]c=d\n[e]f\n",
	"[a]\n\tx = y # z \\\n\tw = 1\n",
	"[a \"\"]\n\tx = 1\n[a-b.c-d]\n\tk-1 = 2\n",
}

// TestParseAsGit: git reads each of the seeds as Parse does.
func TestParseAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	for _, s := range parseSeeds {
		sameAsGit(t, []byte(s))
		if _, err := Parse([]byte(s)); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
}

// FuzzParse: whatever Parse reads, git reads the same (with git).
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	_, err := exec.LookPath("git")
	f.Fuzz(func(t *testing.T, data string) {
		vars, perr := Parse([]byte(data))
		for _, v := range vars {
			if v.Section() != strings.ToLower(v.Section()) || v.Key() != strings.ToLower(v.Key()) {
				t.Fatalf("%+v: not lowercased", v)
			}
		}
		if perr == nil && err == nil {
			sameAsGit(t, []byte(data))
		}
	})
}

func TestCheck(t *testing.T) {
	// git init, then git remote add, git branch -m, git checkout -b x origin/x.
	initial := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
	worked := initial + "[remote \"origin\"]\n\turl = /home/u/src/app\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
		"[branch \"trunk\"]\n\tremote = origin\n\tmerge = refs/heads/trunk\n[submodule \"lib/foo\"]\n\turl = ../libfoo\n\tactive = true\n" +
		"[user]\n\tname = Ada\n\temail = ada@example.com\n"
	// The user's own, which a rewrite keeps.
	own := initial + "[core]\n\thooksPath = .husky\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n"
	submodule := "[core]\n\trepositoryformatversion = 0\n\tworktree = ../../../lib/foo\n"
	inWorkspace := func(v string) bool { return v == "../../../lib/foo" }
	for _, tc := range []struct {
		name       string
		prev, next string
		rules      Rules
		refused    string // the variable named, "" when accepted
	}{
		{"git init", "", initial, Rules{}, ""},
		{"ordinary work", initial, worked, Rules{}, ""},
		{"a submodule's working tree", "", submodule, Rules{Worktree: inWorkspace}, ""},
		{"the user's own, kept", own, own + "[remote \"x\"]\n\turl = /src\n", Rules{}, ""},
		{"the user's own, changed", own, strings.Replace(own, ".husky", ".evil", 1), Rules{}, "core.hookspath"},
		{"core.fsmonitor", initial, initial + "\tfsmonitor = touch /tmp/pwned\n", Rules{}, "core.fsmonitor"},
		{"core.fsmonitor as git's daemon", initial, initial + "\tfsmonitor = true\n", Rules{}, "core.fsmonitor"},
		{"core.sshCommand", initial, initial + "\tsshCommand = sh -c evil\n", Rules{}, "core.sshcommand"},
		{"core.pager", initial, "[Core]Pager=evil\n", Rules{}, "core.pager"},
		{"core.worktree elsewhere", "", "[core]\n\tworktree = /home/u\n", Rules{Worktree: inWorkspace}, "core.worktree"},
		{"include.path", initial, initial + "[include]\n\tpath = ../evil.cfg\n", Rules{}, "include.path"},
		{"includeIf", initial, initial + "[includeIf \"gitdir:/\"]\n\tpath = /tmp/x\n", Rules{}, "includeif.gitdir:/.path"},
		{"remote.x.uploadpack", initial, initial + "[remote \"x\"]\n\turl = /src\n\tuploadpack = touch /tmp/pwned\n", Rules{}, "remote.x.uploadpack"},
		{"remote.x.receivepack", initial, initial + "[remote \"x\"]\n\treceivepack = evil\n", Rules{}, "remote.x.receivepack"},
		{"an ext:: url", initial, initial + "[remote \"x\"]\n\turl = ext::sh -c touch% /tmp/pwned\n", Rules{}, "remote.x.url"},
		{"an fd:: pushurl", initial, initial + "[remote \"x\"]\n\tpushurl = FD::3\n", Rules{}, "remote.x.pushurl"},
		{"a url that is an option", initial, initial + "[remote \"x\"]\n\turl = -oProxyCommand=evil\n", Rules{}, "remote.x.url"},
		{"submodule update command", initial, initial + "[submodule \"x\"]\n\tupdate = !touch /tmp/pwned\n", Rules{}, "submodule.x.update"},
		{"alias", initial, initial + "[alias]\n\tst = !evil\n", Rules{}, "alias.st"},
		{"a filter of the command's", initial, initial + "[filter \"x\"]\n\tsmudge = evil\n", Rules{}, "filter.x.smudge"},
		{"a diff driver", initial, initial + "[diff \"x\"]\n\ttextconv = evil\n", Rules{}, "diff.x.textconv"},
		{"url.insteadOf", initial, initial + "[url \"ext::sh -c evil \"]\n\tinsteadOf = https://\n", Rules{}, "url.ext::sh -c evil .insteadof"},
		{"credential.helper", initial, initial + "[credential]\n\thelper = !evil\n", Rules{}, "credential.helper"},
		{"http", initial, initial + "[http]\n\tsslVerify = false\n", Rules{}, "http.sslverify"},
		{"protocol", initial, initial + "[protocol \"ext\"]\n\tallow = always\n", Rules{}, "protocol.ext.allow"},
		{"a line git reads otherwise", initial, initial + "\tbare = false\x00\n[core]\n\tfsmonitor = evil\n", Rules{}, ""},
		{"gitmodules", "", "[submodule \"lib/foo\"]\n\tpath = lib/foo\n\turl = ../libfoo\n", Rules{Kind: Modules}, ""},
		{"gitmodules update command", "", "[submodule \"x\"]\n\tpath = x\n\tupdate = !evil\n", Rules{Kind: Modules}, "submodule.x.update"},
		{"gitmodules name leaving", "", "[submodule \"../../hooks\"]\n\tpath = x\n", Rules{Kind: Modules}, "submodule.../../hooks.path"},
		{"gitmodules other section", "", "[core]\n\tfsmonitor = evil\n", Rules{Kind: Modules}, "core.fsmonitor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prev []byte
			if tc.prev != "" {
				prev = []byte(tc.prev)
			}
			err := Check(prev, []byte(tc.next), tc.rules)
			var ue *UnsafeError
			switch {
			case tc.name == "a line git reads otherwise":
				if !errors.As(err, &ue) || ue.Name != "" {
					t.Errorf("Check = %v, want refused as unreadable", err)
				}
			case tc.refused == "" && err != nil:
				t.Errorf("Check = %v, want accepted", err)
			case tc.refused != "" && (!errors.As(err, &ue) || ue.Name != tc.refused):
				t.Errorf("Check = %v, want %s refused", err, tc.refused)
			}
		})
	}
}
