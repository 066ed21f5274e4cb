//go:build unix

package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestViolationSummary(t *testing.T) {
	tests := []struct {
		v    Violation
		want string
	}{
		{Violation{Kind: KindWrite, Path: "/etc/hosts", Command: "/bin/sh -c echo x > /etc/hosts", Reason: "read-only outside the workspace", Hint: "allow with --allow-write /etc"},
			"blocked write to /etc/hosts by sh (read-only outside the workspace; allow with --allow-write /etc)"},
		{Violation{Kind: KindRead, Path: "/home/u/.ssh/id_rsa", Command: "cat /home/u/.ssh/id_rsa", Reason: "hidden from the sandbox by denyRead"},
			"blocked read of /home/u/.ssh/id_rsa by cat (hidden from the sandbox by denyRead)"},
		{Violation{Kind: KindNetwork, Host: "evil.example", Port: 443, Reason: "not in allowedDomains", Hint: "allow with --allow-domain evil.example"},
			"blocked connection to evil.example:443 (not in allowedDomains; allow with --allow-domain evil.example)"},
		{Violation{Kind: KindSocket, Syscall: "socket", Args: []string{"AF_UNIX", "SOCK_STREAM", "0"}, Command: "docker ps", Reason: "unix sockets reach outside the sandbox"},
			"blocked socket(AF_UNIX, SOCK_STREAM, 0) by docker (unix sockets reach outside the sandbox)"},
		{Violation{Kind: KindSyscall, Syscall: "mount", Reason: "namespaces and mounts are cordon's to set up"},
			"blocked system call mount (namespaces and mounts are cordon's to set up)"},
		{Violation{Kind: KindCredential, Credential: "file /home/u/.npmrc", Host: "registry.npmjs.org", Port: 443, Substituted: true, Count: 1, Reason: "among its injectHosts"},
			"sent file /home/u/.npmrc's real value to registry.npmjs.org:443 (among its injectHosts)"},
		{Violation{Kind: KindCredential, Credential: "env T", Host: "x.example", Port: 443, Count: 2, Reason: "not among its injectHosts"},
			"kept env T from x.example:443 in 2 requests (not among its injectHosts)"},
		// macOS
		{Violation{Kind: KindOperation, Syscall: "mach-lookup", Args: []string{"com.apple.FontServer"}, Command: "java", Reason: "a Mach service not on the sandbox's list"},
			"blocked mach-lookup com.apple.FontServer by java (a Mach service not on the sandbox's list)"},
		{Violation{Kind: KindOperation, Syscall: "signal", Command: "kill", Reason: "only processes of the same sandbox can be signalled"},
			"blocked signal by kill (only processes of the same sandbox can be signalled)"},
		{Violation{Kind: KindSocket, Syscall: "connect", Args: []string{"/private/var/run/docker.sock"}, Path: "/private/var/run/docker.sock", Command: "docker"},
			"blocked connect(/private/var/run/docker.sock) by docker"},
	}
	for _, tc := range tests {
		if got := tc.v.Summary(); got != tc.want {
			t.Errorf("Summary() = %q\n          want %q", got, tc.want)
		}
	}
}

func TestIgnoreMatch(t *testing.T) {
	write := Violation{Kind: KindWrite, Path: "/usr/lib/node_modules/x", Command: "npm install"}
	conn := Violation{Kind: KindNetwork, Host: "telemetry.example", Port: 443}
	call := Violation{Kind: KindSyscall, Syscall: "ptrace", Command: "gdb ./a.out"}
	tests := []struct {
		name    string
		ignore  Ignore
		command string
		v       Violation
		want    bool
	}{
		{"no rules", nil, "npm install", write, false},
		{"every command, path inside", Ignore{"*": {"/usr/lib"}}, "make", write, true},
		{"every command, other path", Ignore{"*": {"/etc"}}, "make", write, false},
		{"run's command matches", Ignore{"npm": {"node_modules"}}, "npm install", write, true},
		{"process's command matches", Ignore{"npm": {"node_modules"}}, "sh -c make", write, true},
		{"command does not match", Ignore{"yarn": {"node_modules"}}, "make", Violation{Kind: KindWrite, Path: "/x/node_modules", Command: "make"}, false},
		{"host", Ignore{"*": {"telemetry.example"}}, "curl", conn, true},
		{"host and port", Ignore{"*": {"telemetry.example:443"}}, "curl", conn, true},
		{"other port", Ignore{"*": {"telemetry.example:80"}}, "curl", conn, false},
		{"system call", Ignore{"gdb": {"ptrace"}}, "gdb ./a.out", call, true},
		{"empty entry matches nothing", Ignore{"*": {""}}, "make", write, false},
		{"macOS operation by its target", Ignore{"*": {"com.apple.FontServer"}}, "java -jar x",
			Violation{Kind: KindOperation, Syscall: "mach-lookup", Args: []string{"com.apple.FontServer"}}, true},
		{"macOS operation by its name", Ignore{"java": {"mach-lookup"}}, "java -jar x",
			Violation{Kind: KindOperation, Syscall: "mach-lookup", Args: []string{"com.apple.FontServer"}}, true},
		{"macOS unix socket by its path", Ignore{"*": {"docker.sock"}}, "docker ps",
			Violation{Kind: KindSocket, Syscall: "connect", Args: []string{"/private/var/run/docker.sock"}, Path: "/private/var/run/docker.sock"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ignore.Match(tc.command, tc.v); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRecorder(t *testing.T) {
	r := newRecorder("run-1", "make test", "/w", Ignore{"*": {"/ignored"}})
	r.add(Violation{Kind: KindWrite, Path: "/etc/hosts", Command: "sh"})
	r.add(Violation{Kind: KindWrite, Path: "/etc/hosts", Command: "sh"}) // a repeat
	r.add(Violation{Kind: KindWrite, Path: "/etc/hosts", Command: "make"})
	r.add(Violation{Kind: KindWrite, Path: "/ignored/x", Command: "sh"})
	vs, dropped := r.violations()
	if len(vs) != 2 || dropped != 0 {
		t.Fatalf("recorded %d, dropped %d: %+v", len(vs), dropped, vs)
	}
	for _, v := range vs {
		if v.Run != "run-1" || v.Workspace != "/w" || v.Time.IsZero() {
			t.Errorf("not stamped: %+v", v)
		}
	}
	for i := range maxRunViolations + 10 {
		r.add(Violation{Kind: KindWrite, Path: fmt.Sprintf("/f%d", i)})
	}
	vs, dropped = r.violations()
	if len(vs) != maxRunViolations || dropped != 12 {
		t.Errorf("recorded %d (want %d), dropped %d (want 12)", len(vs), maxRunViolations, dropped)
	}
	var nilRec *recorder
	nilRec.add(Violation{}) // a run without a recorder records nothing
}

func TestNotes(t *testing.T) {
	sock := Violation{Kind: KindSocket, Syscall: "socket", Args: []string{"AF_UNIX"}, Command: "id"}
	w := func(p string) Violation { return Violation{Kind: KindWrite, Path: p, Reason: "read-only"} }
	tests := []struct {
		name    string
		vs      []Violation
		dropped int
		want    []string
	}{
		{"none", nil, 0, nil},
		{"sockets are not noted", []Violation{sock}, 0, nil},
		{"same line once", []Violation{w("/a"), w("/a")}, 0, []string{"blocked write to /a (read-only)"}},
		{"the first few, then where the rest are", []Violation{w("/1"), w("/2"), w("/3"), w("/4"), w("/5"), w("/6"), sock, w("/7")}, 0,
			[]string{"blocked write to /1 (read-only)", "blocked write to /2 (read-only)", "blocked write to /3 (read-only)",
				"blocked write to /4 (read-only)", "blocked write to /5 (read-only)", "and 2 more refusals: cordon violations --run run-1"}},
		{"dropped ones count", []Violation{w("/1")}, 3,
			[]string{"blocked write to /1 (read-only)", "and 3 more refusals: cordon violations --run run-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, notes("run-1", tc.vs, tc.dropped)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "cordon")
	if vs, err := ReadViolations(dir, Filter{}); err != nil || vs != nil {
		t.Fatalf("empty store: %v, %v", vs, err)
	}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a := Violation{Time: t0, Run: "run-a", Kind: KindWrite, Path: "/etc/hosts"}
	b := Violation{Time: t0.Add(time.Hour), Run: "run-b", Kind: KindSyscall, Syscall: "mount"}
	if err := AppendViolations(dir, []Violation{a}); err != nil {
		t.Fatal(err)
	}
	if err := AppendViolations(dir, []Violation{b}); err != nil {
		t.Fatal(err)
	}
	// a line cut short (a full disk) is skipped
	f, err := os.OpenFile(filepath.Join(dir, storeFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-11-22T12:00:00Z","run":"run-c","ki`)
	f.Close()
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"run-a", "run-b"}},
		{Filter{Run: "run-b"}, []string{"run-b"}},
		{Filter{Since: t0.Add(time.Minute)}, []string{"run-b"}},
		{Filter{Since: t0.Add(2 * time.Hour)}, nil},
		{Filter{Kind: KindSyscall}, []string{"run-b"}},
		{Filter{Kind: KindCredential}, nil},
	} {
		vs, err := ReadViolations(dir, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var runs []string
		for _, v := range vs {
			runs = append(runs, v.Run)
		}
		if diff := cmp.Diff(tc.want, runs); diff != "" {
			t.Errorf("ReadViolations(%+v) (-want +got):\n%s", tc.f, diff)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("store directory: %v, %v", fi.Mode(), err)
	}
}

func TestStoreRotates(t *testing.T) {
	dir := t.TempDir()
	big := Violation{Run: "run-big", Kind: KindWrite, Path: "/" + strings.Repeat("x", 4000)}
	batch := make([]Violation, 100) // ~400 KB a batch
	for i := range batch {
		batch[i] = big
	}
	for range 25 {
		if err := AppendViolations(dir, batch); err != nil {
			t.Fatal(err)
		}
	}
	cur, err1 := os.Stat(filepath.Join(dir, storeFile))
	old, err2 := os.Stat(filepath.Join(dir, storeOld))
	if err1 != nil || err2 != nil {
		t.Fatalf("after rotation: %v, %v", err1, err2)
	}
	if cur.Size() > storeMax || old.Size() > storeMax {
		t.Errorf("store files of %d and %d bytes, bound %d", cur.Size(), old.Size(), storeMax)
	}
	vs, err := ReadViolations(dir, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(vs); n == 0 || n%100 != 0 || n >= 2500 {
		t.Errorf("read %d violations: whole batches of the last two generations expected", n)
	}
}

// TestStoreConcurrent appends from many writers at once, as concurrent
// runs do: every line arrives whole.
func TestStoreConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := range 20 {
		wg.Go(func() {
			for i := range 20 {
				v := Violation{Run: fmt.Sprintf("run-%d", w), Kind: KindWrite, Path: fmt.Sprintf("/p/%d/%s", i, strings.Repeat("y", 1000))}
				if err := AppendViolations(dir, []Violation{v, v}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	vs, err := ReadViolations(dir, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 800 {
		t.Errorf("read %d violations, want 800", len(vs))
	}
}
