//go:build linux

package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// whoRuns is a script that says whether it runs in a pooled sandbox: the
// command line of a pooled sandbox's init ends in "--" (its command came
// later, on --command-fd), a cold one's in the command.
const whoRuns = `if [ "$(tr '\0' '\n' </proc/1/cmdline | tail -n 1)" = "--" ]; then echo warm; else echo cold; fi`

// serveBox is a box whose settings enable cordon serve, with a state root
// of its own so that its daemon is the test's alone.
type serveBox struct {
	*box
	root, stateEnv string
	// daemonEnv is more of the daemon's environment
	daemonEnv []string
}

func newServeBox(t *testing.T, c *caller) *serveBox {
	t.Helper()
	b := newBox(t, c)
	root, env := privateState(t, b)
	sb := &serveBox{box: b, root: root, stateEnv: env}
	sb.settings(`{"cordon": {"serve": true}}`)
	return sb
}

// settings writes the box's user settings.
func (sb *serveBox) settings(content string) {
	sb.t.Helper()
	p := filepath.Join(sb.home, ".config", "cordon", "settings.json")
	must(sb.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(sb.t, os.WriteFile(p, []byte(content+"\n"), 0o644))
	sb.chown()
}

// serve starts cordon serve as the box's caller and waits for its socket;
// the test's cleanup ends it.
func (sb *serveBox) serve(args ...string) *os.Process {
	sb.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := sb.command(ctx, runSpec{env: append([]string{sb.stateEnv}, sb.daemonEnv...)}, append([]string{"serve"}, args...)...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	// From a locked thread: the daemon's parent-death signal follows the
	// thread that started it (see startLocked).
	waited, err := startLocked(cmd)
	if err != nil {
		cancel()
		sb.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		<-waited
		close(done)
	}()
	sb.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cancel()
			<-done
		}
		if sb.t.Failed() {
			sb.t.Logf("cordon serve said:\n%s", log.String())
		}
	})
	sb.waitSocket(done)
	return cmd.Process
}

// waitSocket waits until the daemon accepts connections.
func (sb *serveBox) waitSocket(done <-chan struct{}) {
	sb.t.Helper()
	sock := filepath.Join(sb.root, "serve.sock")
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := dialSocket(sock); err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			sb.t.Fatal("cordon serve ended before it listened")
		default:
		}
		if time.Now().After(deadline) {
			sb.t.Fatalf("cordon serve: no socket at %s after 15s", sock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dialSocket connects to a unix socket whose path may be longer than an
// address holds, through a descriptor of its directory.
func dialSocket(path string) (net.Conn, error) {
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return net.Dial("unix", "/proc/self/fd/"+strconv.Itoa(int(dir.Fd()))+"/"+filepath.Base(path))
}

// run runs cordon run in the box with its private state root.
func (sb *serveBox) run(s runSpec) result {
	sb.t.Helper()
	s.env = append(s.env, sb.stateEnv)
	return sb.runSpec(s)
}

// TestServe: with cordon serve running and enabled in the settings, cordon
// run hands its command to the daemon, which runs it in a fresh sandbox of
// its own: exit status, signals, stdio and the policy are a cold run's,
// nothing is shared between two commands, a settings change takes effect
// on the next command, and a daemon that is gone means a cold run.
func TestServe(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("fresh sandbox per command", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			sb.serve("--pool", "2")
			// The first leaves a file in /tmp, a process, an exported
			// variable and a variable of its caller's.
			first := sb.run(runSpec{env: []string{"CORDON_IT_FIRST=only-first"}, args: []string{"sh", "-c", whoRuns + `
				echo left > /tmp/left-behind; export CORDON_IT_EXPORTED=1
				sleep 3127 & echo "pid $!"; echo "env $CORDON_IT_FIRST"`}})
			if first.code != 0 || !strings.HasPrefix(first.stdout, "warm\n") || !strings.Contains(first.stdout, "env only-first") {
				t.Fatalf("the first command did not run warm:\n%s", first)
			}
			second := sb.run(runSpec{args: []string{"sh", "-c", whoRuns + `
				ls -A /tmp; echo "env ${CORDON_IT_FIRST:-unset} ${CORDON_IT_EXPORTED:-unset}"
				for p in /proc/[0-9]*; do tr '\0' ' ' <$p/cmdline; echo; done`}})
			if second.code != 0 || !strings.HasPrefix(second.stdout, "warm\n") {
				t.Fatalf("the second command did not run warm:\n%s", second)
			}
			for _, leak := range []string{"left-behind", "sleep 3127", "only-first", "env unset unset"} {
				seen := strings.Contains(second.stdout, leak)
				if want := leak == "env unset unset"; seen != want {
					t.Errorf("the second command sees %q: %v, want %v\n%s", leak, seen, want, second)
				}
			}
			if ps := sb.sandboxProcs(); len(ps) != 0 {
				t.Errorf("%d processes of the first command outlived it: %v", len(ps), ps)
			}
		})
		t.Run("a cold run's status, stdio and signals", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			sb.serve()
			for _, tc := range []struct {
				name, script string
				stdin        string
				code         int
				stdout       string
			}{
				{"exit status", "exit 7", "", 7, ""},
				{"killed by a signal", "kill -TERM $$", "", 143, ""},
				{"not found", "exec /no/such/command", "", 127, ""},
				{"stdin to stdout", "cat; echo done", "through the daemon\n", 0, "through the daemon\ndone\n"},
			} {
				var res [2]result
				for i, mode := range []string{"1", "0"} {
					spec := runSpec{env: []string{"CORDON_SERVE=" + mode}, args: []string{"sh", "-c", tc.script}}
					if tc.stdin != "" {
						spec.stdin = strings.NewReader(tc.stdin)
					}
					res[i] = sb.run(spec)
				}
				warm, cold := res[0], res[1]
				if warm.code != tc.code || cold.code != tc.code || warm.stdout != tc.stdout || cold.stdout != tc.stdout {
					t.Errorf("%s: want exit %d and stdout %q, warm and cold:\nwarm: %s\ncold: %s", tc.name, tc.code, tc.stdout, warm, cold)
				}
			}
			// A command that cannot be executed: the status and the
			// message of a cold run (the pooled sandbox's command process
			// says them itself).
			for _, tc := range []struct {
				args []string
				code int
				msg  string
			}{
				{[]string{"cordon-it-no-such-command"}, 127, "cordon: cordon-it-no-such-command: command not found"},
				{[]string{"/no/such/command"}, 127, "cordon: /no/such/command: no such file or directory"},
				{[]string{"/etc/passwd"}, 126, "cordon: /etc/passwd: permission denied"},
			} {
				for _, mode := range []string{"1", "0"} {
					r := sb.run(runSpec{env: []string{"CORDON_SERVE=" + mode}, args: tc.args})
					if r.code != tc.code || !strings.Contains(strings.ToLower(r.stderr), tc.msg) {
						t.Errorf("CORDON_SERVE=%s %q: want exit %d and %q:\n%s", mode, tc.args, tc.code, tc.msg, r)
					}
				}
			}
			// A signal to cordon run reaches the command.
			r := sb.start(runSpec{env: []string{sb.stateEnv}, args: []string{"sh", "-c",
				whoRuns + `; trap 'echo got TERM; exit 5' TERM; echo ready; while :; do sleep 0.05; done`}})
			r.waitStdout("ready")
			if !strings.HasPrefix(r.stdout.String(), "warm\n") {
				t.Fatalf("the command did not run warm: %q", r.stdout.String())
			}
			must(t, r.cmd.Process.Signal(syscall.SIGTERM))
			if res := r.wait(); res.code != 5 || !strings.Contains(res.stdout, "got TERM") {
				t.Errorf("SIGTERM to cordon run: want the command's trap and exit 5:\n%s", res)
			}
		})
		t.Run("job control and an untrapped signal", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			sb.serve()
			// SIGTSTP stops the command, then cordon run; SIGCONT resumes
			// both, as in a cold run.
			r := sb.start(runSpec{env: []string{sb.stateEnv}, args: []string{"sh", "-c",
				whoRuns + `; i=0; while [ $i -lt 60 ]; do echo "tick $i"; i=$((i+1)); sleep 0.05; done; echo done`}})
			r.waitStdout("tick 2\n")
			if !strings.HasPrefix(r.stdout.String(), "warm\n") {
				t.Fatalf("the command did not run warm: %q", r.stdout.String())
			}
			must(t, r.cmd.Process.Signal(syscall.SIGTSTP))
			waitState(t, r.cmd.Process.Pid, 'T')
			// Stopped: nothing more comes while it is.
			time.Sleep(200 * time.Millisecond)
			before := r.stdout.String()
			time.Sleep(300 * time.Millisecond)
			if after := r.stdout.String(); after != before {
				t.Errorf("the command went on while cordon run was stopped: %q, then %q", before, after)
			}
			must(t, r.cmd.Process.Signal(syscall.SIGCONT))
			if res := r.waitFor(20 * time.Second); res.code != 0 || !strings.HasSuffix(res.stdout, "tick 59\ndone\n") {
				t.Errorf("after SIGCONT: want the command to finish, exit 0:\n%s", res)
			}
			// An untrapped SIGINT ends the command: 128+2.
			r = sb.start(runSpec{env: []string{sb.stateEnv}, args: []string{"sh", "-c", whoRuns + "; echo ready; exec sleep " + uniqueSleep(300)}})
			r.waitStdout("ready\n")
			if !strings.HasPrefix(r.stdout.String(), "warm\n") {
				t.Fatalf("the command did not run warm: %q", r.stdout.String())
			}
			must(t, r.cmd.Process.Signal(syscall.SIGINT))
			if res := r.waitFor(10 * time.Second); res.code != 130 {
				t.Errorf("SIGINT: want exit 130:\n%s", res)
			}
		})
		t.Run("settings take effect on the next command", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			sb.serve()
			// Readable until the settings hide it.
			outside := filepath.Join(sb.home, "outside.txt")
			read := runSpec{args: []string{"sh", "-c", whoRuns + "; cat " + outside}}
			if r := sb.run(read); r.code != 0 || r.stdout != "warm\noriginal\n" {
				t.Fatalf("before the change:\n%s", r)
			}
			sb.settings(`{"cordon": {"serve": true}, "filesystem": {"denyRead": ["` + outside + `"]}}`)
			// (or cold, when the daemon said its sandbox could not be
			// made, as it may under load; the file hidden either way)
			r := sb.run(read)
			fellBack := r.stdout == "cold\n" && strings.Contains(r.stderr, "cordon serve could not make a sandbox")
			if r.stdout != "warm\n" && !fellBack || r.code == 0 {
				t.Errorf("a denyRead added to the settings: want the file hidden from the next command, warm:\n%s", r)
			}
			if fellBack {
				t.Logf("the daemon could not make the sandbox; the client ran cold:\n%s", r)
			}
			sb.settings(`{"cordon": {"serve": false}}`)
			if r := sb.run(read); r.code != 0 || r.stdout != "cold\noriginal\n" {
				t.Errorf("serve turned off in the settings: want a cold run:\n%s", r)
			}
		})
		t.Run("a settings edit of the same size and time takes effect", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			sb.serve()
			// Two files; the settings hide one, then the other: the edit
			// keeps the file's size and modification time.
			a, b := filepath.Join(sb.home, "a.txt"), filepath.Join(sb.home, "b.txt")
			for _, f := range []string{a, b} {
				must(t, os.WriteFile(f, []byte("readable\n"), 0o644))
			}
			sb.chown()
			hide := func(p string) string { return `{"cordon": {"serve": true}, "filesystem": {"denyRead": ["` + p + `"]}}` }
			read := runSpec{args: []string{"sh", "-c", whoRuns + "; cat " + a + " >/dev/null && echo a; cat " + b + " >/dev/null && echo b; true"}}
			sb.settings(hide(a))
			if r := sb.run(read); r.code != 0 || r.stdout != "warm\nb\n" {
				t.Fatalf("a hidden: want only b read, warm:\n%s", r)
			}
			settings := filepath.Join(sb.home, ".config", "cordon", "settings.json")
			fi, err := os.Stat(settings)
			must(t, err)
			sb.settings(hide(b))
			must(t, os.Chtimes(settings, fi.ModTime(), fi.ModTime()))
			if now, err := os.Stat(settings); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
				t.Fatalf("the edit changed the file's size or time: %v", err)
			}
			if r := sb.run(read); r.code != 0 || r.stdout != "warm\na\n" {
				t.Errorf("b hidden by an edit of the same size and time: want only a read, warm:\n%s", r)
			}
		})
		t.Run("a file or directory replaced on the host since the sandbox was made", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			daemon := sb.serve("--pool", "2")
			// In the home, whose entries Landlock grants one by one (~/.ssh
			// is denied): rules that hold the inodes found when the
			// sandbox was made. git config --global rewrites ~/.gitconfig
			// by a rename; tools remove and make directories again.
			dir, file := filepath.Join(sb.home, "data"), filepath.Join(sb.home, "conf")
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("old\n"), 0o644))
			must(t, os.WriteFile(file, []byte("old\n"), 0o644))
			sb.chown()
			read := runSpec{args: []string{"sh", "-c", whoRuns + "; cat " + filepath.Join(dir, "f") + " " + file}}
			if r := sb.run(read); r.code != 0 || r.stdout != "warm\nold\nold\n" {
				t.Fatalf("before the change:\n%s", r)
			}
			waitReadyInits(t, daemon.Pid, 2)
			must(t, os.RemoveAll(dir))
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("new\n"), 0o644))
			must(t, os.WriteFile(file+".tmp", []byte("new\n"), 0o644))
			must(t, os.Rename(file+".tmp", file))
			sb.chown()
			if r := sb.run(read); r.code != 0 || r.stdout != "warm\nnew\nnew\n" {
				t.Errorf("after the host replaced them: want both read, as a cold run reads them:\n%s", r)
			}
		})
		t.Run("a working directory the sandbox cannot enter is named", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			sb.serve()
			// Inside a denied directory: the ready sandbox's process,
			// confined already, cannot enter it (a cold run's setup can).
			cwd := filepath.Join(sb.home, ".ssh", "sub")
			must(t, os.MkdirAll(cwd, 0o755))
			sb.chown()
			r := sb.run(runSpec{dir: cwd, flags: []string{"--workspace", sb.ws}, args: []string{"sh", "-c", "pwd"}})
			// 125 and the directory named (docs/protocol.md): a run that
			// succeeded went cold, and tested nothing.
			if r.code != 125 || !strings.Contains(r.stderr, "working directory "+cwd) {
				t.Errorf("exit %d; want 125, naming the working directory:\n%s", r.code, r)
			}
		})
		t.Run("no daemon, a cold run", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			p := sb.serve()
			if r := sb.run(runSpec{args: []string{"sh", "-c", whoRuns}}); r.stdout != "warm\n" {
				t.Fatalf("with the daemon:\n%s", r)
			}
			// Killed: its socket stays, nobody listens.
			must(t, p.Signal(syscall.SIGKILL))
			deadline := time.Now().Add(15 * time.Second)
			for {
				c, err := dialSocket(filepath.Join(sb.root, "serve.sock"))
				if err != nil {
					break
				}
				c.Close()
				if time.Now().After(deadline) {
					t.Fatal("the killed daemon still accepts connections")
				}
				time.Sleep(20 * time.Millisecond)
			}
			// What the daemon left goes once its sandboxes are gone.
			t.Cleanup(func() {
				deadline := time.Now().Add(15 * time.Second)
				for {
					sb.cordon(runSpec{env: []string{sb.stateEnv}}, "gc")
					runs, _ := filepath.Glob(filepath.Join(sb.root, "run-*"))
					if len(runs) == 0 || time.Now().After(deadline) {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
			// Off in the settings: the run must not start another one.
			sb.settings(`{"cordon": {"serve": false}}`)
			if r := sb.run(runSpec{args: []string{"sh", "-c", whoRuns + "; exit 3"}}); r.code != 3 || r.stdout != "cold\n" {
				t.Errorf("with the daemon gone: want a cold run:\n%s", r)
			}
		})
		t.Run("started on demand", func(t *testing.T) {
			t.Parallel()
			sb := newServeBox(t, c)
			// Whatever this test started ends with it.
			t.Cleanup(func() {
				for _, p := range procsWhere(func(p proc) bool {
					return strings.HasPrefix(p.cmdline(), cordonBin+" serve") && p.env("CORDON_STATE_ROOT") == sb.root
				}) {
					// By a pidfd: the pid must still be the daemon's.
					fd, err := unix.PidfdOpen(p.pid, 0)
					if err != nil {
						continue
					}
					if strings.HasPrefix(p.cmdline(), cordonBin+" serve") && unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0) == nil {
						// It ends its sandboxes before it exits.
						fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
						if n, _ := unix.Poll(fds, 15000); n == 0 {
							t.Errorf("cordon serve (pid %d) still runs 15s after SIGTERM", p.pid)
						}
					}
					unix.Close(fd)
				}
			})
			// Its descriptor 5 a copy of the pipe the test reads to its
			// end: the daemon it starts must not hold it.
			first := runSpec{via: []string{"/bin/sh", "-c", `exec "$0" "$@" 5>&1`}, args: []string{"sh", "-c", whoRuns}, timeout: 30 * time.Second}
			if r := sb.run(first); r.code != 0 || r.stdout != "cold\n" {
				t.Fatalf("the first run, with no daemon yet: want a cold run:\n%s", r)
			}
			sb.waitSocket(nil)
			if r := sb.run(runSpec{args: []string{"sh", "-c", whoRuns}}); r.code != 0 || r.stdout != "warm\n" {
				t.Errorf("once the first run started the daemon: want a warm run:\n%s", r)
			}
		})
		// cordon run --serve (cordon hook claude's runs), no settings: a
		// daemon that cannot start (something else at its socket's path)
		// is said, once per session, the run is cold, and no other
		// daemon is tried for a while.
		t.Run("could not start", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			root, env := privateState(t, b)
			must(t, os.MkdirAll(filepath.Join(root, "serve.sock", "in-the-way"), 0o700))
			b.chown()
			run := func(session string) result {
				t.Helper()
				r := b.runSpec(runSpec{flags: []string{"--serve", "--session", session}, args: []string{"sh", "-c", whoRuns}, env: []string{env}})
				if r.code != 0 || r.stdout != "cold\n" {
					t.Fatalf("want a cold run:\n%s", r)
				}
				return r
			}
			const warning = "cordon: warning: cordon serve could not start (listen on "
			if r := run("s1"); !strings.Contains(r.stderr, warning) || !strings.Contains(r.stderr, "address already in use") {
				t.Errorf("no warning that cordon serve could not start:\n%s", r)
			}
			failed := filepath.Join(root, "serve.failed")
			fi, err := os.Stat(failed)
			if err != nil {
				t.Fatalf("no record of the daemon that could not start: %v", err)
			}
			if r := run("s1"); strings.Contains(r.stderr, "cordon serve") {
				t.Errorf("said again in the same session:\n%s", r)
			}
			if r := run("s2"); !strings.Contains(r.stderr, warning) {
				t.Errorf("not said in another session:\n%s", r)
			}
			if again, err := os.Stat(failed); err != nil || !again.ModTime().Equal(fi.ModTime()) {
				t.Errorf("another daemon was tried within the minute (%v)", err)
			}
		})
	})
}

// waitState waits until process pid is in state (as /proc/PID/stat shows
// it: 'T' stopped), for at most 10 seconds.
func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		must(t, err)
		// "PID (COMM) STATE ...": the state follows the last ')'.
		if i := strings.LastIndexByte(string(data), ')'); i >= 0 && i+2 < len(data) && data[i+2] == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not in state %c after 10s: %s", pid, state, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeForeignSocket: a socket where the daemon's would be, served by
// another user (one planted in a state directory under /tmp, or behind
// CORDON_STATE_ROOT), gets nothing from cordon run: neither the C client
// nor the Go one sends it the command, its environment or its
// descriptors. The run is then a cold one, which refuses a state directory
// that is not the caller's.
func TestServeForeignSocket(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		dir, err := os.MkdirTemp("", "cordon-it-foreign-")
		must(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		must(t, os.Chmod(dir, 0o755))
		// The other user: root for the unprivileged caller, nobody for
		// root.
		other := 0
		if c.uid == 0 {
			other = 65534
		}
		ln := foreignListener(t, filepath.Join(dir, "serve.sock"), other)
		got := make(chan [3]int, 1)
		go func() {
			var conns, bytes, fds int
			for {
				conn, err := ln.Accept()
				if err != nil {
					got <- [3]int{conns, bytes, fds}
					return
				}
				conns++
				uc := conn.(*net.UnixConn)
				_ = uc.SetDeadline(time.Now().Add(10 * time.Second))
				buf, oob := make([]byte, 4096), make([]byte, 256)
				for {
					n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
					bytes += n
					if oobn > 0 {
						if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
							for _, m := range msgs {
								if rights, err := unix.ParseUnixRights(&m); err == nil {
									fds += len(rights)
									for _, fd := range rights {
										unix.Close(fd)
									}
								}
							}
						}
					}
					if err != nil || n == 0 {
						break
					}
				}
				uc.Close()
			}
		}()
		r := b.runSpec(runSpec{env: []string{"CORDON_STATE_ROOT=" + dir, "CORDON_IT_SECRET=do-not-send"},
			args: []string{"echo", "ran"}})
		ln.Close()
		seen := <-got
		if seen[0] == 0 {
			t.Fatalf("cordon run never connected to the socket at %s: the test proves nothing\n%s", dir, r)
		}
		if seen[1] != 0 || seen[2] != 0 {
			t.Errorf("the foreign socket got %d bytes and %d descriptors over %d connections", seen[1], seen[2], seen[0])
		}
		if !strings.Contains(r.stderr, fmt.Sprintf("is served by uid %d", other)) {
			t.Errorf("no warning about the other user's socket:\n%s", r)
		}
		if c.uid == 0 {
			// A directory of root's: the cold run takes it.
			if r.code != 0 || r.stdout != "ran\n" {
				t.Errorf("want the command run cold:\n%s", r)
			}
		} else if r.code != 125 || r.stdout != "" || !strings.Contains(r.stderr, "state directory") {
			t.Errorf("want exit 125 for a state directory that is not the caller's, and nothing run:\n%s", r)
		}
	})
}

// foreignListener listens on a unix socket at path whose peer credentials
// are uid's: bound as this process, it listens from a thread whose
// effective uid alone is uid for the moment (SO_PEERCRED records the
// listener's credentials then).
func foreignListener(t *testing.T, path string, uid int) net.Listener {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	must(t, err)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	must(t, os.Chmod(path, 0o777))
	listen := func() error { return unix.Listen(fd, 8) }
	if uid != os.Geteuid() {
		errc := make(chan error, 1)
		go func() {
			goruntime.LockOSThread()
			const keep = ^uintptr(0) // -1: unchanged
			if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, keep, uintptr(uid), keep); e != 0 {
				goruntime.UnlockOSThread()
				errc <- e
				return
			}
			err := unix.Listen(fd, 8)
			if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, keep, 0, keep); e != 0 {
				// The thread stays another user's: it ends with this
				// goroutine (still locked).
				errc <- fmt.Errorf("restore the thread's uid: %v", e)
				return
			}
			goruntime.UnlockOSThread()
			errc <- err
		}()
		listen = func() error { return <-errc }
	}
	if err := listen(); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	ln, err := net.FileListener(f)
	must(t, err)
	return ln
}

// waitReadyInits waits until the daemon pid has n sandboxes ready: inits,
// its children, that wait for their command.
func waitReadyInits(t *testing.T, pid, n int) {
	t.Helper()
	parent := "PPid:\t" + strconv.Itoa(pid) + "\n"
	deadline := time.Now().Add(15 * time.Second)
	for {
		ready := procsWhere(func(p proc) bool {
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
			return strings.Contains(string(status), parent) && strings.Contains(p.cmdline(), "--command-fd=")
		})
		if len(ready) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cordon serve (pid %d): %d sandboxes ready after 15s, want %d", pid, len(ready), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeClosedStdio: a cordon run whose stdin, stdout and stderr are
// closed gives the command /dev/null for them, warm as cold. The client
// used to hand the command the first descriptors it opened itself: its
// signal pipe as stdin and its connection to the daemon as stderr.
func TestServeClosedStdio(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		sb := newServeBox(t, c)
		sb.serve("--pool", "1")
		script := `a=$(readlink /proc/$$/fd/0) b=$(readlink /proc/$$/fd/1) c=$(readlink /proc/$$/fd/2) p=$(grep -c -- '--command-fd=[0-9]' /proc/1/cmdline); echo "$a $b $c $p" > fds`
		for _, tc := range []struct {
			name, serve, pooled string
		}{{"warm", "1", "1"}, {"cold", "0", "0"}} {
			_ = os.Remove(filepath.Join(sb.ws, "fds"))
			r := sb.runSpec(runSpec{env: []string{sb.stateEnv, "CORDON_SERVE=" + tc.serve}, via: []string{"/bin/sh", "-c", `exec "$0" "$@" <&- >&- 2>&-`}, args: []string{"sh", "-c", script}})
			got := readFile(filepath.Join(sb.ws, "fds"))
			if want := "/dev/null /dev/null /dev/null " + tc.pooled + "\n"; r.code != 0 || got != want {
				t.Errorf("%s, stdio closed: exit %d; the command's descriptors and whether it was pooled:\n%s\nwant:\n%s", tc.name, r.code, got, want)
			}
		}
	})
}
