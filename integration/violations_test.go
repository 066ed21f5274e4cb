//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// violation is a record of `cordon violations --json`.
type violation struct {
	Time    time.Time `json:"time"`
	Run     string    `json:"run"`
	Kind    string    `json:"kind"`
	Command string    `json:"command"`
	PID     int       `json:"pid"`
	Syscall string    `json:"syscall"`
	Args    []string  `json:"args"`
	Path    string    `json:"path"`
	Host    string    `json:"host"`
	Port    int       `json:"port"`
	Reason  string    `json:"reason"`
	Hint    string    `json:"hint"`
	// a masked credential's record
	Credential  string `json:"credential"`
	Substituted bool   `json:"substituted"`
	Count       int    `json:"count"`
}

// violations lists the box's store with `cordon violations --json` and
// any more flags.
func (b *box) violations(flags ...string) []violation {
	b.t.Helper()
	r := b.cordon(runSpec{}, append([]string{"violations", "--json"}, flags...)...)
	if r.code != 0 {
		b.t.Fatalf("cordon violations: %s", r)
	}
	var vs []violation
	if err := json.Unmarshal([]byte(r.stdout), &vs); err != nil {
		b.t.Fatalf("cordon violations --json: %v\n%s", err, r.stdout)
	}
	return vs
}

// noteLines are the "cordon: blocked ..." lines of a run's stderr.
func noteLines(stderr string) []string {
	var out []string
	for _, l := range lines(stderr) {
		if strings.HasPrefix(l, "cordon: blocked ") || strings.HasPrefix(l, "cordon: and ") {
			out = append(out, l)
		}
	}
	return out
}

func findViolation(vs []violation, match func(violation) bool) (violation, bool) {
	i := slices.IndexFunc(vs, match)
	if i < 0 {
		return violation{}, false
	}
	return vs[i], true
}

// TestViolations: what the sandbox refuses is recorded in the store and
// noted at the end of the run, for every kind: system calls, unix
// sockets, writes and reads (when asked for), and connections.
func TestViolations(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("system calls", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("unshare"), needTool("mount"))
			b := newBox(t, c)
			r := b.sh("unshare -U true; mount -t tmpfs cordon-it-src /mnt; echo done")
			if r.code != 0 || r.stdout != "done\n" {
				t.Fatalf("run: %s", r)
			}
			want := []string{
				"cordon: blocked system call unshare by unshare (namespaces and mounts are cordon's to set up)",
				"cordon: blocked system call mount by mount (namespaces and mounts are cordon's to set up)",
			}
			if diff := notesDiff(want, noteLines(r.stderr)); diff != "" {
				t.Errorf("notes: %s\n%s", diff, r)
			}
			vs := b.violations()
			m, ok := findViolation(vs, func(v violation) bool { return v.Syscall == "mount" })
			if !ok {
				t.Fatalf("no mount in the store: %+v", vs)
			}
			if m.Kind != "syscall" || m.PID <= 0 || !strings.HasPrefix(m.Command, "mount ") || m.Run == "" ||
				!slices.Contains(m.Args, "cordon-it-src") || !slices.Contains(m.Args, "/mnt") || !slices.Contains(m.Args, "tmpfs") {
				t.Errorf("mount recorded as %+v", m)
			}
			u, ok := findViolation(vs, func(v violation) bool { return v.Syscall == "unshare" })
			if !ok || !slices.Contains(u.Args, "CLONE_NEWUSER") {
				t.Errorf("unshare recorded as %+v (%v)", u, ok)
			}
		})
		t.Run("unix sockets recorded, not noted", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			try := "import socket, sys\ntry:\n    socket.socket(socket.AF_UNIX)\nexcept PermissionError:\n    sys.exit(%d)\n"
			r := b.run("python3", "-c", fmt.Sprintf(try, 0))
			if r.code != 0 || len(noteLines(r.stderr)) != 0 {
				t.Errorf("a command that copes with the refusal gets no note:\n%s", r)
			}
			r = b.run("python3", "-c", fmt.Sprintf(try, 3))
			if r.code != 3 || len(noteLines(r.stderr)) != 0 {
				t.Errorf("nor does a failed one:\n%s", r)
			}
			n := 0
			for _, v := range b.violations() {
				if v.Kind == "socket" && v.Syscall == "socket" && slices.Equal(v.Args, []string{"AF_UNIX", "SOCK_STREAM|SOCK_CLOEXEC", "0"}) &&
					strings.Contains(v.Command, "python3") {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d socket records of python3, want one per run", n)
			}
		})
		t.Run("writes not recorded unless asked", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh("echo x > /etc/hosts; true")
			if len(noteLines(r.stderr)) != 0 || len(b.violations()) != 0 {
				t.Errorf("recorded without --record-writes:\n%s", r)
			}
		})
		t.Run("writes", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			must(t, os.MkdirAll(filepath.Join(b.ws, ".git", "hooks"), 0o755))
			b.chown()
			script := `echo x > /etc/hosts; mkdir /usr/cordon-it; ln -s /etc etc-link; echo y > etc-link/cordon-it-file
echo z > .git/hooks/pre-commit; echo fine > fine.txt; mkdir fine-dir; rm fine.txt; echo w > "$HOME/outside.txt"; echo done`
			r := b.runSpec(runSpec{flags: []string{"--record-writes"}, args: []string{"sh", "-c", script}})
			if r.code != 0 || !strings.HasSuffix(r.stdout, "done\n") {
				t.Fatalf("run: %s", r)
			}
			want := []string{
				"cordon: blocked write to /etc/hosts by sh (read-only outside the workspace; allow with --allow-write /etc)",
				"cordon: blocked write to /usr/cordon-it by mkdir (read-only outside the workspace; allow with --allow-write /usr)",
				"cordon: blocked write to /etc/cordon-it-file by sh (read-only outside the workspace; allow with --allow-write /etc)",
				"cordon: blocked write to " + b.ws + "/.git/hooks/pre-commit by sh (protected: hooks of every repository below a writable root)",
				"cordon: blocked write to " + b.home + "/outside.txt by sh (read-only outside the workspace; allow with --allow-write " + b.home + ")",
			}
			if diff := notesDiff(want, noteLines(r.stderr)); diff != "" {
				t.Errorf("notes: %s\n%s", diff, r)
			}
			vs := b.violations()
			if len(vs) != len(want) {
				t.Errorf("%d records, want %d: %+v", len(vs), len(want), vs)
			}
			v, ok := findViolation(vs, func(v violation) bool { return v.Path == "/etc/cordon-it-file" })
			if !ok || v.Kind != "write" || v.Syscall != "openat" || !slices.Contains(v.Args, b.ws+"/etc-link/cordon-it-file") {
				t.Errorf("the write through a symlink is recorded as %+v", v)
			}
			if exists(filepath.Join(b.ws, "fine-dir")) == false || exists(filepath.Join(b.ws, "fine.txt")) {
				t.Errorf("the writes inside the workspace did not happen as asked")
			}
		})
		t.Run("reads of hidden paths", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.runSpec(runSpec{flags: []string{"--record-reads"}, args: []string{"sh", "-c",
				`cat "$HOME/.ssh/id_ed25519"; cat "$HOME/.aws/credentials"; cat /etc/hostname >/dev/null; echo done`}})
			if r.code != 0 || strings.Contains(r.stdout, "secret") {
				t.Fatalf("run: %s", r)
			}
			want := []string{
				"cordon: blocked read of " + b.home + "/.ssh/id_ed25519 by cat (hidden from the sandbox by denyRead; allow with --allow-read " + b.home + "/.ssh)",
				"cordon: blocked read of " + b.home + "/.aws/credentials by cat (hidden from the sandbox by denyRead; allow with --allow-read " + b.home + "/.aws)",
			}
			if diff := notesDiff(want, noteLines(r.stderr)); diff != "" {
				t.Errorf("notes: %s\n%s", diff, r)
			}
		})
		t.Run("connections", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			settings := filepath.Join(b.dir, "net.json")
			must(t, os.WriteFile(settings, []byte(`{"sandbox": {"network": {"allowedDomains": ["allowed.invalid"]}}}`), 0o644))
			fetch := `import urllib.request, urllib.error
try:
    urllib.request.urlopen("http://blocked.invalid:8080/x", timeout=20)
except urllib.error.HTTPError as e:
    print(e.code)`
			r := b.runSpec(runSpec{flags: []string{"--settings", settings}, args: []string{"python3", "-c", fetch}})
			want := []string{"cordon: blocked connection to blocked.invalid:8080 (not in allowedDomains; allow with --allow-domain blocked.invalid or sandbox.network.allowedDomains)"}
			if r.stdout != "403\n" || notesDiff(want, noteLines(r.stderr)) != "" {
				t.Errorf("want a 403 and the note %q:\n%s", want, r)
			}
			v, ok := findViolation(b.violations(), func(v violation) bool { return v.Kind == "network" })
			if !ok || v.Host != "blocked.invalid" || v.Port != 8080 {
				t.Errorf("connection recorded as %+v (%v)", v, ok)
			}
		})
		t.Run("ignoreViolations", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("unshare"))
			b := newBox(t, c)
			settings := filepath.Join(b.dir, "ignore.json")
			must(t, os.WriteFile(settings, []byte(`{"sandbox": {"ignoreViolations": {"*": ["/etc/hosts"], "unshare": ["unshare"]}}}`), 0o644))
			r := b.runSpec(runSpec{flags: []string{"--settings", settings, "--record-writes"},
				args: []string{"sh", "-c", "echo > /etc/hosts; echo > /etc/passwd; unshare -U true; true"}})
			want := []string{"cordon: blocked write to /etc/passwd by sh (read-only outside the workspace; allow with --allow-write /etc)"}
			if diff := notesDiff(want, noteLines(r.stderr)); diff != "" {
				t.Errorf("notes: %s\n%s", diff, r)
			}
			if vs := b.violations(); len(vs) != 1 || vs[0].Path != "/etc/passwd" {
				t.Errorf("store: %+v", vs)
			}
		})
		t.Run("listing", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("unshare"))
			b := newBox(t, c)
			for range 2 {
				b.sh("unshare -U true; true")
			}
			all := b.violations()
			if len(all) != 2 || all[0].Run == all[1].Run {
				t.Fatalf("two runs, one record each: %+v", all)
			}
			if one := b.violations("--run", all[1].Run); len(one) != 1 || one[0].Run != all[1].Run {
				t.Errorf("--run %s: %+v", all[1].Run, one)
			}
			if recent := b.violations("--since", "1h"); len(recent) != 2 {
				t.Errorf("--since 1h: %+v", recent)
			}
			if later := b.violations("--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); len(later) != 0 {
				t.Errorf("--since an hour from now: %+v", later)
			}
			r := b.cordon(runSpec{}, "violations")
			if r.code != 0 || len(lines(r.stdout)) != 2 || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "syscall blocked system call unshare by unshare") {
				t.Errorf("cordon violations:\n%s", r)
			}
			r = b.cordon(runSpec{}, "violations", "--since", "last tuesday")
			if r.code != 125 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, `--since "last tuesday"`) {
				t.Errorf("a bad --since: want one line and exit 125:\n%s", r)
			}
		})
		t.Run("concurrent runs", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("unshare"))
			b := newBox(t, c)
			const n = 12
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for range n {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
					defer cancel()
					out, err := b.command(ctx, runSpec{}, "run", "--", "sh", "-c", "unshare -U true; true").CombinedOutput()
					if err != nil {
						errs <- fmt.Errorf("%v: %s", err, out)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			runs := map[string]bool{}
			for _, v := range b.violations() {
				runs[v.Run] = true
			}
			if len(runs) != n {
				t.Errorf("%d runs in the store, want %d", len(runs), n)
			}
		})
	})
}

// notesDiff compares notes as sets: their order follows the order the
// sandbox's processes were refused in.
func notesDiff(want, got []string) string {
	w, g := slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))
	if slices.Equal(w, g) {
		return ""
	}
	return fmt.Sprintf("want\n  %s\ngot\n  %s", strings.Join(w, "\n  "), strings.Join(g, "\n  "))
}
