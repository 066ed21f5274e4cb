package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
)

func TestSeatbeltEnv(t *testing.T) {
	p, err := policy.Default("/Users/u/proj", "/Users/u")
	if err != nil {
		t.Fatal(err)
	}
	r := darwin.Request{TempDir: "/private/var/folders/x/T/cordon-run-1", HTTPProxyPort: 50001, SOCKSProxyPort: 50002}
	caller := []string{"PATH=/usr/bin:/bin", "HTTPS_PROXY=http://corp:8080", "GITHUB_TOKEN=x", "no_proxy=corp", "LANG=C"}

	env := seatbeltEnv(p, r, caller, false, "/usr/local/bin/cordon")
	for _, want := range []string{"PATH=/usr/bin:/bin", "LANG=C", "CORDON_SANDBOX=1", "TMPDIR=" + r.TempDir, "HTTPS_PROXY=http://corp:8080"} {
		if !slices.Contains(env, want) {
			t.Errorf("without the proxy: %s missing from %q", want, env)
		}
	}
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GITHUB_TOKEN=") }) {
		t.Errorf("a secret reached the command: %q", env)
	}

	env = seatbeltEnv(p, r, caller, true, "/usr/local/bin/cordon")
	count := func(name string) (n int, last string) {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				n, last = n+1, v
			}
		}
		return n, last
	}
	for name, want := range map[string]string{
		"HTTPS_PROXY": "http://127.0.0.1:50001",
		"no_proxy":    "localhost,127.0.0.1,::1",
		"ALL_PROXY":   "http://127.0.0.1:50001",
		"SOCKS_PROXY": "socks5h://127.0.0.1:50002",
	} {
		if n, got := count(name); n != 1 || got != want {
			t.Errorf("%s: %d times, %q; want once, %q", name, n, got, want)
		}
	}
	if n, got := count("GIT_SSH_COMMAND"); n != 1 || !strings.Contains(got, "/usr/local/bin/cordon proxy-connect --proxy 127.0.0.1:50001") {
		t.Errorf("GIT_SSH_COMMAND: %d, %q", n, got)
	}
}

// TestSeatbeltKinds checks that the darwin package's kinds are the
// runtime's: they end up in the same store.
func TestSeatbeltKinds(t *testing.T) {
	for d, r := range map[string]string{
		darwin.KindWrite: runtime.KindWrite, darwin.KindRead: runtime.KindRead, darwin.KindNetwork: runtime.KindNetwork,
		darwin.KindSocket: runtime.KindSocket, darwin.KindOperation: runtime.KindOperation,
	} {
		if d != r {
			t.Errorf("darwin kind %q, runtime kind %q", d, r)
		}
	}
}

func TestSeatbeltViolation(t *testing.T) {
	p, err := policy.Default("/Users/u/proj", "/Users/u")
	if err != nil {
		t.Fatal(err)
	}
	e, err := darwin.NewExplainer(p, darwin.Request{Cwd: "/Users/u/proj", Tag: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	line := `{"timestamp":"2026-03-04 05:06:07.000000+0000","processID":0,` +
		`"senderImagePath":"/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox",` +
		`"eventMessage":"Sandbox: sh(4242) deny(1) file-write-create /private/etc/hosts\ncordon:run-1"}`
	v, ok := darwin.ParseViolation([]byte(line))
	if !ok {
		t.Fatal("the line does not parse")
	}
	got := seatbeltViolation(v, e.Explain(v))
	want := runtime.Violation{
		Time: time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("", 0)), Kind: runtime.KindWrite, Command: "sh", PID: 4242,
		Syscall: "file-write-create", Path: "/private/etc/hosts",
		Reason: "read-only outside the workspace", Hint: "allow with --allow-write /private/etc",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := got.Summary(); s != "blocked write to /private/etc/hosts by sh (read-only outside the workspace; allow with --allow-write /private/etc)" {
		t.Errorf("Summary = %s", s)
	}
}

func TestLogFlush(t *testing.T) {
	if logFlush(1) <= logFlush(0) {
		t.Error("a failed command waits longer for its denials")
	}
	if logFlush(0) > 50*time.Millisecond {
		t.Error("a command that worked pays little for the wait")
	}
}
