package darwin

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// compileGlob compiles an absolute glob as the profile does for a deny
// (subtree false: the pattern alone).
func compileGlob(t testing.TB, glob string, subtree bool) *regexp.Regexp {
	t.Helper()
	pt, _ := globPattern(glob)
	re, err := pt.regex(subtree)
	if err != nil {
		t.Fatalf("regex(%q): %v", glob, err)
	}
	if err := posixSafe(re); err != nil {
		t.Fatalf("regex(%q) = %q: %v", glob, re, err)
	}
	return regexp.MustCompile(re)
}

// posixSafe checks that re keeps to the subset of POSIX extended regular
// expressions that means the same to Seatbelt and to Go: anchored, escapes
// only of metacharacters, no escapes or POSIX "[." "[=" "[:" openers inside
// bracket expressions, no Perl classes, no repetition counts.
func posixSafe(re string) error {
	if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") {
		return fmt.Errorf("not anchored")
	}
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			if i+1 == len(re) || !strings.ContainsRune(regexSpecial, rune(re[i+1])) {
				return fmt.Errorf("escape of a non-metacharacter at %d", i)
			}
			i++
		case '{':
			return fmt.Errorf("unescaped { at %d", i)
		case '[':
			j := i + 1
			if j < len(re) && re[j] == '^' {
				j++
			}
			if j < len(re) && re[j] == ']' {
				j++
			}
			for ; j < len(re) && re[j] != ']'; j++ {
				if re[j] == '\\' {
					return fmt.Errorf("backslash in a bracket expression at %d", j)
				}
				if re[j] == '[' && j+1 < len(re) && strings.ContainsRune(".=:", rune(re[j+1])) {
					return fmt.Errorf("POSIX bracket opener at %d", j)
				}
			}
			if j == len(re) {
				return fmt.Errorf("unclosed bracket expression at %d", i)
			}
			i = j
		}
	}
	return nil
}

func TestGlobRegex(t *testing.T) {
	for _, tc := range []struct {
		glob    string
		match   []string
		nomatch []string
	}{
		{`/a/*.go`,
			[]string{"/a/x.go", "/a/.go", "/a/.hidden.go", "/a/x.y.go"},
			[]string{"/a/b/x.go", "/a/x.go/y", "/a/xgo", "/b/x.go", "/a/x.gox", "/a/x-go"}},
		{`/a/**/b`,
			[]string{"/a/b", "/a/x/b", "/a/x/y/b"},
			[]string{"/a/xb", "/ab", "/a/b/c", "/a/x/bb"}},
		{`/**/b`,
			[]string{"/b", "/x/b", "/x/y/b"},
			[]string{"/xb", "/b/c"}},
		{`/a/**`,
			[]string{"/a/x", "/a/x/y"},
			[]string{"/a", "/ab", "/b/a/x"}},
		{`/a/**/**/b`,
			[]string{"/a/b", "/a/x/y/b"},
			[]string{"/a/xb"}},
		{`/a/?.go`,
			[]string{"/a/x.go", "/a/..go"},
			[]string{"/a/xy.go", "/a/.go"}},
		{`/a/x**y`,
			[]string{"/a/xy", "/a/xzzy"},
			[]string{"/a/x/y"}},
		{`/a/[abc]`,
			[]string{"/a/a", "/a/c"},
			[]string{"/a/d", "/a/ab", "/a/[abc]"}},
		{`/a/[a-c]x`,
			[]string{"/a/bx"},
			[]string{"/a/-x", "/a/dx"}},
		{`/a/[!a-c]`,
			[]string{"/a/d", "/a/-", "/a/]"},
			[]string{"/a/a", "/a/b", "/a/c", "/a//"}},
		{`/a/[^a-c]`,
			[]string{"/a/d"},
			[]string{"/a/b"}},
		{`/a/[]a]`,
			[]string{"/a/]", "/a/a"},
			[]string{"/a/b"}},
		{`/a/[!]a]`,
			[]string{"/a/b"},
			[]string{"/a/]", "/a/a"}},
		{`/a/[a-]`,
			[]string{"/a/a", "/a/-"},
			[]string{"/a/b"}},
		{`/a/[-a]`,
			[]string{"/a/a", "/a/-"},
			[]string{"/a/b"}},
		{`/a/[[:digit:]]x`,
			[]string{"/a/0x", "/a/9x"},
			[]string{"/a/ax", "/a/:x"}},
		{`/a/[[:alpha:]_]`,
			[]string{"/a/Q", "/a/_"},
			[]string{"/a/1"}},
		{`/a/[.]`,
			[]string{"/a/."},
			[]string{"/a/x"}},
		{`/a/[*?]`,
			[]string{"/a/*", "/a/?"},
			[]string{"/a/x"}},
		{`/a/[(){}|$^+.]`,
			[]string{"/a/(", "/a/)", "/a/{", "/a/}", "/a/|", "/a/$", "/a/^", "/a/+", "/a/."},
			[]string{"/a/x", "/a/\\"}},
		{`/a/[[]`,
			[]string{"/a/["},
			[]string{"/a/x"}},
		{`/a/[^^]`,
			[]string{"/a/x"},
			[]string{"/a/^"}},
		{`/a/[-^]`,
			[]string{"/a/-", "/a/^"},
			[]string{"/a/x"}},
		{`/a/[[^]`,
			[]string{"/a/[", "/a/^"},
			[]string{"/a/x"}},
		{`/a/[\]]`,
			[]string{"/a/]"},
			[]string{"/a/\\"}},
		{`/a/[#-0]x`, // a range spanning "/" never matches it
			[]string{"/a/#x", "/a/.x", "/a/0x"},
			[]string{"/a//x", "/a/ax"}},
		{`/a/[z-ab]x`, // an empty range and a member
			[]string{"/a/bx"},
			[]string{"/a/zx", "/a/ax"}},
		{`/a/[abc`, // unclosed: a name
			[]string{"/a/[abc"},
			[]string{"/a/a"}},
		{`/a/b\*c\?d\[e]`,
			[]string{"/a/b*c?d[e]"},
			[]string{"/a/bxcxde", "/a/b*c?de"}},
		{`/a/b.c+d(e)|f{g}^h$i]*`, // every metacharacter in the name part
			[]string{"/a/b.c+d(e)|f{g}^h$i]", "/a/b.c+d(e)|f{g}^h$i]zz"},
			[]string{"/a/bXc+d(e)|f{g}^h$i]", "/a/b.cc+d(e)|f{g}^h$i]", "/a/b.c+d(e)f{g}^h$i]", "/a/b.c+dee|f{g}^h$i]", "/a/b.c+d(e)|fg^h$i]", "/a/b.c+d(e)|f{g}h$i]"}},
		{`/a/x\`,
			[]string{"/a/x\\"},
			[]string{"/a/x"}},
		{`/données ü/*.txt`,
			[]string{"/données ü/a.txt"},
			[]string{"/donnees u/a.txt"}},
		{`/a b/"q"/*`,
			[]string{`/a b/"q"/x`},
			[]string{`/a b/q/x`}},
	} {
		re := compileGlob(t, tc.glob, false)
		for _, m := range tc.match {
			if !re.MatchString(m) {
				t.Errorf("%s (%s) does not match %q", tc.glob, re, m)
			}
		}
		for _, m := range tc.nomatch {
			if re.MatchString(m) {
				t.Errorf("%s (%s) matches %q", tc.glob, re, m)
			}
		}
	}
}

func TestExpandBraces(t *testing.T) {
	for in, want := range map[string][]string{
		"/a/b":                {"/a/b"},
		"/a/{b,c}":            {"/a/b", "/a/c"},
		"/a/{b,c{d,e}}/f":     {"/a/b/f", "/a/cd/f", "/a/ce/f"},
		"/{a,b}/{c,d}":        {"/a/c", "/a/d", "/b/c", "/b/d"},
		"/a/{b}":              {"/a/b"},
		"/a/{b,}c":            {"/a/bc", "/a/c"},
		`/a/\{b,c}`:           {`/a/\{b,c}`},
		"/a/{b,c":             {"/a/{b,c"},
		"/a/b}":               {"/a/b}"},
		"/w/{src,lib/x}/*.go": {"/w/src/*.go", "/w/lib/x/*.go"},
	} {
		got, err := expandBraces(in)
		if err != nil {
			t.Fatalf("expandBraces(%q): %v", in, err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("expandBraces(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := expandBraces("/{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"); err == nil {
		t.Error("128 expansions accepted")
	}
}

func TestGlobSubtree(t *testing.T) {
	re := compileGlob(t, "/w/**/*.pem", true)
	for p, want := range map[string]bool{
		"/w/k.pem": true, "/w/a/k.pem": true, "/w/a/k.pem/x": true, "/w/k.pem.bak": false, "/wk.pem": false,
	} {
		if re.MatchString(p) != want {
			t.Errorf("%s matches %s: %v, want %v", re, p, !want, want)
		}
	}
}

func TestGlobRefuses(t *testing.T) {
	for _, glob := range []string{`/a/[é]`, `/a/[\\]`, `/a/[[:nope:]]`, `/a/[!\x00-\x7f]`} {
		pt, ok := globPattern(glob)
		if !ok {
			t.Fatalf("%s is not a glob", glob)
		}
		if re, err := pt.regex(false); err == nil && glob != `/a/[!\x00-\x7f]` {
			t.Errorf("regex(%s) = %s, want an error", glob, re)
		}
	}
	pt, _ := globPattern(`/a/[b-a]`)
	if _, err := pt.regex(false); err == nil {
		t.Errorf("a class that matches nothing compiled")
	}
}

// TestGlobAgainstPathMatch compares the regexes with path.Match, component
// by component, over every pairing of a set of patterns and names built
// from the characters that matter: the regex matches exactly the names
// gitignore's semantics (which path.Match shares for these) say.
func TestGlobAgainstPathMatch(t *testing.T) {
	patterns := []string{
		"*", "a*", "*a", "a*b", "?", "a?", "??", "[ab]", "[^ab]", "[a-c]*", "*.[ch]", `\*`, `a\?b`,
		"*[.]*", "[.^$]", "x.y", "a+b", "(a)", "a|b", "{a}", "$^", "[+]",
	}
	alphabet := []string{"", "a", "b", "c", "ab", "ba", "a.b", ".", "*", "?", "a+b", "(a)", "a|b", "{a}", "$^", "+", "x.y", "xay", "abc", "^", "$", ".c", "a.h"}
	for _, pat := range patterns {
		re := compileGlob(t, "/d/"+pat, false)
		for _, name := range alphabet {
			if name == "" {
				continue
			}
			want, err := path.Match(pat, name)
			if err != nil {
				t.Fatalf("path.Match(%q): %v", pat, err)
			}
			if got := re.MatchString("/d/" + name); got != want {
				t.Errorf("glob %q on %q: regex %s says %v, path.Match says %v", pat, name, re, got, want)
			}
		}
	}
}

// FuzzGlobRegex: whatever the pattern, a compiled regex is anchored, keeps
// to the POSIX subset, compiles, and agrees with path.Match where
// path.Match shares gitignore's semantics.
func FuzzGlobRegex(f *testing.F) {
	for _, s := range []string{"*.go", "[a-z]?", `\[x]`, "**", "[!a]", "[]]", "a[", "[[:alpha:]]", `x\`, "é*"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		if strings.ContainsAny(pat+name, "/\x00") || pat == "" || name == "" || !utf8.ValidString(pat) || !utf8.ValidString(name) {
			// Invalid UTF-8 is refused when the profile quotes it.
			return
		}
		pt, ok := globPattern("/d/" + pat)
		if !ok {
			return
		}
		re, err := pt.regex(false)
		if err != nil {
			return
		}
		if err := posixSafe(re); err != nil {
			t.Fatalf("%q: %s: %v", pat, re, err)
		}
		rx, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("%q: %s: %v", pat, re, err)
		}
		// path.Match differs on "!" negation, "]" first, "[:class:]",
		// "**", unclosed classes and non-ASCII "?": compare the rest.
		if strings.Contains(pat, "**") || strings.Contains(pat, "[!") || strings.Contains(pat, "[]") ||
			strings.Contains(pat, "[^]") || strings.Contains(pat, "[:") || !isASCII(pat+name) ||
			strings.Count(pat, "*") > 4 || len(name) > 64 { // path.Match backtracks exponentially
			return
		}
		want, err := path.Match(pat, name)
		if err != nil {
			return
		}
		if got := rx.MatchString("/d/" + name); got != want {
			t.Fatalf("glob %q on %q: regex %s says %v, path.Match says %v", pat, name, re, got, want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] < 0x20 {
			return false
		}
	}
	return true
}

// TestFoldedRegex: a deny's regex matches a name in either ASCII case, as
// a case-insensitive volume resolves it, and nothing the unfolded regex
// would not match but for case.
func TestFoldedRegex(t *testing.T) {
	for _, tc := range []struct {
		glob    string
		matches []string
		not     []string
	}{
		{"/Users/u/proj/.git/hooks", []string{"/Users/u/proj/.git/hooks/x", "/Users/u/proj/.GIT/Hooks", "/users/U/PROJ/.git/HOOKS/pre-commit"},
			[]string{"/Users/u/proj/.git/hook", "/Users/u/proj/xgit/hooks", "/Users/u/proj/.git/hooksx"}},
		{"/w/config/[!a-c]?.json", []string{"/w/config/dx.json", "/w/CONFIG/Dx.JSON"}, []string{"/w/config/ax.json", "/w/config/Ax.json", "/w/config/Cx.json"}},
		{"/w/[A-C]*.key", []string{"/w/a.key", "/w/Bz.KEY"}, []string{"/w/d.key"}},
		{"/w/café/x", []string{"/w/CAFé/X"}, []string{"/w/CAFÉ/x"}}, // only ASCII letters fold
		{`/w/a\*b`, []string{"/w/A*B"}, []string{"/w/axb"}},
	} {
		pt, _ := globPattern(tc.glob)
		re, err := pt.foldedRegex(true)
		if err != nil {
			t.Fatalf("foldedRegex(%q): %v", tc.glob, err)
		}
		if err := posixSafe(re); err != nil {
			t.Fatalf("foldedRegex(%q) = %q: %v", tc.glob, re, err)
		}
		rx := regexp.MustCompile(re)
		for _, p := range tc.matches {
			if !rx.MatchString(p) {
				t.Errorf("%s (%s) does not match %s", re, tc.glob, p)
			}
		}
		for _, p := range tc.not {
			if rx.MatchString(p) {
				t.Errorf("%s (%s) matches %s", re, tc.glob, p)
			}
		}
	}
}
