//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cordon.dev/cordon/integration/claudecode"
)

// The end-to-end tests drive the real Claude Code (the release pinned in
// claudecode.Version, installed from npm once per machine) against a
// stand-in for the Messages API that plays a script of tool calls, with
// cordon's hook installed by cordon install claude in a fresh home. Each
// call's effect is judged on the host and from the tool_result Claude Code
// sent back to the model.

var (
	claudeOnce sync.Once
	claudeBin  string
	claudeErr  error
)

// needClaude: Claude Code, installed into the machine's cache (about 370
// MB from npm the first time).
func needClaude() need {
	return func() string {
		claudeOnce.Do(func() { claudeBin, claudeErr = claudecode.Install(claudecode.CacheDir()) })
		if claudeErr != nil {
			return fmt.Sprintf("Claude Code %s (%v)", claudecode.Version, claudeErr)
		}
		return ""
	}
}

// claudeTimeout bounds one session: generous, for a loaded machine.
const claudeTimeout = 5 * time.Minute

// claudeBox is a box whose home has cordon's hook installed by cordon
// install claude, with a state root of its own: the cordon serve that the
// hook's runs start there (they pass --serve) is the test's, and ends
// with it.
func claudeBox(t *testing.T, c *caller) *serveBox {
	t.Helper()
	requires(t, needClaude())
	b := newBox(t, c)
	root, env := privateState(t, b)
	must(t, os.Mkdir(filepath.Join(b.dir, "tmp"), 0o755))
	b.chown()
	t.Cleanup(func() {
		daemon := func(p proc) bool { return p.env(boxEnv) == b.token && strings.Contains(p.cmdline(), " serve ") }
		for _, p := range procsWhere(daemon) {
			_ = syscall.Kill(p.pid, syscall.SIGTERM)
		}
		deadline := time.Now().Add(15 * time.Second)
		for len(procsWhere(daemon)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	})
	if r := b.cordon(runSpec{}, "install", "claude"); r.code != 0 || !strings.Contains(r.stdout, "installed the hook") {
		t.Fatalf("cordon install claude:\n%s", r)
	}
	return &serveBox{box: b, root: root, stateEnv: env}
}

// session is what one Claude Code session did.
type session struct {
	t       *testing.T
	results []claudecode.Result
	texts   []string
	out     string // its stream-json events and stderr
	server  *claudecode.Server
}

// claude runs a headless Claude Code session in the box's workspace as
// the box's caller, with the permission mode and the script of tool
// calls, and waits for it.
func (b *serveBox) claude(mode string, script ...claudecode.Call) *session {
	b.t.Helper()
	srv, err := claudecode.NewServer(script)
	must(b.t, err)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), claudeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin, claudecode.Args("Do the task.", "--permission-mode", mode)...)
	cmd.Dir = b.ws
	cmd.Env = b.env(append(claudecode.Env(b.home, srv.URL, sandboxPath), "TMPDIR="+filepath.Join(b.dir, "tmp"), b.stateEnv)...)
	// Its own process group: what it leaves behind at its timeout goes
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = runLocked(cmd)
	s := &session{t: b.t, results: srv.Results(), texts: srv.Texts(), out: out.String(), server: srv}
	if ctx.Err() != nil {
		b.t.Fatalf("Claude Code did not end within %v:\n%s", claudeTimeout, s)
	}
	if err != nil {
		b.t.Fatalf("Claude Code: %v\n%s", err, s)
	}
	if !strings.Contains(s.out, claudecode.Final) {
		b.t.Errorf("Claude Code did not end with the stand-in's last answer:\n%s", s)
	}
	return s
}

func (s *session) String() string {
	var b strings.Builder
	for i, r := range s.results {
		in, _ := json.Marshal(r.Call.Input)
		fmt.Fprintf(&b, "--- call %d: %s %s (is_error %v)\n%s\n", i, r.Call.Tool, in, r.IsError, clip(r.Text))
	}
	fmt.Fprintf(&b, "--- requests the stand-in did not know: %q\n--- Claude Code said:\n%s", s.server.Odd(), clip(s.out))
	return b.String()
}

// result is what Claude Code returned to the model for call i.
func (s *session) result(i int) claudecode.Result {
	s.t.Helper()
	if i >= len(s.results) {
		s.t.Fatalf("no result for call %d (only %d)\n%s", i, len(s.results), s)
	}
	return s.results[i]
}

// want checks that call i's result holds each of the texts, and its
// is_error.
func (s *session) want(i int, isError bool, texts ...string) {
	s.t.Helper()
	r := s.result(i)
	if r.IsError != isError {
		s.t.Errorf("call %d (%v): is_error %v, want %v:\n%s", i, r.Call.Input["command"], r.IsError, isError, r.Text)
	}
	for _, want := range texts {
		if !strings.Contains(r.Text, want) {
			s.t.Errorf("call %d (%v): the result lacks %q:\n%s", i, r.Call.Input["command"], want, r.Text)
		}
	}
}

// lacks checks that no result of the session holds text.
func (s *session) lacks(text string) {
	s.t.Helper()
	for i, r := range s.results {
		if strings.Contains(r.Text, text) {
			s.t.Errorf("call %d's result holds %q:\n%s", i, text, r.Text)
		}
	}
}

func bash(command string, more ...any) claudecode.Call {
	in := map[string]any{"command": command, "description": "Run it"}
	for i := 0; i+1 < len(more); i += 2 {
		in[more[i].(string)] = more[i+1]
	}
	return claudecode.Call{Tool: "Bash", Input: in}
}

// TestClaudeCodeWork: ordinary work in a Claude Code session with cordon's
// hook: every Bash call runs in cordon's sandbox (CORDON_SANDBOX=1, cordon's
// init as PID 1; Claude Code's own sandbox off), the first one cold, which
// starts cordon serve, and the later ones in sandboxes it made ahead; an
// edit, a build and a commit land in the workspace, a cd carries over to
// the next call, a failing command's status and output come back, output
// larger than Claude Code keeps comes through whole, and the file tools go
// through cordon's decision.
func TestClaudeCodeWork(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		requires(t, needTool("make"), needTool("cc"), needTool("git"))
		b := claudeBox(t, c)
		must(t, os.WriteFile(filepath.Join(b.ws, "hello.c"), []byte("#include <stdio.h>\nint main(void) { puts(\"hello, world\"); return 0; }\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(b.ws, "Makefile"), []byte("hello: hello.c\n\tcc -o hello hello.c\n"), 0o644))
		must(t, os.Mkdir(filepath.Join(b.ws, "sub"), 0o755))
		b.chown()
		doctor := b.cordon(runSpec{}, "doctor", "--json")
		var d struct {
			ClaudeCode struct {
				Installed bool `json:"installed"`
				Lines     []struct{ Status, Name, Detail string }
			} `json:"claudeCode"`
		}
		if err := json.Unmarshal([]byte(doctor.stdout), &d); err != nil || !d.ClaudeCode.Installed {
			t.Errorf("cordon doctor does not see the hook installed (%v):\n%s", err, doctor)
		}
		for _, l := range d.ClaudeCode.Lines {
			if strings.Contains(l.Detail, "sandbox.enabled") {
				t.Errorf("cordon doctor: %s %s", l.Name, l.Detail)
			}
		}

		hello := filepath.Join(b.ws, "hello.c")
		s := b.claude("acceptEdits",
			bash(`echo "sandbox=$CORDON_SANDBOX"; tr '\0' ' ' </proc/1/cmdline; echo`),
			bash(`sed -i 's/world/cordon/' hello.c && make && ./hello`),
			bash(`git init -q && git add -A && git -c user.name=Test -c user.email=test@example.com commit -qm first && git log --format=%s`),
			bash(`cd sub && pwd`),
			bash(`pwd && echo data > f.txt`),
			bash(`tr '\0' ' ' </proc/1/cmdline; echo; echo out; echo err >&2; exit 3`),
			bash(`seq 1 300000`),
			claudecode.Call{Tool: "Read", Input: map[string]any{"file_path": hello}},
			claudecode.Call{Tool: "Edit", Input: map[string]any{"file_path": hello, "old_string": "hello, cordon", "new_string": "hello, claude"}},
			claudecode.Call{Tool: "Read", Input: map[string]any{"file_path": filepath.Join(b.home, "outside.txt")}},
			claudecode.Call{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(b.home, "outside.txt"), "content": "pwned\n"}},
		)
		s.want(0, false, "sandbox=1", "/.cordon/cordon sandbox-init")
		// No daemon before the first call: it ran cold and started one,
		// whose sandboxes (their inits wait for a --command-fd) the later
		// calls get.
		if r := s.result(0); strings.Contains(r.Text, "--command-fd=") {
			t.Errorf("the first call ran in a sandbox made ahead, with no daemon started yet:\n%s", r.Text)
		}
		s.want(1, false, "cc -o hello hello.c", "hello, cordon")
		s.want(2, false, "first")
		if got := readFile(filepath.Join(b.ws, ".git", "logs", "HEAD")); !strings.Contains(got, "commit (initial): first") {
			t.Errorf("no commit in the workspace's repository: %q", got)
		}
		if !exists(filepath.Join(b.ws, "hello")) {
			t.Error("the build left no program in the workspace")
		}
		s.want(3, false, filepath.Join(b.ws, "sub"))
		s.want(4, false, filepath.Join(b.ws, "sub"))
		if got := readFile(filepath.Join(b.ws, "sub", "f.txt")); got != "data\n" {
			t.Errorf("sub/f.txt = %q: the cd did not carry over", got)
		}
		s.want(5, true, "Exit code 3", "out", "err", "/.cordon/cordon sandbox-init", "--command-fd=")
		// Claude Code keeps a preview and saves the rest in a file of its
		// own: all of it came through.
		s.want(6, false, "Output too large", "\n1\n2\n3\n")
		if m := regexp.MustCompile(`saved to: (\S+)`).FindStringSubmatch(s.result(6).Text); m == nil {
			t.Errorf("no saved output named:\n%s", clip(s.result(6).Text))
		} else if got := readFile(m[1]); !strings.HasSuffix(got, "\n299999\n300000\n") || len(lines(got)) != 300000 {
			t.Errorf("the saved output %s has %d lines, ends %q", m[1], len(lines(got)), got[max(0, len(got)-30):])
		}
		s.want(7, false, "hello, cordon")
		s.want(8, false)
		if got := readFile(hello); !strings.Contains(got, "hello, claude") {
			t.Errorf("hello.c after the Edit call: %q", got)
		}
		s.want(9, false, "original")
		s.want(10, true, "cordon: ")
		if got := readFile(filepath.Join(b.home, "outside.txt")); got != "original\n" {
			t.Errorf("outside.txt = %q: written outside the workspace", got)
		}
	})
}

// TestClaudeCodeRules: deny and ask rules of cordon's own settings (which
// Claude Code does not read) stop a Bash call before it runs, as Claude
// Code reports a hook's denial and, in -p mode, a question it cannot ask:
// an error result with cordon's reason.
func TestClaudeCodeRules(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := claudeBox(t, c)
		must(t, os.MkdirAll(filepath.Join(b.ws, ".cordon"), 0o755))
		must(t, os.WriteFile(filepath.Join(b.ws, ".cordon", "settings.json"),
			[]byte(`{"permissions": {"deny": ["Bash(curl:*)"], "ask": ["Bash(git push:*)"]}}`), 0o644))
		b.chown()
		s := b.claude("acceptEdits",
			bash(`touch denied.txt; curl -s http://example.com`),
			bash(`touch asked.txt; git push origin main`),
			bash(`echo "still $CORDON_SANDBOX"`),
		)
		s.want(0, true, "cordon: denied by Bash(curl:*)")
		s.want(1, true, "cordon: asked by Bash(git push:*)")
		s.want(2, false, "still 1")
		for _, f := range []string{"denied.txt", "asked.txt"} {
			if exists(filepath.Join(b.ws, f)) {
				t.Errorf("%s exists: the call ran", f)
			}
		}
	})
}

// TestClaudeCodeBackground: a run_in_background Bash call and a Monitor run
// in cordon's sandbox and report as they do without it; a call that
// outlives Claude Code's timeout is moved to the background, and nothing
// of it is left once the session is over.
func TestClaudeCodeBackground(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := claudeBox(t, c)
		sleep := uniqueSleep(20)
		s := b.claude("acceptEdits",
			bash(`echo "bg-$CORDON_SANDBOX" > bg.txt; for i in 1 2 3 4 5; do sleep 0.2; done; echo done >> bg.txt`, "run_in_background", true),
			claudecode.Call{Tool: "Monitor", Input: map[string]any{
				"description": "Watch it", "timeout_ms": 60000,
				"command": `echo "monitor-$CORDON_SANDBOX"; sleep 1; echo second`,
			}},
			bash(`for i in $(seq 300); do grep -q done bg.txt 2>/dev/null && break; sleep 0.1; done; cat bg.txt`),
			bash(`echo started; sleep `+sleep+`; echo never`, "timeout", 2000),
		)
		s.want(0, false, "running in background")
		s.want(1, false, "Monitor started")
		s.want(2, false, "bg-1\ndone")
		s.want(3, false, "started", "did not complete within its 2s timeout")
		s.lacks("never")
		if !s.saw("monitor-1") {
			t.Errorf("no event monitor-1 from the Monitor came to the model; texts:\n%q", s.texts)
		}
		if n := waitProcs(15*time.Second, func(n int) bool { return n == 0 }, "sleep "+sleep); n != 0 {
			t.Errorf("%d processes of the timed-out call are left", n)
		}
	})
}

// saw reports whether anything Claude Code sent the model holds text: a
// tool result, or a notification.
func (s *session) saw(text string) bool {
	for _, r := range s.results {
		if strings.Contains(r.Text, text) {
			return true
		}
	}
	for _, t := range s.texts {
		if strings.Contains(t, text) {
			return true
		}
	}
	return false
}

// TestClaudeCodeContained: what the README promises holds for a command
// Claude Code runs through cordon's hook — as root in acceptEdits, where
// cordon's decision lets a script of the workspace run, and as an ordinary
// user in bypassPermissions, where it lets everything run and only the
// sandbox holds: no write outside the workspace, no credential read, no
// secret of the environment, no network (a server on the host's loopback
// sees no connection), no host process seen.
func TestClaudeCodeContained(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := claudeBox(t, c)
		etc := "/etc/cordon-it-" + b.token
		t.Cleanup(func() { os.Remove(etc) })
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		must(t, err)
		defer ln.Close()
		var reached atomic.Int32
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				reached.Add(1)
				conn.Close()
			}
		}()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		script := `echo "sandbox=$CORDON_SANDBOX"
echo pwned > ~/outside.txt 2>/dev/null && echo WROTE-OUTSIDE
touch ` + etc + ` 2>/dev/null && echo WROTE-ETC
cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc 2>/dev/null
echo "key=$ANTHROPIC_API_KEY"
(exec 3<>/dev/tcp/127.0.0.1/` + port + `) 2>/dev/null && echo REACHED-HOST || echo no-network
echo "processes=$(ls /proc | grep -c '^[0-9]')"
`
		must(t, os.WriteFile(filepath.Join(b.ws, "escape.sh"), []byte(script), 0o755))
		b.chown()
		mode, calls := "acceptEdits", []claudecode.Call{bash(`bash ./escape.sh`)}
		if c.uid != 0 {
			// Claude Code refuses bypassPermissions as root.
			mode = "bypassPermissions"
			calls = append(calls, bash(`echo pwned > ~/outside.txt; cat ~/.ssh/id_ed25519; touch `+etc+`; echo "sandbox=$CORDON_SANDBOX"`))
		}
		s := b.claude(mode, calls...)
		s.want(0, false, "sandbox=1", "key=\n", "no-network")
		if m := regexp.MustCompile(`processes=(\d+)`).FindStringSubmatch(s.result(0).Text); m == nil || len(m[1]) > 1 {
			t.Errorf("the command saw the host's processes:\n%s", s.result(0).Text)
		}
		if len(calls) > 1 {
			s.want(1, false, "Read-only file system", "sandbox=1")
		}
		for _, escaped := range []string{"WROTE-OUTSIDE", "WROTE-ETC", "REACHED-HOST", "secret-", "sk-ant-"} {
			s.lacks(escaped)
		}
		if got := readFile(filepath.Join(b.home, "outside.txt")); got != "original\n" {
			t.Errorf("outside.txt = %q: written from the sandbox", got)
		}
		if exists(etc) {
			t.Errorf("%s was made from the sandbox", etc)
		}
		if n := reached.Load(); n > 0 {
			t.Errorf("the host's loopback was reached %d times from the sandbox", n)
		}
	})
}
