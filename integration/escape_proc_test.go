//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The attacks on processes (signalling the host's, outliving the command)
// and on resources (each with small limits, so that the host stays
// responsive; these never run unguarded).

// hostVictim starts a sleep of the caller's on the host, in a process
// group of its own, for the attack to aim at ($HOSTPID, $HOSTSLEEP).
func hostVictim(e *escEnv) *hostProc {
	s := uniqueSleep(300)
	h := startHostProc(e, e.b.home, nil, "sleep", s)
	e.set("HOSTPID", strconv.Itoa(h.seen))
	e.set("HOSTSLEEP", "sleep "+s)
	e.victim = h
	return h
}

func victimHurt(e *escEnv, r result) []string {
	// A signal is delivered after kill(2) returns: give it a moment.
	st := e.victim.alive()
	for deadline := time.Now().Add(time.Second); st == "" && time.Now().Before(deadline); st = e.victim.alive() {
		time.Sleep(20 * time.Millisecond)
	}
	if st != "" {
		return []string{fmt.Sprintf("the caller's process %d on the host (%s) is %s", e.victim.pid, e.victim.args, st)}
	}
	return nil
}

// outlives sets $S1 and $S2 to sleeps of the case's own, and returns the
// check that none runs on the host once the attack has returned.
func outlives(e *escEnv) {
	e.set("S1", uniqueSleep(600))
	e.set("S2", uniqueSleep(601))
}

func outlived(e *escEnv, r result) []string {
	lines := []string{"sleep " + e.varValue("S1"), "sleep " + e.varValue("S2")}
	if !strings.Contains(r.stdout, "started") {
		return []string{"the background processes never started: nothing to judge\n" + r.String()}
	}
	if n := waitProcs(3*time.Second, func(n int) bool { return n == 0 }, lines...); n != 0 {
		return []string{fmt.Sprintf("%d of %q still run on the host 3s after the command returned", n, lines)}
	}
	return nil
}

// running waits until sleep $S1 (and $S2 when given) run, then says
// started.
const waitStarted = `
running() { for f in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' < "$f" 2>/dev/null)" = "sleep $1 " ] && return 0; done; return 1; }
i=0; until running "$S1"; do i=$((i+1)); [ $i -gt 250 ] && exit 99; sleep 0.02; done
echo started
`

func procCases() []escCase {
	return []escCase{
		{cat: catProc, name: "kill a host process of the caller's", setup: func(e *escEnv) { hostVictim(e) },
			script: `kill -9 "$HOSTPID"; kill -TERM "$HOSTPID"; kill -HUP "$HOSTPID"`, breach: victimHurt},
		{cat: catProc, name: "kill its process group", setup: func(e *escEnv) { hostVictim(e) },
			script: `/bin/kill -9 -- "-$HOSTPID"`, breach: victimHurt},
		{cat: catProc, name: "pkill by command line", tools: []string{"pkill"}, setup: func(e *escEnv) { hostVictim(e) },
			script: `pkill -9 -f "^$HOSTSLEEP\$"`, breach: victimHurt},
		{cat: catProc, name: "stop it", setup: func(e *escEnv) { hostVictim(e) },
			script: `kill -STOP "$HOSTPID"`, breach: victimHurt},
		{cat: catProc, name: "signal it through a pidfd", setup: func(e *escEnv) { hostVictim(e) },
			script: `CORDON_IT_ESCAPE=pidfd "$HELPER" "$HOSTPID"`, breach: victimHurt},
		{cat: catProc, name: "outlive the command: double fork, setsid, nohup", tools: []string{"setsid", "nohup"},
			setup:  outlives,
			script: `(setsid nohup sleep "$S1" >/dev/null 2>&1 &); (trap '' TERM HUP INT; exec sleep "$S2" </dev/null >/dev/null 2>&1) &` + waitStarted,
			breach: outlived},
		{cat: catProc, name: "outlive --timeout", tools: []string{"setsid"}, timeout: 2 * time.Second, code: intp(124),
			notContained: "its scan of /proc for its own sleep reads every host process there, longer than the 2s timeout (the next case judges the outliving)",
			setup: func(e *escEnv) {
				outlives(e)
				e.flags = append(e.flags, "--timeout", "2s")
			},
			script: `setsid sh -c 'trap "" TERM HUP INT; exec sleep "$S1"' </dev/null >/dev/null 2>&1 &` + waitStarted + `trap '' TERM HUP INT; sleep 30`,
			breach: outlived},
		{cat: catProc, name: "a daemon that forks again and again",
			setup:  outlives,
			script: `(trap '' TERM HUP; while :; do (sleep "$S1" </dev/null >/dev/null 2>&1 &); sleep 0.05; done) </dev/null >/dev/null 2>&1 &` + waitStarted,
			breach: outlived},
	}
}

// boxProcs counts the processes of the box on the host.
func boxProcs(e *escEnv) int {
	return len(procsWhere(func(p proc) bool { return p.env(boxEnv) == e.b.token && p.pid != e.daemon }))
}

// hostResponsive starts a process on the host while the attack runs and
// reports when that fails.
func hostResponsive(e *escEnv) string {
	cmd := exec.Command("/bin/true")
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Sprintf("the host could not start /bin/true during the attack: %v", err)
		}
	case <-time.After(10 * time.Second):
		return "the host could not start /bin/true within 10s during the attack"
	}
	return ""
}

const exhaustion = "resource exhaustion never runs unguarded"

// inotifyMu keeps the inotify case to one run at a time.
var inotifyMu sync.Mutex

func resourceCases() []escCase {
	limits := func(flags ...string) func(e *escEnv) {
		return func(e *escEnv) { e.flags = append(e.flags, flags...) }
	}
	return []escCase{
		{cat: catResource, name: "fork bomb", off: offNever, why: exhaustion,
			notContained: "no pids limit without a cgroup (RLIMIT_NPROC would count every process of the caller's, and none of root's): " +
				"the timeout alone ends a fork bomb, which can take every pid of the machine before it, and every other run with it (docs/security.md)",
			setup:   limits("--pids", "64", "--cpus", "1", "--timeout", "3s"),
			timeout: 3 * time.Second,
			script:  `echo ready; b() { b | b & }; b; sleep 30`,
			during: func(e *escEnv) {
				most := 0
				for range 5 {
					most = max(most, boxProcs(e))
					if msg := hostResponsive(e); msg != "" {
						e.notes = append(e.notes, msg)
					}
					time.Sleep(200 * time.Millisecond)
				}
				// The sandbox's processes and threads, and cordon itself.
				if most > 64+8 {
					e.notes = append(e.notes, fmt.Sprintf("%d processes of the sandbox at once on the host, with --pids 64", most))
				}
			},
			breach: func(e *escEnv, r result) []string {
				if n := waitProcs(3*time.Second, func(int) bool { return boxProcs(e) == 0 }); boxProcs(e) != 0 {
					e.notes = append(e.notes, fmt.Sprintf("%d processes of the fork bomb outlived cordon (%d)", boxProcs(e), n))
				}
				return e.notes
			}},
		{cat: catResource, name: "memory hog", off: offNever, why: exhaustion,
			setup:   limits("--memory", "64M", "--timeout", "5s"),
			timeout: 5 * time.Second,
			// Doubles a string to 512M, touching every page.
			script: `awk 'BEGIN { s = "x"; while (length(s) < 512 * 1024 * 1024) s = s s; print "ALLOCATED", length(s) }'`,
			breach: said("ALLOCATED 536870912")},
		{cat: catResource, name: "fill the disk through the workspace", off: offNever, why: exhaustion,
			setup:   limits("--file-size", "1M", "--timeout", "5s"),
			timeout: 5 * time.Second,
			script:  `dd if=/dev/zero of=big bs=64k count=1600 2>&1; ls -l big`,
			breach: func(e *escEnv, r result) []string {
				if fi, err := os.Stat(filepath.Join(e.b.ws, "big")); err == nil && fi.Size() > 1<<20 {
					return []string{fmt.Sprintf("the workspace holds a file of %d bytes, with --file-size 1M", fi.Size())}
				}
				return nil
			}},
		{cat: catResource, name: "fill /tmp", off: offNever, why: exhaustion,
			setup:   limits("--tmp-size", "8M", "--file-size", "512M", "--timeout", "5s"),
			timeout: 5 * time.Second,
			script:  `dd if=/dev/zero of=/tmp/big bs=1M count=64 2>/dev/null; echo "size=$(stat -c %s /tmp/big)"; df -k /tmp | tail -1`,
			breach: func(e *escEnv, r result) []string {
				return sizeOver(r, "size=", 8<<20, "/tmp, with --tmp-size 8M")
			}},
		{cat: catResource, name: "fill /dev/shm", off: offNever, why: exhaustion,
			setup:   limits("--file-size", "512M", "--timeout", "5s"),
			timeout: 5 * time.Second,
			script:  `dd if=/dev/zero of=/dev/shm/big bs=1M count=256 2>/dev/null; echo "size=$(stat -c %s /dev/shm/big)"`,
			breach: func(e *escEnv, r result) []string {
				return sizeOver(r, "size=", 64<<20, "/dev/shm (64M)")
			}},
		{cat: catResource, name: "the caller's inotify instances and watches", off: offNever, why: exhaustion,
			notContained: "no user namespace to give limits of its own: the per-user inotify limits are the caller's (docs/limits.md)",
			// Per user, across user namespaces: what the sandbox takes is
			// the caller's editor's and file watchers' on the host.
			setup: func(e *escEnv) {
				e.flags = append(e.flags, "--timeout", "20s")
				// Each sandbox may take half: two at once, the whole.
				inotifyMu.Lock()
				e.t.Cleanup(inotifyMu.Unlock)
			},
			timeout: 20 * time.Second,
			script:  `CORDON_IT_ESCAPE=inotify "$HELPER"`,
			during: func(e *escEnv) {
				cmd := exec.Command(helperBin)
				cmd.Env = []string{escHelperEnv + "=inotify-one"}
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: e.b.c.cred}
				out, _ := cmd.CombinedOutput()
				if !strings.Contains(string(out), "inotify_init1: ok") || !strings.Contains(string(out), "inotify_add_watch: ok") {
					e.notes = append(e.notes, "the caller could not watch a file on the host while the attack held its inotify instances and watches: "+strings.TrimSpace(string(out)))
				}
				_ = e.cmd.Process.Signal(syscall.SIGTERM)
			},
			breach: func(e *escEnv, r result) []string { return e.notes }},
		{cat: catResource, name: "output flood", off: offNever, why: exhaustion,
			setup:   limits("--output-limit", "1M", "--timeout", "3s"),
			timeout: 3 * time.Second, code: intp(124),
			script: `yes "flood $TOKEN" & yes "flood $TOKEN" >&2; wait`,
			breach: func(e *escEnv, r result) []string {
				var out []string
				for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
					if len(s) > 1<<20+4096 {
						out = append(out, fmt.Sprintf("%s got %d bytes, with --output-limit 1M", name, len(s)))
					}
				}
				return out
			}},
		{cat: catResource, name: "file descriptor exhaustion", off: offNever, why: exhaustion,
			setup:  limits("--open-files", "256", "--timeout", "5s"),
			script: `CORDON_IT_ESCAPE=fds "$HELPER"`,
			breach: func(e *escEnv, r result) []string {
				return sizeOver(r, "opened ", 256, "descriptors, with --open-files 256")
			}},
	}
}

// sizeOver returns a breach when a line "PREFIXN" of stdout has N > limit.
func sizeOver(r result, prefix string, limit int64, what string) []string {
	for _, l := range lines(r.stdout) {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil && n > limit {
				return []string{fmt.Sprintf("%d in %s", n, what)}
			}
			return nil
		}
	}
	return nil
}
