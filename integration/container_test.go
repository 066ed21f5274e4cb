//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The container mode where users meet it (issue 21): inside a container
// made as `docker run` makes one (dockerlike_test.go), cordon finds no
// user namespaces and confines commands with Landlock and seccomp alone;
// where user namespaces work but /proc is masked, the full sandbox runs
// with the host's /proc if the settings accept it; where Landlock is
// missing too, cordon refuses to run unless the settings accept running
// unconfined. The attacks are in TestEscapeInDocker, the network in
// TestInDockerNetwork.

// doctorJSON is what these tests read of `cordon doctor --json`.
type doctorJSON struct {
	Verdict  string   `json:"verdict"`
	HostProc bool     `json:"hostProc"`
	Lost     []string `json:"lost"`
}

// TestInDockerDoctor: cordon doctor in each kind of container says which
// mode a run gets there, what it loses and how to get the full sandbox.
func TestInDockerDoctor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v        dockerVariant
		verdict  string
		hostProc bool
		code     int
		lost     []string // substrings of lines of Lost
		text     []string // substrings of the text report
	}{
		{v: dockerDefault, verdict: "container",
			lost: []string{"no namespaces: commands run in the container mode", "no private /proc or PID namespace", "no cgroup limits"},
			text: []string{"verdict: container mode: no namespaces here, commands are confined by Landlock and seccomp",
				"cordon.requireFullSandbox (or sandbox.failIfUnavailable) refuses to run without it",
				"docker run --security-opt seccomp=unconfined"}},
		{v: dockerUserNS, verdict: "container", hostProc: true,
			lost: []string{"no namespaces: commands run in the container mode"},
			text: []string{"missing   fresh /proc", "sandbox.enableWeakerNestedSandbox binds the host's /proc instead",
				"docker run --security-opt systempaths=unconfined"}},
		{v: dockerNoLandlock, verdict: "unavailable", code: 1,
			lost: []string{"no sandbox"},
			text: []string{"missing   Landlock                       landlock_create_ruleset: ENOSYS", "verdict: unavailable"}},
	}
	for _, tc := range cases {
		t.Run(tc.v.String(), func(t *testing.T) {
			t.Parallel()
			d := newDockerLike(t, tc.v)
			eachCaller(t, func(t *testing.T, c *caller) {
				b := d.box(t, c)
				r := b.cordon(runSpec{}, "doctor", "--json")
				var got doctorJSON
				if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
					t.Fatalf("cordon doctor --json: %v\n%s", err, r)
				}
				if got.Verdict != tc.verdict || got.HostProc != tc.hostProc || r.code != tc.code {
					t.Errorf("cordon doctor --json: verdict %q, hostProc %t, exit %d; want %q, %t, %d\n%s",
						got.Verdict, got.HostProc, r.code, tc.verdict, tc.hostProc, tc.code, r)
				}
				for _, want := range tc.lost {
					if !strings.Contains(strings.Join(got.Lost, "\n"), want) {
						t.Errorf("lost lacks %q: %q", want, got.Lost)
					}
				}
				r = b.cordon(runSpec{}, "doctor")
				for _, want := range tc.text {
					if !strings.Contains(r.stdout, want) {
						t.Errorf("cordon doctor lacks %q\n%s", want, r)
					}
				}
			})
		})
	}
}

// TestInDockerRun: in a container as docker run makes it, cordon runs
// commands in the container mode without being asked, says so once, keeps
// the command's exit status, ends what it leaves running and what
// outlives --timeout, and refuses the mode where the settings require
// the full sandbox.
func TestInDockerRun(t *testing.T) {
	t.Parallel()
	d := newDockerLike(t, dockerDefault)
	eachCaller(t, func(t *testing.T, c *caller) {
		// One after the other: the first run says which mode it used.
		b := d.box(t, c)
		r := b.sh("echo ran; exit 3")
		if r.code != 3 || r.stdout != "ran\n" {
			t.Errorf("exit 3: got exit %d\n%s", r.code, r)
		}
		const said = "cordon: warning: container mode: no namespaces here"
		if !strings.Contains(r.stderr, said) {
			t.Errorf("the first run does not say it ran in the container mode\n%s", r)
		}
		if r = b.run("true"); r.code != 0 || strings.Contains(r.stderr, said) {
			t.Errorf("the second run: exit %d, want 0 and the mode not said again\n%s", r.code, r)
		}
		for _, tc := range []struct {
			script string
			code   int
		}{
			{"kill -9 $$", 128 + 9},
			{"kill -TERM $$", 128 + 15},
			{"exec /nonexistent-" + b.token, 127},
		} {
			if r := b.sh(tc.script); r.code != tc.code {
				t.Errorf("%s: exit %d, want %d\n%s", tc.script, r.code, tc.code, r)
			}
		}

		// The mode, seen from inside: the command is the caller with no
		// capability, the host's /tmp is not its to write, TMPDIR is.
		r = b.sh(`grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status; echo tmpdir=$TMPDIR
touch /tmp/x-` + b.token + ` 2>/dev/null && echo tmp=writable
touch "$TMPDIR/y" && echo tmpdir=writable`)
		want := []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1", "tmpdir=writable"}
		if c.uid == 0 {
			// A root caller's command loses the bounding set too (an
			// unprivileged one cannot drop it, and gains nothing from
			// it under no_new_privs).
			want = append(want, "CapBnd:\t0000000000000000")
		}
		for _, want := range want {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("inside: no %q\n%s", want, r)
			}
		}
		if strings.Contains(r.stdout, "tmp=writable") {
			t.Errorf("the container's /tmp was writable\n%s", r)
		}

		// What the command leaves running is ended with it, and what
		// outlives --timeout with the timeout.
		left, late := uniqueSleep(300), uniqueSleep(300)
		r = b.sh(`setsid sleep ` + left + ` </dev/null >/dev/null 2>&1 & (nohup sleep ` + left + ` >/dev/null 2>&1 &); echo started`)
		if r.code != 0 {
			t.Errorf("leave two sleeps: exit %d\n%s", r.code, r)
		}
		r = b.runSpec(runSpec{flags: []string{"--timeout", "2s"}, args: []string{"sh", "-c", "setsid sleep " + late + " & sleep " + late}})
		if r.code != 124 {
			t.Errorf("--timeout 2s: exit %d, want 124\n%s", r.code, r)
		}
		if n := waitProcs(5*time.Second, func(n int) bool { return n == 0 }, "sleep "+left, "sleep "+late); n != 0 {
			t.Errorf("%d sleeps outlived their runs", n)
		}

		// cordon list shows the run while it runs, by its init.
		long := uniqueSleep(300)
		run := b.start(runSpec{args: []string{"sleep", long}})
		l := b.liveRun()
		if l.Status != "running" || l.Mode != "container" || l.Pid <= 0 || strings.Join(l.Args, " ") != "sleep "+long {
			t.Errorf("cordon list: %+v, want the run running in the container mode, with its init's pid", l)
		}
		_ = run.cmd.Process.Signal(syscall.SIGTERM) // cordon exec passes it on, cordon too
		if r := run.wait(); r.code != 128+15 {
			t.Errorf("the listed run, ended by SIGTERM: exit %d, want %d\n%s", r.code, 128+15, r)
		}
		for _, l := range b.list() {
			if l.Workspace == b.ws {
				t.Errorf("cordon list shows the run after it ended: %+v", l)
			}
		}

		// A denied file inside the workspace cannot be hidden: the run is
		// refused, in one line that names it and the fixes.
		env := filepath.Join(b.ws, ".env")
		must(t, os.WriteFile(env, []byte("KEY=secret-"+b.token+"\n"), 0o600))
		b.chown()
		r = b.runSpec(runSpec{flags: []string{"--deny-read", "**/.env"}, args: []string{"cat", ".env"}})
		if r.code != 125 || strings.Contains(r.stdout, "secret-") || len(lines(r.stderr)) != 1 ||
			!strings.Contains(r.stderr, "cannot hide "+env) || !strings.Contains(r.stderr, "move it out of "+b.ws) {
			t.Errorf("a denied .env in the workspace: exit %d, want 125 and one line naming it and the fixes\n%s", r.code, r)
		}
		must(t, os.Remove(env))

		// Settings that want the full sandbox refuse the mode.
		for _, key := range []string{`"cordon": {"requireFullSandbox": true}`, `"sandbox": {"failIfUnavailable": true}`} {
			settings := filepath.Join(b.dir, "full.json")
			must(t, os.WriteFile(settings, []byte("{"+key+"}"), 0o644))
			r := b.runSpec(runSpec{flags: []string{"--settings", settings}, args: []string{"sh", "-c", "echo ran"}})
			if r.code != 125 || strings.Contains(r.stdout, "ran") || len(lines(r.stderr)) != 1 {
				t.Errorf("%s: exit %d, want 125, nothing run and one line\n%s", key, r.code, r)
			}
		}
	})
}

// TestInDockerWeakerNested: where user namespaces work but the container's
// masked /proc forbids a fresh one (docker run --security-opt
// seccomp=unconfined), sandbox.enableWeakerNestedSandbox gets the full
// sandbox with the host's /proc, as sandbox-runtime means it; without it
// the run gets the container mode, and says so.
func TestInDockerWeakerNested(t *testing.T) {
	t.Parallel()
	d := newDockerLike(t, dockerUserNS)
	eachCaller(t, func(t *testing.T, c *caller) {
		b := d.box(t, c)
		victim := uniqueSleep(300)
		d.start(t, c, "sleep", victim)
		weaker := filepath.Join(b.dir, "weaker.json")
		must(t, os.WriteFile(weaker, []byte(`{"sandbox": {"enableWeakerNestedSandbox": true}}`), 0o644))
		// A private /tmp is the full sandbox's; the container's processes
		// in /proc are the host /proc's (the script's own command line
		// names $VICTIM, not its value).
		script := `touch /tmp/x && echo tmp=private
all=$(for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done)
case "$all" in *"sleep $VICTIM"*) echo victim=seen;; esac`
		env := []string{"VICTIM=" + victim}
		with := b.runSpec(runSpec{flags: []string{"--settings", weaker}, args: []string{"sh", "-c", script}, env: env})
		if with.code != 0 || with.stdout != "tmp=private\nvictim=seen\n" {
			t.Errorf("with enableWeakerNestedSandbox: want the full sandbox (a private /tmp) seeing the container's processes\n%s", with)
		}
		if !strings.Contains(with.stderr, "the full sandbox with the host's /proc (sandbox.enableWeakerNestedSandbox)") {
			t.Errorf("with enableWeakerNestedSandbox: the run does not say it sees the host's processes\n%s", with)
		}
		without := b.runSpec(runSpec{args: []string{"sh", "-c", script}, env: env})
		if strings.Contains(without.stdout, "tmp=private") || !strings.Contains(without.stderr, "container mode") {
			t.Errorf("without enableWeakerNestedSandbox: want the container mode, said\n%s", without)
		}
	})
}

// TestInDockerNoLandlock: where neither mode can be made (no user
// namespaces, no Landlock: a kernel without it, or an older Docker whose
// profile predates it), cordon refuses to run with one line naming both
// causes; cordon.acceptUnconfined runs the command with nothing around it
// but cordon's init, and says so on every run.
func TestInDockerNoLandlock(t *testing.T) {
	t.Parallel()
	d := newDockerLike(t, dockerNoLandlock)
	eachCaller(t, func(t *testing.T, c *caller) {
		b := d.box(t, c)
		outside := filepath.Join(b.home, "outside.txt")
		left := uniqueSleep(300)
		script := `echo pwned >> ` + outside + `; echo "secret=$API_SECRET"; sleep ` + left + ` & echo ran`
		env := []string{"API_SECRET=s3cr3t-" + b.token}
		r := b.runSpec(runSpec{args: []string{"sh", "-c", script}, env: env})
		if r.code != 125 || strings.Contains(r.stdout, "ran") || len(lines(r.stderr)) != 1 {
			t.Errorf("without acceptUnconfined: exit %d, want 125, nothing run and one line\n%s", r.code, r)
		}
		for _, want := range []string{"userNamespaces", "landlock_create_ruleset", "cordon.acceptUnconfined"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the refusal does not name %q\n%s", want, r)
			}
		}
		if got := readFile(outside); got != "original\n" {
			t.Errorf("refused, yet %s holds %q", outside, got)
		}

		accept := filepath.Join(b.dir, "accept.json")
		must(t, os.WriteFile(accept, []byte(`{"cordon": {"acceptUnconfined": true}}`), 0o644))
		for i := range 2 {
			r := b.runSpec(runSpec{flags: []string{"--settings", accept}, args: []string{"sh", "-c", script}, env: env})
			if r.code != 0 || !strings.Contains(r.stdout, "ran") {
				t.Errorf("run %d with acceptUnconfined: exit %d, want 0\n%s", i+1, r.code, r)
			}
			if !strings.Contains(r.stderr, "cordon: warning: no sandbox") {
				t.Errorf("run %d with acceptUnconfined does not say it ran unconfined\n%s", i+1, r)
			}
			// Unconfined indeed; the environment still filtered.
			if strings.Contains(r.stdout, "s3cr3t") {
				t.Errorf("run %d: the secret in the environment reached the command\n%s", i+1, r)
			}
		}
		if got := readFile(outside); got != "original\npwned\npwned\n" {
			t.Errorf("with acceptUnconfined, %s holds %q: the command was not unconfined", outside, got)
		}
		if n := waitProcs(5*time.Second, func(n int) bool { return n == 0 }, "sleep "+left); n != 0 {
			t.Errorf("%d sleeps outlived their unconfined runs", n)
		}
	})
}

// TestInDockerNetwork: inside the container as docker run makes it (on
// the host's network, which reaches the test network), the proxy serves
// the contained command as it serves the full sandbox's: allowed
// destinations reached through it, from the environment cordon sets, the
// rest refused with the same answers (TestNetworkProxy's cases, less the
// two that judge how a direct connection fails, which differs: Landlock
// and seccomp refuse what the full sandbox's missing route does); and no
// way around it reaches the test network (the escape suite's network
// cases, which reach it from the same container with cordon off).
func TestInDockerNetwork(t *testing.T) {
	// Not parallel: it holds the test network (see newNetFixture).
	requires(t, netNeedRoot, needDocker, needTool("ip"), needTool("curl"))
	f := newNetFixture(t)
	d := newDockerLike(t, dockerDefault)
	// The full sandbox's proxy listens at fixed ports in its own network
	// namespace; the contained command's, at ports of the host's loopback
	// cordon chooses, which the environment names.
	ports := strings.NewReplacer("127.0.0.1:1080", "${SOCKS_PROXY#socks5h://}", "127.0.0.1:3128", "${HTTP_PROXY#http://}")
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range netCases() {
			if tc.name == "noproxy direct connection" || tc.name == "UDP and DNS" {
				continue
			}
			tc.script = ports.Replace(tc.script)
			t.Run("proxy/"+tc.name, func(t *testing.T) {
				t.Parallel()
				requires(t, needTools(tc.needs...)...)
				f.runCase(t, d.box(t, c), tc)
			})
		}
		for _, tc := range netEscapeCases(f) {
			for _, how := range []runHow{inDocker, dockerOff} {
				name := map[runHow]string{inDocker: "sandboxed", dockerOff: "unguarded"}[how]
				t.Run(name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					runCaseIn(t, c, tc, how, d)
				})
			}
		}
	})
}

// TestContainedKilled: the container mode cannot make the protected paths
// read-only during a run; its cordon puts them back after it. A cordon
// killed before it could (SIGKILL, as an agent harness's timeout sends)
// leaves nothing running (the init ends the command's tree), and the next
// cordon's GC puts back what the command changed, from the record the run
// left in its state directory.
func TestContainedKilled(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		hooks, config := filepath.Join(b.ws, ".git", "hooks"), filepath.Join(b.ws, ".git", "config")
		must(t, os.MkdirAll(hooks, 0o755))
		const original = "[core]\n\trepositoryformatversion = 0\n"
		must(t, os.WriteFile(config, []byte(original), 0o644))
		settings := filepath.Join(b.dir, "contained.json")
		// Without the system-call guard, which would refuse both writes:
		// what is put back after the run is what it could not refuse.
		must(t, os.WriteFile(settings, []byte(`{"cordon": {"containerMode": true, "syscallGuard": false}}`), 0o644))
		b.chown()
		s := uniqueSleep(300)
		r := b.start(runSpec{flags: []string{"--settings", settings}, args: []string{"sh", "-c", `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit; printf '\tfsmonitor = evil\n' >> .git/config; echo ready; exec sleep ` + s}})
		r.waitStdout("ready")
		_ = r.cmd.Process.Kill()
		r.wait()
		if n := waitProcs(5*time.Second, func(n int) bool { return n == 0 }, "sleep "+s); n != 0 {
			t.Errorf("the command outlived its killed cordon")
		}
		if got := readFile(config); got == original {
			t.Fatalf("the command did not change .git/config: nothing to put back")
		}
		// The next cordon (here cordon gc; a run's own GC too, before
		// its command), once the init has gone.
		deadline := time.Now().Add(10 * time.Second)
		for {
			b.cordon(runSpec{}, "gc")
			if readFile(config) == original || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got := readFile(config); got != original {
			t.Errorf(".git/config after GC: %q, want it put back: %q", got, original)
		}
		if exists(filepath.Join(hooks, "pre-commit")) {
			t.Errorf("the hook the command planted is still in .git/hooks after GC")
		}
	})
}
