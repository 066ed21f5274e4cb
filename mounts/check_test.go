package mounts

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestChecks: a plan made through a Recorder says, for every mount in a
// writable root and every directory on the way to one, what must be there
// once the mounts are made, with the identity each path had when the plan
// resolved it — not the one it has later.
func TestChecks(t *testing.T) {
	host := hostFS()
	ino := uint64(100)
	for _, f := range host {
		if f.Mode&fs.ModeSymlink == 0 {
			ino++
			f.Sys = Identity{Dev: 7, Ino: ino}
		}
	}
	host["home/u/ws/.git"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755, Sys: Identity{Dev: 7, Ino: 1}}
	host["home/u/ws/.git/hooks"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755, Sys: Identity{Dev: 7, Ino: 2}}
	host["home/u/ws/app"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755, Sys: Identity{Dev: 7, Ino: 3}}
	host["home/u/ws/app/.env"] = &fstest.MapFile{Mode: 0o600, Sys: Identity{Dev: 7, Ino: 4}}
	host["home/u/ws/secrets"] = &fstest.MapFile{Mode: fs.ModeDir | 0o700, Sys: Identity{Dev: 7, Ino: 5}}
	rec := NewRecorder(host)
	ws := host["home/u/ws"].Sys.(Identity)
	res, err := Plan(Layout{
		FS: rec,
		Rules: []Rule{
			{Path: "/home/u/ws", Access: ReadWrite},
			{Path: "/home/u/ws/.git", Access: ReadWrite},
			{Path: "/home/u/ws/.git/hooks", Access: ReadOnly},
			{Path: "/home/u/ws/app/.env", Access: Deny},
			{Path: "/home/u/ws/secrets", Access: Deny},
			// Outside every writable root: its mask is checked (a bind
			// sent there by a symlink swapped in would cover it), not
			// the directories on the way.
			{Path: "/home/u/.ssh", Access: Deny},
		},
		MaskFile: "/run/cordon/mask",
		Checked:  []string{"/home/u/ws"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// What changes after the plan is made does not change the checks.
	host["home/u/ws/.git/hooks"].Sys = Identity{Dev: 7, Ino: 999}
	want := []Check{
		{Path: "/home/u/ws", Kind: CheckSame, Identity: ws},
		{Path: "/home/u/.ssh", Kind: CheckTmpfsMask},
		{Path: "/home/u/ws/.git", Kind: CheckSame, Identity: Identity{7, 1}},
		{Path: "/home/u/ws/secrets", Kind: CheckTmpfsMask},
		{Path: "/home/u/ws/.git/hooks", Kind: CheckReadOnly, Identity: Identity{7, 2}},
		{Path: "/home/u/ws/app", Kind: CheckSame, Identity: Identity{7, 3}},
		{Path: "/home/u/ws/app/.env", Kind: CheckMask},
	}
	if diff := cmp.Diff(want, res.Checks); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if id, _ := rec.Identity("/home/u/ws/.git/hooks"); id != (Identity{7, 2}) {
		t.Errorf("the recorder forgot the identity it resolved: %v", id)
	}

	// Without a recorder (or without inode numbers) there is nothing to
	// check.
	res, err = Plan(Layout{FS: host, Rules: []Rule{{Path: "/home/u/ws", Access: ReadWrite}}, Checked: []string{"/home/u/ws"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checks) != 0 {
		t.Errorf("checks without a recorder: %+v", res.Checks)
	}
}

// TestProtectLinks: a symlink on the way to a protected path is recorded
// with its target (the runtime puts it back when the command replaces it);
// its target is bound read-only; where a dangling link points is scrubbed.
func TestProtectLinks(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}
	}
	host := fstest.MapFS{
		"ws":            dir,
		"ws/.git":       dir,
		"ws/.git/hooks": link("../.githooks"),
		"ws/.githooks":  dir,
		"ws/.bashrc":    link("dotfiles/bashrc"), // dangling: dotfiles/ is not there
	}
	pr, err := Protect(host, []string{"/ws"}, []string{".git/hooks", ".bashrc"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := []Link{{Path: "/ws/.git/hooks", Target: "../.githooks"}, {Path: "/ws/.bashrc", Target: "dotfiles/bashrc"}}
	if diff := cmp.Diff(wantLinks, pr.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	wantRules := []Rule{{Path: "/ws/.git", Access: ReadWrite}, {Path: "/ws/.githooks", Access: ReadOnly}}
	if diff := cmp.Diff(wantRules, pr.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/ws/dotfiles/bashrc"}, pr.Scrub); diff != "" {
		t.Errorf("scrub (-want +got):\n%s", diff)
	}
}

// TestProtectNestedRepos: the repositories below a writable root, down to
// nestedDepth, get the protection of its own .git, and its directories the
// nested names, with the directories from the root pinned; deeper ones,
// those in node_modules and those behind a symlink are not looked for.
func TestProtectNestedRepos(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	file := &fstest.MapFile{Mode: 0o644}
	host := fstest.MapFS{
		"ws":                           dir,
		"ws/sub/.git/hooks":            dir,
		"ws/org/proj/.git/config":      file,
		"ws/a/b/c/.git/hooks":          dir, // too deep
		"ws/node_modules/x/.git":       dir,
		"ws/link":                      &fstest.MapFile{Mode: fs.ModeSymlink | 0o777, Data: []byte("sub")},
		"ws/wt/.git":                   &fstest.MapFile{Data: []byte("gitdir: /elsewhere\n")},
		"ws/plain/dir/not-a-repo.go":   file,
		"ws/pkg/.claude/settings.json": file,
	}
	pr, err := Protect(host, []string{"/ws"}, []string{".git/hooks", ".git/config"}, nil, []string{".claude/settings.json", ".claude/settings.local.json", ".mcp.json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Path: "/ws/org", Access: ReadWrite}, {Path: "/ws/org/proj", Access: ReadWrite},
		{Path: "/ws/org/proj/.git", Access: ReadWrite}, {Path: "/ws/org/proj/.git/config", Access: ReadOnly},
		{Path: "/ws/pkg", Access: ReadWrite}, {Path: "/ws/pkg/.claude", Access: ReadWrite},
		{Path: "/ws/pkg/.claude/settings.json", Access: ReadOnly},
		{Path: "/ws/sub", Access: ReadWrite}, {Path: "/ws/sub/.git", Access: ReadWrite},
		{Path: "/ws/sub/.git/hooks", Access: ReadOnly},
		{Path: "/ws/wt", Access: ReadWrite}, {Path: "/ws/wt/.git", Access: ReadOnly},
	}
	// Each once, in any order (the plan merges them).
	got := slices.Clone(pr.Rules)
	slices.SortFunc(got, func(a, b Rule) int { return strings.Compare(a.Path, b.Path) })
	got = slices.Compact(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	// What does not exist yet in a directory that holds the first part.
	if !slices.Contains(pr.Scrub, "/ws/pkg/.claude/settings.local.json") || slices.Contains(pr.Scrub, "/ws/pkg/.mcp.json") {
		t.Errorf("scrub: want pkg/.claude/settings.local.json, not pkg/.mcp.json: %q", pr.Scrub)
	}
}

// TestProtectTrustedDirs: a trusted directory in a writable root, and the
// directories down to nestedDepth below it, get the nested names however
// deep they are below the root: those that exist bound read-only, the
// trusted directory's own scrubbed when they are missing.
func TestProtectTrustedDirs(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	host := fstest.MapFS{
		"ws":                                 dir,
		"ws/a/b/t/x/y/.cordon/settings.json": &fstest.MapFile{Mode: 0o644},
	}
	pr, err := Protect(host, []string{"/ws"}, nil, nil, []string{".cordon/settings.json"}, []string{"/ws/a/b/t", "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	var ro []string
	for _, r := range pr.Rules {
		if r.Access == ReadOnly {
			ro = append(ro, r.Path)
		}
	}
	if diff := cmp.Diff([]string{"/ws/a/b/t/x/y/.cordon/settings.json"}, ro); diff != "" {
		t.Errorf("read-only (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/ws/a/b/t/.cordon/settings.json"}, pr.Scrub); diff != "" {
		t.Errorf("scrub (-want +got):\n%s", diff)
	}
	if !slices.Contains(pr.Rules, Rule{Path: "/ws/a", Access: ReadWrite}) {
		t.Errorf("the way from the root is not pinned: %v", pr.Rules)
	}
}

// countingFS counts the lookups that reach a file system.
type countingFS struct {
	fstest.MapFS
	lstats, stats map[string]int
}

func (c *countingFS) Lstat(name string) (fs.FileInfo, error) {
	c.lstats[name]++
	return c.MapFS.Lstat(name)
}

func (c *countingFS) Stat(name string) (fs.FileInfo, error) {
	c.stats[name]++
	return c.MapFS.Stat(name)
}

// TestRecorderMemo: a Recorder looks a name up once, and answers from that
// first look after the file system changed (one view per plan), errors
// included.
func TestRecorderMemo(t *testing.T) {
	host := fstest.MapFS{"a": &fstest.MapFile{Mode: fs.ModeDir | 0o755, Sys: Identity{Dev: 1, Ino: 1}}}
	c := &countingFS{MapFS: host, lstats: map[string]int{}, stats: map[string]int{}}
	r := NewRecorder(c)
	for range 3 {
		if fi, err := r.Lstat("a"); err != nil || !fi.IsDir() {
			t.Fatalf("Lstat(a): %v, %v", fi, err)
		}
		if _, err := r.Stat("a"); err != nil {
			t.Fatalf("Stat(a): %v", err)
		}
		if _, err := r.Lstat("b"); err == nil {
			t.Fatal("Lstat(b): want an error")
		}
	}
	host["b"] = &fstest.MapFile{Data: []byte("late")}
	host["a"] = &fstest.MapFile{Data: []byte("now a file")}
	if fi, err := r.Lstat("a"); err != nil || !fi.IsDir() {
		t.Errorf("Lstat(a) after a change: %v, %v; want the first answer", fi, err)
	}
	if _, err := r.Lstat("b"); err == nil {
		t.Error("Lstat(b) after it appeared: want the first answer, an error")
	}
	want := map[string]int{"a": 1, "b": 1}
	if diff := cmp.Diff(want, c.lstats); diff != "" {
		t.Errorf("Lstat lookups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a": 1}, c.stats); diff != "" {
		t.Errorf("Stat lookups (-want +got):\n%s", diff)
	}
	if id, ok := r.Identity("/a"); !ok || id != (Identity{Dev: 1, Ino: 1}) {
		t.Errorf("Identity(/a) = %v, %v", id, ok)
	}
}

// TestProtectGitDirRoots: the git directory a .git file names is writable
// (a worktree's, a submodule's) only when it is one: it holds HEAD. A
// submodule's must lie in the repository's own git directory (its
// modules): a .git file the command wrote into an uninitialised
// submodule's directory, naming the home, made the whole home writable on
// the next run.
func TestProtectGitDirRoots(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Mode: 0o644, Data: []byte(s)} }
	tests := []struct {
		name string
		fs   fstest.MapFS
		want []string
	}{{
		name: "worktree",
		fs: fstest.MapFS{
			"ws/.git":                          file("gitdir: /main/.git/worktrees/ws\n"),
			"main/.git/worktrees/ws/HEAD":      file("ref: refs/heads/x\n"),
			"main/.git/worktrees/ws/commondir": file("../..\n"),
			"main/.git/HEAD":                   file("ref: refs/heads/main\n"),
		},
		want: []string{"/main/.git/worktrees/ws", "/main/.git"},
	}, {
		name: "a worktree's submodule",
		fs: fstest.MapFS{
			"ws/.git":                     file("gitdir: /main/.git/worktrees/ws\n"),
			"ws/.gitmodules":              file("[submodule \"lib\"]\n\tpath = lib\n"),
			"ws/lib/.git":                 file("gitdir: /main/.git/worktrees/ws/modules/lib\n"),
			"main/.git/worktrees/ws/HEAD": file("ref: refs/heads/x\n"),
			"main/.git/worktrees/ws/modules/lib/HEAD": file("ref: refs/heads/x\n"),
		},
		want: []string{"/main/.git/worktrees/ws"},
	}, {
		name: "a submodule's .git naming the home",
		fs: fstest.MapFS{
			"ws/.git/HEAD":   file("ref: refs/heads/main\n"),
			"ws/.gitmodules": file("[submodule \"sub\"]\n\tpath = sub\n\turl = https://example.com/x.git\n"),
			"ws/sub/.git":    file("gitdir: /home/u\n"),
			"home/u/.bashrc": file(""),
		},
	}, {
		name: "a submodule's .git naming another repository",
		fs: fstest.MapFS{
			"ws/.git/HEAD":           file("ref: refs/heads/main\n"),
			"ws/.gitmodules":         file("[submodule \"sub\"]\n\tpath = sub\n"),
			"ws/sub/.git":            file("gitdir: /home/u/other/.git\n"),
			"home/u/other/.git/HEAD": file("ref: refs/heads/main\n"),
		},
	}, {
		name: "a submodule's commondir naming the home",
		fs: fstest.MapFS{
			"ws/.git/HEAD":                  file("ref: refs/heads/main\n"),
			"ws/.gitmodules":                file("[submodule \"lib\"]\n\tpath = lib\n"),
			"ws/lib/.git":                   file("gitdir: ../.git/modules/lib\n"),
			"ws/.git/modules/lib/HEAD":      file("ref: refs/heads/main\n"),
			"ws/.git/modules/lib/commondir": file("/home/u\n"),
			"home/u/.bashrc":                file(""),
		},
	}, {
		name: "a worktree's commondir naming the home",
		fs: fstest.MapFS{
			"ws/.git":                          file("gitdir: /main/.git/worktrees/ws\n"),
			"main/.git/worktrees/ws/HEAD":      file("ref: refs/heads/x\n"),
			"main/.git/worktrees/ws/commondir": file("/home/u\n"),
			"home/u/.bashrc":                   file(""),
		},
		want: []string{"/main/.git/worktrees/ws"},
	}, {
		name: "the workspace's .git naming a directory that is no git directory",
		fs: fstest.MapFS{
			"ws/.git":        file("gitdir: /home/u\n"),
			"home/u/.bashrc": file(""),
			"home/u":         dir,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fs["ws"] = dir
			pr, err := Protect(tc.fs, []string{"/ws"}, []string{".git/hooks"}, []string{"hooks", "config"}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pr.Roots); diff != "" {
				t.Errorf("roots (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProtectHooksPath: a repository whose config sends git to hooks in
// the working tree (core.hooksPath = .githooks; husky's .husky/_, whose
// hooks run the scripts in .husky) gets those protected as its .git/hooks
// is: the next git commit on the host runs them. So are config files its
// config includes: they are its config.
func TestProtectHooksPath(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Mode: 0o644, Data: []byte(s)} }
	tests := []struct {
		name   string
		config string
		files  fstest.MapFS
		want   []Rule
	}{{
		name:   "githooks",
		config: "[core]\n\trepositoryformatversion = 0\n\thooksPath = .githooks\n",
		files:  fstest.MapFS{"ws/.githooks/pre-commit": file("make lint\n")},
		want:   []Rule{{Path: "/ws/.githooks", Access: ReadOnly}},
	}, {
		name:   "husky",
		config: "[core]\n\thookspath = \".husky/_\"\n",
		files:  fstest.MapFS{"ws/.husky/_/pre-commit": file(". \"$(dirname \"$0\")/h\"\n"), "ws/.husky/pre-commit": file("npm test\n")},
		want:   []Rule{{Path: "/ws/.husky", Access: ReadOnly}, {Path: "/ws/.husky/_", Access: ReadOnly}},
	}, {
		name:   "an included config",
		config: "[core]\n\tbare = false\n[include]\n\tpath = ../.gitconfig-project\n[includeIf \"onbranch:main\"]\n\tpath = ../tools/git.conf\n",
		files:  fstest.MapFS{"ws/.gitconfig-project": file("[alias]\n"), "ws/tools/git.conf": file("[alias]\n")},
		want:   []Rule{{Path: "/ws/.gitconfig-project", Access: ReadOnly}, {Path: "/ws/tools/git.conf", Access: ReadOnly}},
	}, {
		name:   "another section's hooksPath",
		config: "[core]\n\tbare = false\n[x]\n\thooksPath = .githooks\n",
		files:  fstest.MapFS{"ws/.githooks/pre-commit": file("make lint\n")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"ws": dir, "ws/.git/HEAD": file("ref: refs/heads/main\n"), "ws/.git/config": file(tc.config)}
			for k, v := range tc.files {
				fsys[k] = v
			}
			pr, err := Protect(fsys, []string{"/ws"}, nil, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []Rule
			for _, r := range pr.Rules {
				if r.Access == ReadOnly {
					got = append(got, r)
				}
			}
			slices.SortFunc(got, func(a, b Rule) int { return strings.Compare(a.Path, b.Path) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read-only rules (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProtectHooksPathNested: a repository below the writable root (a
// clone in ~/code, a vendored checkout) gets its core.hooksPath protected
// as the root's own does.
func TestProtectHooksPathNested(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Mode: 0o644, Data: []byte(s)} }
	fsys := fstest.MapFS{
		"ws/.git/HEAD":                  file("ref: refs/heads/main\n"),
		"ws/sub/.git/HEAD":              file("ref: refs/heads/main\n"),
		"ws/sub/.git/config":            file("[core]\n\thooksPath = .githooks\n"),
		"ws/sub/.githooks/pre-commit":   file("make lint\n"),
		"ws/other/.githooks/pre-commit": file("not a hook: no repository names it\n"),
	}
	pr, err := Protect(fsys, []string{"/ws"}, []string{".git/hooks"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range pr.Rules {
		if r.Access == ReadOnly {
			got = append(got, r.Path)
		}
	}
	if !slices.Contains(got, "/ws/sub/.githooks") || slices.Contains(got, "/ws/other/.githooks") {
		t.Errorf("read-only %q: want /ws/sub/.githooks, not /ws/other/.githooks", got)
	}
}

// TestProtectionDrop: Drop leaves out every path hidden says is out of
// sight, whatever it was.
func TestProtectionDrop(t *testing.T) {
	pr := Protection{
		Rules: []Rule{{Path: "/ws/a", Access: ReadWrite}, {Path: "/ws/secret/repo", Access: ReadWrite}, {Path: "/ws/secret/repo/.git/hooks", Access: ReadOnly}},
		Roots: []string{"/ws/secret/wt"},
		Scrub: []string{"/ws/secret/.mcp.json", "/ws/.mcp.json"},
		Links: []Link{{Path: "/ws/secret/l", Target: "x"}},
	}
	pr.Drop(func(p string) bool { return p == "/ws/secret" || strings.HasPrefix(p, "/ws/secret/") })
	want := Protection{Rules: []Rule{{Path: "/ws/a", Access: ReadWrite}}, Roots: []string{}, Scrub: []string{"/ws/.mcp.json"}, Links: []Link{}}
	if diff := cmp.Diff(want, pr); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
