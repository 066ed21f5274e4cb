package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		ok   bool
	}{
		{"valid", Request{Cordon: 1, Args: []string{"--", "true"}, Cwd: "/", Env: []string{"A=b"}}, true},
		{"another version", Request{Cordon: 2, Args: []string{"--", "true"}, Cwd: "/"}, false},
		{"no arguments", Request{Cordon: 1, Cwd: "/"}, false},
		{"relative cwd", Request{Cordon: 1, Args: []string{"true"}, Cwd: "here"}, false},
		{"env without =", Request{Cordon: 1, Args: []string{"true"}, Cwd: "/", Env: []string{"A"}}, false},
		{"NUL in an env entry", Request{Cordon: 1, Args: []string{"true"}, Cwd: "/", Env: []string{"A=1\x00LD_PRELOAD=/x.so"}}, false},
		{"NUL in an argument", Request{Cordon: 1, Args: []string{"--", "echo", "a\x00b"}, Cwd: "/"}, false},
		{"NUL in the cwd", Request{Cordon: 1, Args: []string{"true"}, Cwd: "/tmp\x00/etc"}, false},
		{"empty value", Request{Cordon: 1, Args: []string{"true"}, Cwd: "/", Env: []string{"A="}}, true},
		{"a hook without flags", Request{Cordon: 1, Hook: HookClaude, Cwd: "/"}, true},
		{"another hook", Request{Cordon: 1, Hook: "codex", Args: []string{"--", "true"}, Cwd: "/"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.req.Check(); (err == nil) != tc.ok {
				t.Errorf("Check() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// A client without a JSON parser finds type and status first on a line.
func TestLineOrder(t *testing.T) {
	for _, m := range []any{Exit{TypeExit, 3, []string{"x"}}, Error{TypeError, 125, "m"}} {
		if got := string(Line(m)); !strings.HasPrefix(got, `{"type":`) || !strings.Contains(got, `","status":`) || !strings.HasSuffix(got, "\n") {
			t.Errorf("Line(%#v) = %q", m, got)
		}
	}
}

// A socket deeper than an address holds is still listened on and reached.
func TestLongSocketPath(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 2*maxSocketPath {
		dir = filepath.Join(dir, "a-rather-long-directory-name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, SocketName)
	ln, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the socket is not at its path: %v", err)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
