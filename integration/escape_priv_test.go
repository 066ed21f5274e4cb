//go:build linux

package integration

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The privilege attacks: setuid programs, new namespaces, mounts, other
// processes' memory, the kernel's keyrings and other interfaces seccomp
// refuses, keystrokes into the terminal, cordon's own binary.

// needHostRoot: the case plants root-owned files on the host.
func needHostRoot() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("root on the host to plant a setuid-root program and root-owned files (the suite runs as uid %d)", os.Geteuid())
	}
	return ""
}

// rootFile plants a file owned by root, mode 0644, that the attack tries
// to change, and returns a breach check for it.
func rootFile(e *escEnv) {
	p := filepath.Join(e.b.dir, "root-owned")
	must(e.t, os.WriteFile(p, []byte("root's\n"), 0o644))
	e.afterChown = append(e.afterChown, func() {
		must(e.t, os.Chown(p, 0, 0))
		must(e.t, os.Chmod(p, 0o644))
	})
	e.set("ROOTFILE", p)
}

func rootFileBreach(e *escEnv, r result) []string {
	return fileIs(e.varValue("ROOTFILE"), "root's\n")
}

// said returns a breach when the output has a line saying the attempt
// worked.
func said(lines ...string) func(e *escEnv, r result) []string {
	return func(e *escEnv, r result) []string {
		var out []string
		for _, l := range lines {
			if containsLine(r.stdout, l) {
				out = append(out, "the attack says "+l)
			}
		}
		return out
	}
}

func sha(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	s := sha256.Sum256(data)
	return fmt.Sprintf("%x", s[:8])
}

func privCases() []escCase {
	seen := func(e *escEnv, r result) []string { return e.secretsSeen(r) }
	return []escCase{
		{cat: catPriv, name: "a setuid-root program", needs: []need{needHostRoot},
			setup: func(e *escEnv) {
				rootFile(e)
				p := filepath.Join(e.b.dir, "suid-helper")
				must(e.t, copyFile(helperBin, p, 0o755))
				e.afterChown = append(e.afterChown, func() {
					must(e.t, os.Chown(p, 0, 0))
					must(e.t, os.Chmod(p, 0o755|os.ModeSetuid))
				})
				e.set("SUID", p)
			},
			script: `CORDON_IT_ESCAPE=setuid "$SUID" "$ROOTFILE" "pwned $TOKEN"`,
			breach: rootFileBreach},
		{cat: catPriv, name: "su to root", tools: []string{"su"}, needs: []need{needHostRoot}, off: offRoot,
			why:    "su asks an unprivileged caller for root's password",
			setup:  rootFile,
			script: `su -c "echo pwned-$TOKEN >> $ROOTFILE" root </dev/null`,
			breach: rootFileBreach},
		{cat: catPriv, name: "sudo", tools: []string{"sudo"}, needs: []need{needHostRoot}, off: offRoot,
			why:    "the unprivileged test user is in no sudoers file",
			setup:  rootFile,
			script: `sudo -n sh -c "echo pwned-$TOKEN >> $ROOTFILE" </dev/null`,
			breach: rootFileBreach},
		{cat: catPriv, name: "a nested user namespace", tools: []string{"unshare"}, notInDocker: dockerRefuses,
			script: `unshare -Ur sh -c 'echo "inner uid $(id -u)"'; CORDON_IT_ESCAPE=syscall "$HELPER" unshare`,
			breach: said("inner uid 0", "unshare: ok")},
		{cat: catPriv, name: "a nested user namespace by clone and clone3", notInDocker: dockerRefuses,
			script: `for c in clone clone3; do CORDON_IT_ESCAPE=syscall "$HELPER" $c; done`,
			breach: said("clone: ok", "clone3: ok")},
		{cat: catPriv, name: "the new mount API (open_tree, fsopen)", off: offRoot, notInDocker: dockerNoCap,
			why:    "it needs CAP_SYS_ADMIN: refused to an unprivileged caller unguarded too",
			script: `for c in open_tree fsopen; do CORDON_IT_ESCAPE=syscall "$HELPER" $c; done`,
			breach: said("open_tree: ok", "fsopen: ok")},
		{cat: catPriv, name: "open a file by its handle (open_by_handle_at)", off: offRoot, notInDocker: dockerNoCap,
			why:    "it needs CAP_DAC_READ_SEARCH: refused to an unprivileged caller unguarded too",
			script: `CORDON_IT_ESCAPE=syscall "$HELPER" open_by_handle_at`,
			breach: said("open_by_handle_at: ok")},
		{cat: catPriv, name: "enter the host's namespaces (setns)",
			// A host process of the caller's, and the sandbox's PID 1
			// (cordon's init, which is root in the user namespace it
			// made), by their /proc/PID/ns links; then the key.
			setup: func(e *escEnv) {
				e.set("HOSTPID", fmt.Sprint(startHostProc(e, e.b.home, nil, "sleep", uniqueSleep(300)).seen))
			},
			script: `for pid in $HOSTPID 1; do CORDON_IT_ESCAPE=setns "$HELPER" $pid "$HOME/.ssh/id_ed25519"; done
nsenter -t 1 -a cat "$HOME/.ssh/id_ed25519"; true`,
			breach: seen},
		{cat: catPriv, name: "remount the home read-write", off: offNever,
			why:    "unguarded, as root, it would remount the host's own file systems",
			script: `for m in "$(stat -c %m "$HOME")" "$HOME" /; do mount -o remount,bind,rw "$m"; done; mount --bind "$WS" "$HOME"; echo "pwned $TOKEN" >> "$HOME/outside.txt"`,
			breach: func(e *escEnv, r result) []string { return e.outsideChanged() }},
		{cat: catPriv, name: "read another process's memory",
			setup: func(e *escEnv) {
				s := "secret-memory-" + e.token
				e.secrets = append(e.secrets, s)
				h := startHostProc(e, e.b.dir, []string{escHelperEnv + "=victim"}, helperBin, s)
				e.set("VICTIM", h.args)
			},
			script: `CORDON_IT_ESCAPE=vmread "$HELPER" $VICTIM`,
			breach: seen},
		{cat: catPriv, name: "the caller's SysV shared memory",
			notContained: "no IPC namespace: System V IPC is the host's",
			// A host process of the caller's keeps data in a SysV segment
			// (PostgreSQL, X's MIT-SHM, an IPC library): its IPC
			// namespace is the host's.
			setup: func(e *escEnv) {
				s := "secret-shm-" + e.token
				e.secrets = append(e.secrets, s)
				startHostProc(e, e.b.dir, []string{escHelperEnv + "=shm-hold"}, helperBin, s)
			},
			script: `CORDON_IT_ESCAPE=shm-read "$HELPER"`,
			breach: seen},
		{cat: catPriv, name: "the user's kernel keyring",
			notInDocker: "runc gives a container's processes a session keyring of their own: the caller's user keyring is not theirs to read, cordon or not",
			setup: func(e *escEnv) {
				s := "secret-key-" + e.token
				e.secrets = append(e.secrets, s)
				desc := "cordon-it-" + e.token
				out := escHostHelper(e, "key-add", desc, s)
				e.t.Cleanup(func() { escHostHelper(e, "key-drop", strings.TrimSpace(out)) })
				e.set("KEYDESC", desc)
			},
			script: `CORDON_IT_ESCAPE=key-read "$HELPER" "$KEYDESC"`,
			breach: seen},
		{cat: catPriv, name: "bpf", off: offRoot, notInDocker: dockerNoCap,
			why:    "unprivileged BPF is off on this kernel (kernel.unprivileged_bpf_disabled)",
			script: `CORDON_IT_ESCAPE=syscall "$HELPER" bpf`, breach: said("bpf: ok")},
		{cat: catPriv, name: "userfaultfd", notInDocker: dockerRefuses,
			script: `CORDON_IT_ESCAPE=syscall "$HELPER" userfaultfd`, breach: said("userfaultfd: ok")},
		{cat: catPriv, name: "io_uring", notInDocker: dockerRefuses,
			needs:  []need{sysctlIs("kernel/io_uring_disabled", "0")},
			script: `CORDON_IT_ESCAPE=syscall "$HELPER" io_uring`, breach: said("io_uring: ok")},
		{cat: catPriv, name: "perf_event_open", notInDocker: dockerRefuses,
			needs:  []need{sysctlAtMost("kernel/perf_event_paranoid", 2)},
			script: `CORDON_IT_ESCAPE=syscall "$HELPER" perf_event_open`, breach: said("perf_event_open: ok")},
		{cat: catPriv, name: "keystrokes into the terminal (TIOCSTI)", notInDocker: dockerPipes,
			needs: []need{sysctlIs("dev/tty/legacy_tiocsti", "1")},
			setup: func(e *escEnv) {
				master, slave, _ := openPTY(e.t)
				e.t.Cleanup(func() { master.Close(); slave.Close() })
				e.stdin, e.ctty, e.master = slave, true, master
				e.flags = append(e.flags, "--tty=false")
			},
			// The caller's shell reads this terminal next: it would run
			// the command typed into it.
			script: `CORDON_IT_ESCAPE=tiocsti "$HELPER" "echo typed-$TOKEN
"`,
			breach: func(e *escEnv, r result) []string {
				if got := drainTerminal(e); strings.Contains(got, "typed-"+e.token) {
					return []string{fmt.Sprintf("the caller's terminal received %q", got)}
				}
				return nil
			}},
		{cat: catPriv, name: "the terminal's selection (TIOCLINUX)", notInDocker: dockerPipes,
			setup: func(e *escEnv) {
				master, slave, _ := openPTY(e.t)
				e.t.Cleanup(func() { master.Close(); slave.Close() })
				e.stdin, e.ctty, e.master = slave, true, master
				e.flags = append(e.flags, "--tty=false")
			},
			// Only a virtual console pastes; on this pseudo-terminal the
			// kernel answers ENOTTY or EINVAL. The sandbox must refuse it
			// before the terminal is asked: EPERM.
			script: `CORDON_IT_ESCAPE=tioclinux "$HELPER"`,
			breach: func(e *escEnv, r result) []string {
				if !containsLine(r.stdout, "TIOCLINUX: EPERM") {
					return []string{"TIOCLINUX reached the terminal: " + strings.TrimSpace(r.stdout)}
				}
				return nil
			}},
		{cat: catPriv, name: "cordon's binary through /proc/1/exe",
			setup: func(e *escEnv) {
				// Unguarded there is no cordon init: the attack aims at a
				// copy of cordon's binary, so that the host's own binaries
				// are never written to.
				cp := filepath.Join(e.b.dir, "cordon-copy")
				must(e.t, copyFile(cordonBin, cp, 0o755))
				e.set("CORDON_COPY", cp)
				e.set("CORDON_SHA", sha(cordonBin))
				if e.guarded {
					e.set("TARGETS", "/proc/1/exe /.cordon/cordon")
				} else {
					e.set("TARGETS", cp)
				}
			},
			script: `for f in $TARGETS; do printf pwned >> "$f"; printf pwned | dd of="$f" bs=1 seek=64 conv=notrunc 2>/dev/null; done; true`,
			breach: func(e *escEnv, r result) []string {
				var out []string
				if got := sha(cordonBin); got != e.varValue("CORDON_SHA") {
					out = append(out, "cordon's binary changed")
				}
				if got := sha(e.varValue("CORDON_COPY")); got != e.varValue("CORDON_SHA") {
					out = append(out, "the copy of cordon's binary changed")
				}
				return out
			}},
		{cat: catPriv, name: "replace the cordon binary a workspace holds",
			setup: func(e *escEnv) {
				// A developer runs ./bin/cordon from their checkout, which is
				// the workspace: the next `./bin/cordon run` runs on the host.
				marker(e)
				p := filepath.Join(e.b.ws, "bin", "cordon")
				must(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(e.t, copyFile(cordonBin, p, 0o755))
				e.cordon = p
				e.set("CORDON_SHA", sha(p))
			},
			script: `printf pwned >> bin/cordon; mv bin bin.old; mkdir -p bin && printf '#!/bin/sh\ntouch "%s"\n' "$MARKER" > bin/cordon && chmod +x bin/cordon; true`,
			breach: func(e *escEnv, r result) []string {
				if got := sha(filepath.Join(e.b.ws, "bin", "cordon")); got != e.varValue("CORDON_SHA") {
					return []string{"./bin/cordon, which the caller runs next, is not cordon any more: " + describe(filepath.Join(e.b.ws, "bin", "cordon"))}
				}
				return nil
			}},
		{cat: catPriv, name: "the kernel's core_pattern", off: offNever,
			why: "unguarded, as root, it would change the host's kernel setting",
			setup: func(e *escEnv) {
				marker(e)
				e.set("CORE_PATTERN", readFile("/proc/sys/kernel/core_pattern"))
			},
			script: `echo "|/bin/sh -c 'touch $MARKER'" > /proc/sys/kernel/core_pattern; echo 1 > /proc/sys/kernel/sysrq; echo '|/x' > /sys/kernel/uevent_helper; true`,
			breach: func(e *escEnv, r result) []string {
				return fileIs("/proc/sys/kernel/core_pattern", e.varValue("CORE_PATTERN"))
			}},
	}
}

// escHostHelper runs the helper on the host as the box's caller.
func escHostHelper(e *escEnv, mode string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command(helperBin, args...)
	cmd.Env = []string{escHelperEnv + "=" + mode}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: e.b.c.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("helper %s %q: %v: %s", mode, args, err, out)
	}
	return string(out)
}

// drainTerminal reads what is waiting on both sides of the case's
// pseudo-terminal, without blocking.
func drainTerminal(e *escEnv) string {
	var got bytes.Buffer
	for _, f := range []*os.File{e.master, e.stdin} {
		fd := int(f.Fd())
		_ = unix.SetNonblock(fd, true)
		buf := make([]byte, 4096)
		deadline := time.Now().Add(200 * time.Millisecond)
		for time.Now().Before(deadline) {
			n, err := unix.Read(fd, buf)
			if n > 0 {
				got.Write(buf[:n])
				continue
			}
			if err != nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	return got.String()
}

// sysctlIs: the kernel setting (below /proc/sys) has the value the case
// is written for.
func sysctlIs(name, want string) need {
	return func() string {
		got := strings.TrimSpace(readFile("/proc/sys/" + name))
		if got != want {
			return fmt.Sprintf("%s = %s (it is %s): the attack could not work unguarded", strings.ReplaceAll(name, "/", "."), want, got)
		}
		return ""
	}
}

// sysctlAtMost: the kernel setting is a number no larger than max.
func sysctlAtMost(name string, max int) need {
	return func() string {
		var got int
		if _, err := fmt.Sscan(readFile("/proc/sys/"+name), &got); err != nil || got > max {
			return fmt.Sprintf("%s <= %d (it is %s)", strings.ReplaceAll(name, "/", "."), max, strings.TrimSpace(readFile("/proc/sys/"+name)))
		}
		return ""
	}
}
