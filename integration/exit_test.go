//go:build linux

package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatus: cordon exits with the command's status, 128+N when a
// signal N ended it, 126/127 when it cannot be executed or found, and 125
// with one line on stderr when cordon itself fails — and then nothing ran.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// flags and args of `cordon run` (args nil: no "--" either);
		// "WS" in them is the workspace.
		flags, args []string
		noDashes    bool
		want        int
		// cordonFailed: one line on stderr and nothing ran (the command
		// would have created ran.txt).
		cordonFailed bool
		// stderrHas must be on stderr, and stderr must be one line.
		stderrHas string
	}{
		{name: "success", args: []string{"true"}, want: 0},
		{name: "exit 3", args: []string{"sh", "-c", "exit 3"}, want: 3},
		{name: "killed by SIGTERM", args: []string{"sh", "-c", "kill -TERM $$"}, want: 143},
		{name: "killed by SIGKILL", args: []string{"sh", "-c", "kill -KILL $$"}, want: 137},
		{name: "killed by SIGINT", args: []string{"sh", "-c", "kill -INT $$"}, want: 130},
		{name: "command not found", args: []string{"no-such-command-x7", "arg"}, want: 127, stderrHas: "no-such-command-x7"},
		{name: "path not found", args: []string{"./no-such-file-x7"}, want: 127, stderrHas: "no-such-file-x7"},
		{name: "not executable", args: []string{"./not-executable.sh"}, want: 126, stderrHas: "not-executable.sh"},
		{name: "a directory", args: []string{"./adir"}, want: 126, stderrHas: "adir"},
		// as execvp(3) and shells do: a script without "#!" runs under /bin/sh
		{name: "script without #!", args: []string{"./no-shebang", "3"}, want: 3},
		{name: "binary of no known format", args: []string{"./not-elf"}, want: 126, stderrHas: "not-elf"},
		{name: "no command", noDashes: true, want: 125, cordonFailed: true},
		{name: "no command after --", args: []string{}, want: 125, cordonFailed: true},
		{name: "unknown flag", flags: []string{"--no-such-flag"}, args: []string{"touch", "ran.txt"}, want: 125, cordonFailed: true, stderrHas: "no-such-flag"},
		{name: "unknown mode", flags: []string{"--mode", "no-such-mode"}, args: []string{"touch", "ran.txt"}, want: 125, cordonFailed: true, stderrHas: "no-such-mode"},
		{name: "workspace does not exist", flags: []string{"--workspace", "WS/no-such-dir"}, args: []string{"touch", "WS/ran.txt"}, want: 125, cordonFailed: true, stderrHas: "no-such-dir"},
		{name: "workspace is a file", flags: []string{"--workspace", "WS/not-executable.sh"}, args: []string{"touch", "WS/ran.txt"}, want: 125, cordonFailed: true, stderrHas: "not-executable.sh"},
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				must(t, os.WriteFile(filepath.Join(b.ws, "not-executable.sh"), []byte("#!/bin/sh\necho ran\n"), 0o644))
				must(t, os.Mkdir(filepath.Join(b.ws, "adir"), 0o755))
				must(t, os.WriteFile(filepath.Join(b.ws, "no-shebang"), []byte("exit $1\n"), 0o755))
				must(t, os.WriteFile(filepath.Join(b.ws, "not-elf"), []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), 0o755))
				b.chown()
				sub := func(s []string) []string {
					out := make([]string, len(s))
					for i, a := range s {
						out[i] = strings.ReplaceAll(a, "WS", b.ws)
					}
					return out
				}
				cli := []string{"run"}
				cli = append(cli, sub(tc.flags)...)
				if !tc.noDashes {
					cli = append(append(cli, "--"), sub(tc.args)...)
				}
				r := b.cordon(runSpec{}, cli...)
				if r.code != tc.want {
					t.Errorf("exit status %d, want %d\n%s", r.code, tc.want, r)
				}
				if tc.stderrHas != "" || tc.cordonFailed {
					if n := len(lines(r.stderr)); n != 1 {
						t.Errorf("stderr has %d lines, want one line naming the cause:\n%s", n, r.stderr)
					}
					if !strings.Contains(r.stderr, tc.stderrHas) {
						t.Errorf("stderr does not name %q:\n%s", tc.stderrHas, r.stderr)
					}
				}
				if tc.cordonFailed {
					if r.stdout != "" {
						t.Errorf("cordon failed but wrote to stdout:\n%s", r.stdout)
					}
					if exists(filepath.Join(b.ws, "ran.txt")) {
						t.Errorf("cordon failed (%d) but the command ran", r.code)
					}
				}
			})
		}
	})
}

// TestStdio: stdin, stdout and stderr pass straight through: pipes, a
// regular file, large output, stdout and stderr kept apart.
func TestStdio(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("stdin from a pipe", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.runSpec(runSpec{args: []string{"cat"}, stdin: strings.NewReader("through the pipe\nline two\n")})
			if r.code != 0 || r.stdout != "through the pipe\nline two\n" {
				t.Errorf("cat did not echo stdin:\n%s", r)
			}
		})
		t.Run("stdout and stderr apart", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh("echo to-stdout; echo to-stderr >&2; echo more-stdout")
			if r.stdout != "to-stdout\nmore-stdout\n" || r.stderr != "to-stderr\n" || r.code != 0 {
				t.Errorf("want stdout %q and stderr %q:\n%s", "to-stdout\nmore-stdout\n", "to-stderr\n", r)
			}
		})
		t.Run("5 MB through stdin and stdout", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			data := make([]byte, 5<<20)
			for i := range data {
				data[i] = byte(i*7 + i>>13)
			}
			r := b.runSpec(runSpec{args: []string{"cat"}, stdin: bytes.NewReader(data)})
			if r.code != 0 || r.stdout != string(data) {
				t.Errorf("5 MB through cat: exit %d, got %d bytes, intact %v; stderr %q",
					r.code, len(r.stdout), r.stdout == string(data), r.stderr)
			}
		})
		t.Run("5 MB of output", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			const line = "0123456789 abcdefghijklmnopqrstuvwxyz\n"
			r := b.sh("yes '0123456789 abcdefghijklmnopqrstuvwxyz' | head -c 5242880")
			want := strings.Repeat(line, 5242880/len(line)+1)[:5242880]
			if r.code != 0 || r.stdout != want {
				t.Errorf("5 MB of output: exit %d, got %d bytes, intact %v; stderr %q",
					r.code, len(r.stdout), r.stdout == want, r.stderr)
			}
		})
		t.Run("stdin a regular file", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			p := filepath.Join(b.dir, "input.txt")
			must(t, os.WriteFile(p, []byte("from a file\n"), 0o600))
			f, err := os.Open(p)
			must(t, err)
			defer f.Close()
			r := b.runSpec(runSpec{args: []string{"sh", "-c", "if test -t 0; then echo terminal; else echo no-terminal; fi; cat"}, stdin: f})
			if r.code != 0 || r.stdout != "no-terminal\nfrom a file\n" {
				t.Errorf("want %q:\n%s", "no-terminal\nfrom a file\n", r)
			}
		})
		t.Run("no stdin", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.run("cat")
			if r.code != 0 || r.stdout != "" {
				t.Errorf("cat with stdin /dev/null:\n%s", r)
			}
		})
	})
}
