//go:build linux && cgo

package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/runtime"
)

func TestClientStateRoot(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state, xdg string
		euid       int
		roRun      bool // /run cannot be written
		owned      bool
		want       string
		ok         bool
	}{
		{name: "CORDON_STATE_ROOT", state: "/s/root", euid: 1000, xdg: "/run/user/1000", owned: true, want: "/s/root", ok: true},
		{name: "CORDON_STATE_ROOT for root", state: "/s", euid: 0, want: "/s", ok: true},
		{name: "a relative CORDON_STATE_ROOT is ignored", state: "s", euid: 0, want: "/run/cordon", ok: true},
		{name: "root", euid: 0, xdg: "/run/user/0", owned: true, want: "/run/cordon", ok: true},
		{name: "root, /run read-only", euid: 0, roRun: true, want: "/tmp/cordon-0", ok: true},
		{name: "root, /run read-only, XDG_RUNTIME_DIR", euid: 0, roRun: true, xdg: "/run/user/0", owned: true, want: "/run/user/0/cordon", ok: true},
		{name: "XDG_RUNTIME_DIR", euid: 1000, xdg: "/run/user/1000", owned: true, want: "/run/user/1000/cordon", ok: true},
		{name: "XDG_RUNTIME_DIR not owned", euid: 1000, xdg: "/run/user/1000", want: "/tmp/cordon-1000", ok: true},
		{name: "no XDG_RUNTIME_DIR", euid: 1000, want: "/tmp/cordon-1000", ok: true},
		{name: "unclean: trailing slash", state: "/s/", euid: 0},
		{name: "unclean: dot dot", state: "/s/../t", euid: 0},
		{name: "unclean: dot", state: "/s/.", euid: 0},
		{name: "unclean: double slash", state: "//s", euid: 0},
		{name: "unclean XDG_RUNTIME_DIR", euid: 1000, xdg: "/run/user/1000/", owned: true},
		{name: "too long", state: "/" + strings.Repeat("a", 5000), euid: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := clientStateRoot(tc.state, tc.euid, !tc.roRun, tc.xdg, tc.owned)
			if ok != tc.ok || got != tc.want {
				t.Errorf("state root: got %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	// The C client's and Go's agree where both can be asked.
	for _, state := range []string{"", "/tmp/x-state", "relative"} {
		t.Setenv("CORDON_STATE_ROOT", state)
		xdg := os.Getenv("XDG_RUNTIME_DIR")
		st, err := os.Lstat(xdg)
		owned := xdg != "" && err == nil && st.IsDir() && st.Mode().Perm()&0o022 == 0 && ownedByMe(st)
		got, ok := clientStateRoot(state, os.Geteuid(), unix.Access("/run", unix.W_OK) == nil, xdg, owned)
		if !ok || got != runtime.StateRoot() {
			t.Errorf("CORDON_STATE_ROOT=%q: C client %q (%v), runtime.StateRoot %q", state, got, ok, runtime.StateRoot())
		}
	}
}

func TestClientAnswer(t *testing.T) {
	type answer struct {
		Type   string
		Status int
		Has    int
	}
	for _, tc := range []struct {
		name string
		line string
		want answer
	}{
		{"exit", string(Line(Exit{TypeExit, 0, nil})), answer{"exit", 0, 1}},
		{"exit with notes", string(Line(Exit{TypeExit, 137, []string{`a "note", with: "status":3`}})), answer{"exit", 137, 1}},
		{"error", string(Line(Error{TypeError, 125, "bad request: x"})), answer{"error", 125, 1}},
		{"started", string(Line(Started{TypeStarted, "run-1"})), answer{"started", 0, 0}},
		{"fallback", string(Line(Fallback{TypeFallback, "--detach"})), answer{"fallback", 0, 0}},
		{"a negative status", `{"type":"exit","status":-1}`, answer{"exit", -1, 1}},
		{"a type alone", `{"type":"exit"}`, answer{"exit", 0, 0}},
		{"another member first", `{"status":0,"type":"exit"}`, answer{Has: -1}},
		{"spaces", `{"type": "exit", "status": 0}`, answer{Has: -1}},
		{"no digits", `{"type":"exit","status":}`, answer{Has: -1}},
		{"a huge status", `{"type":"exit","status":99999999999}`, answer{Has: -1}},
		{"a fraction", `{"type":"exit","status":1.5}`, answer{Has: -1}},
		{"upper case type", `{"type":"EXIT","status":0}`, answer{Has: -1}},
		{"a long type", `{"type":"exitexitexitexitexit","status":0}`, answer{Has: -1}},
		{"truncated", `{"type":"exi`, answer{Has: -1}},
		{"trailing bytes", `{"type":"exit"}x`, answer{Has: -1}},
		{"empty", ``, answer{Has: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, st, has := clientAnswer([]byte(strings.TrimSuffix(tc.line, "\n")))
			if diff := cmp.Diff(tc.want, answer{typ, st, has}); diff != "" {
				t.Errorf("%s: (-want +got)\n%s", tc.line, diff)
			}
		})
	}
}

// FuzzClientAnswer: whatever the C client takes from a line is what a
// JSON parser reads in it, and it takes every exit and error the daemon
// writes.
func FuzzClientAnswer(f *testing.F) {
	for _, s := range []string{`{"type":"exit","status":0}`, `{"type":"started","id":"x"}`, `{"type":"exit","status":-12,"notes":["a"]}`, `{"type":"exit"`, `{"type":""}`} {
		f.Add([]byte(s), 0, "")
	}
	f.Fuzz(func(t *testing.T, line []byte, status int, note string) {
		typ, st, has := clientAnswer(line)
		var m struct {
			Type   *string `json:"type"`
			Status *int    `json:"status"`
		}
		// A member named twice is the last one's to a JSON parser; the
		// daemon names each once.
		once := strings.Count(string(line), `"type"`) == 1 && strings.Count(string(line), `"status"`) <= 1
		if has >= 0 && once && json.Unmarshal(line, &m) == nil {
			if m.Type == nil || *m.Type != typ {
				t.Fatalf("%q: the C client read type %q", line, typ)
			}
			if has == 1 && (m.Status == nil || *m.Status != st) {
				t.Fatalf("%q: the C client read status %d", line, st)
			}
		}
		status %= 1 << 20
		for _, l := range [][]byte{Line(Exit{TypeExit, status, []string{note}}), Line(Error{TypeError, status, note})} {
			l = l[:len(l)-1]
			typ, st, has := clientAnswer(l)
			if has != 1 || st != status || (typ != TypeExit && typ != TypeError) {
				t.Fatalf("%q: the C client read %q %d (%d)", l, typ, st, has)
			}
		}
	})
}

func TestClientRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"plain", Request{Args: []string{"--", "/bin/true"}, Cwd: "/w", Env: []string{"A=b", "PATH=/bin"}, Binary: "1:2:3:4"}},
		{"no environment, no binary", Request{Args: []string{"true"}, Cwd: "/"}},
		{"escapes", Request{Args: []string{"--", `a"b\c`, "tab\there", "nl\nx\r\x01\x1f\x7f"}, Cwd: `/w "q"`, Env: []string{"X=<&>"}}},
		{"not UTF-8", Request{Args: []string{"--", "\xff\xfe", "a\xc3", "é€😀"}, Cwd: "/\x80", Env: []string{"A=\xed\xa0\x80"}}},
		{"a hook", Request{Hook: HookClaude, Args: []string{"--workspace", "/w"}, Cwd: "/w", Env: []string{"A=b"}, Binary: "1:2:3:4"}},
		{"a hook without flags", Request{Hook: HookClaude, Cwd: "/w"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkClientRequest(t, tc.req)
		})
	}
}

// checkClientRequest checks that the daemon reads the C client's request
// as it reads serve.Call's.
func checkClientRequest(t *testing.T, req Request) {
	t.Helper()
	line := clientRequest(req.Args, req.Cwd, req.Env, req.Binary, req.Hook)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		t.Fatalf("request %q: no newline at its end", line)
	}
	var got Request
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("request %q: %v", line, err)
	}
	req.Cordon = Version
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var want Request
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("request %q: (-serve.Call's +the C client's)\n%s", line, diff)
	}
}

// FuzzClientRequest: the daemon reads the C client's request as it reads
// serve.Call's, whatever the bytes (C strings hold no NUL).
func FuzzClientRequest(f *testing.F) {
	f.Add("true", "/w", "A=b", "\xff\"\\\n")
	f.Fuzz(func(t *testing.T, arg, cwd, env, binary string) {
		for _, s := range []*string{&arg, &cwd, &env, &binary} {
			*s = strings.ReplaceAll(*s, "\x00", "")
		}
		checkClientRequest(t, Request{Args: []string{"--", arg}, Cwd: cwd, Env: []string{env}, Binary: binary})
	})
}

// TestClientIdentity: the C client names the working directory as
// os.Getwd does ($PWD when it is the same directory, through a symlink
// too) and its binary as BinaryID does.
func TestClientIdentity(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := BinaryID(exe)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := clientBinary(); !ok || got != want {
		t.Errorf("binary: C client %q (%v), BinaryID %q", got, ok, want)
	}

	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(real)
	for _, pwd := range []string{link, real, dir, "relative", ""} {
		t.Setenv("PWD", pwd)
		want, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		if got := clientCwd(); got != want {
			t.Errorf("PWD=%q: C client %q, os.Getwd %q", pwd, got, want)
		}
	}
}
