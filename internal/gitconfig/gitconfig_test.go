package gitconfig

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestHooksPaths(t *testing.T) {
	fsys := fstest.MapFS{
		"w/.git/config":          {Data: []byte("[core]\n\thooksPath = \".husky/_\" # husky\n[includeIf \"gitdir:~/w/\"]\n\tpath = extra.cfg\n[include]\n\tpath = ~/x\n")},
		"w/.git/config.worktree": {Data: []byte("[Core]\n\tHooksPath = /opt/hooks\n")},
	}
	got := HooksPaths(fsys, "/w", []string{"/w/.git"})
	want := []string{"/w/.husky/_", "/w/.husky", "/w/.git/extra.cfg", "/opt/hooks"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HooksPaths (-want +got):\n%s", diff)
	}
}

func TestValue(t *testing.T) {
	for in, want := range map[string]string{
		` .husky/_`:                    ".husky/_",
		` .husky/_ ; husky`:            ".husky/_",
		` ".husky/_" # husky`:          ".husky/_",
		` "a # b" c`:                   "a # b c",
		` "trailing "  `:               "trailing ",
		` a\"b`:                        `a"b`,
		` hooks\#1`:                    "hooks#1",
		` /x/y	`:                       "/x/y",
		` "unterminated # not comment`: "unterminated # not comment",
		` hooks\bx`:                    "hooks\bx", // a backspace, as git writes it
	} {
		if got := value(in); got != want {
			t.Errorf("value(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEntriesAfterSection: git reads a key written on the line of its
// section's header ("[core] hooksPath = x"), and a "]" inside a quoted
// subsection does not end the header.
func TestEntriesAfterSection(t *testing.T) {
	got := Entries([]byte("[core] hooksPath = /evil\n[includeIf \"gitdir:/a]b/\"] path = inc.cfg\n[user]\n\tname = x\n"))
	want := []Entry{
		{"core", "hookspath", "/evil"},
		{`includeif "gitdir:/a]b/"`, "path", "inc.cfg"},
		{"user", "name", "x"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
}

// TestEntriesContinuation: a backslash that ends a value's line continues
// the value on the next line, in quotes or not, but not in a comment (as
// git config --list reads them).
func TestEntriesContinuation(t *testing.T) {
	got := Entries([]byte("[core]\n\thooksPath = .hoo\\\n  ks\n\tsshCommand = \".ss\\\nh\"\n\teditor = vi ; c \\\n\tbare = false\n\tpager = a\\\\\n\tabbrev = 7\n"))
	want := []Entry{
		{"core", "hookspath", ".hoo  ks"},
		{"core", "sshcommand", ".ssh"},
		{"core", "editor", "vi"},
		{"core", "bare", "false"},
		{"core", "pager", `a\`},
		{"core", "abbrev", "7"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
}

// FuzzEntries: any file is read without a panic, sections and keys
// lowercased.
func FuzzEntries(f *testing.F) {
	f.Add("[core]\n\thooksPath = \".husky/_\" # husky\n")
	f.Add("[core] hooksPath = .hoo\\\n  ks\n[includeIf \"gitdir:/a]b/\"] path = x\n")
	f.Add("[\n=\\")
	f.Fuzz(func(t *testing.T, data string) {
		for _, e := range Entries([]byte(data)) {
			if e.Section != strings.ToLower(e.Section) || e.Key != strings.ToLower(e.Key) {
				t.Fatalf("%+v: not lowercased", e)
			}
		}
	})
}
