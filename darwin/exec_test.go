package darwin

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		name            string
		profile, file   string
		argv, want      []string
		self            string
		rl              []Rlimit
		wantPath        string
		wantCommandArgv []string
	}{
		{
			name: "inline", profile: "(version 1)", argv: []string{"-weird", "a b"},
			want:            []string{"-p", "(version 1)", "--", "-weird", "a b"},
			wantPath:        SandboxExec,
			wantCommandArgv: []string{SandboxExec, "-p", "(version 1)", "--", "-weird", "a b"},
		},
		{
			name: "from a file", profile: "(version 1)", file: "/var/folders/x/T/cordon-profile-1.sb", argv: []string{"make"},
			want:            []string{"-f", "/var/folders/x/T/cordon-profile-1.sb", "--", "make"},
			wantPath:        SandboxExec,
			wantCommandArgv: []string{SandboxExec, "-f", "/var/folders/x/T/cordon-profile-1.sb", "--", "make"},
		},
		{
			name: "with rlimits, through cordon", profile: "P", argv: []string{"make", "-j8"},
			self: "/opt/cordon/bin/cordon", rl: []Rlimit{{"fsize", 1 << 30}, {"nofile", 256}},
			want:            []string{"-p", "P", "--", "make", "-j8"},
			wantPath:        "/opt/cordon/bin/cordon",
			wantCommandArgv: []string{"/opt/cordon/bin/cordon", LimitCommand, "fsize=1073741824", "nofile=256", "--", "-p", "P", "--", "make", "-j8"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Args(tc.profile, tc.file, tc.argv)); diff != "" {
				t.Errorf("Args (-want +got):\n%s", diff)
			}
			p, argv := Command(tc.self, tc.rl, tc.profile, tc.file, tc.argv)
			if p != tc.wantPath {
				t.Errorf("Command path = %s, want %s", p, tc.wantPath)
			}
			if diff := cmp.Diff(tc.wantCommandArgv, argv); diff != "" {
				t.Errorf("Command argv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInline(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "HOME=/Users/u"}
	if !Inline(strings.Repeat("x", 40<<10), []string{"make"}, env) {
		t.Error("a 40 KiB profile goes inline")
	}
	if Inline(strings.Repeat("x", 300<<10), []string{"make"}, env) {
		t.Error("a 300 KiB profile goes in a file")
	}
	// The environment and argv count too.
	big := []string{"X=" + strings.Repeat("y", 150<<10)}
	if Inline(strings.Repeat("x", 60<<10), []string{"make"}, big) {
		t.Error("a profile that fits alone but not with a large environment goes in a file")
	}
}

func TestLookCommand(t *testing.T) {
	exe := &fstest.MapFile{Mode: 0o755}
	fsys := fstest.MapFS{
		"usr/bin/git":           exe,
		"usr/bin/notexec":       &fstest.MapFile{Mode: 0o644},
		"opt/a/notexec":         &fstest.MapFile{Mode: 0o644},
		"opt/b/notexec":         exe,
		"opt/c/onlydenied":      &fstest.MapFile{Mode: 0o600},
		"usr/bin/adir":          &fstest.MapFile{Mode: fs.ModeDir | 0o755},
		"Users/u/proj/run.sh":   exe,
		"Users/u/proj/data.sh":  &fstest.MapFile{Mode: 0o644},
		"Users/u/proj/bin/tool": exe,
		"bin/sh":                exe,
	}
	stat := func(p string) (fs.FileInfo, error) {
		return fs.Stat(fsys, strings.TrimPrefix(p, "/"))
	}
	const dir = "/Users/u/proj"
	for _, tc := range []struct {
		name, cmd string
		env       []string
		want      string
		err       error
	}{
		{name: "on PATH", cmd: "git", env: []string{"PATH=/usr/local/bin:/usr/bin"}, want: "/usr/bin/git"},
		{name: "not found", cmd: "nope", env: []string{"PATH=/usr/bin"}, err: ErrNotFound},
		{name: "a directory", cmd: "adir", env: []string{"PATH=/usr/bin"}, err: ErrNotExecutable},
		{name: "not executable, found later", cmd: "notexec", env: []string{"PATH=/opt/a:/opt/b"}, want: "/opt/b/notexec"},
		{name: "only not executable", cmd: "onlydenied", env: []string{"PATH=/opt/c:/usr/bin"}, err: ErrNotExecutable},
		{name: "relative path", cmd: "./run.sh", want: "/Users/u/proj/run.sh"},
		{name: "relative path, not executable", cmd: "./data.sh", err: ErrNotExecutable},
		{name: "relative path, missing", cmd: "bin/none", err: ErrNotFound},
		{name: "absolute path", cmd: "/bin/sh", want: "/bin/sh"},
		{name: "relative PATH entry", cmd: "tool", env: []string{"PATH=bin"}, want: "/Users/u/proj/bin/tool"},
		{name: "empty PATH entry is the working directory", cmd: "run.sh", env: []string{"PATH=/usr/bin:"}, want: "/Users/u/proj/run.sh"},
		{name: "no PATH: execvp's default", cmd: "sh", want: "/bin/sh"},
		{name: "the last PATH counts", cmd: "git", env: []string{"PATH=/usr/bin", "PATH=/opt/a"}, err: ErrNotFound},
		{name: "empty name", cmd: "", err: ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LookCommand(tc.cmd, tc.env, dir, stat)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if err != nil && LookStatus(err) != map[error]int{ErrNotFound: 127, ErrNotExecutable: 126}[tc.err] {
				t.Errorf("LookStatus(%v) = %d", err, LookStatus(err))
			}
		})
	}
}
