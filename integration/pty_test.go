//go:build linux

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair as posix_openpt, grantpt,
// unlockpt and ptsname would.
func openPTY(t *testing.T) (master, slave *os.File, name string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	var n uint32
	err = control(master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return fmt.Errorf("unlockpt: %w", err)
		}
		var err error
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		return err
	})
	if err != nil {
		master.Close()
		t.Fatalf("pty: %v", err)
	}
	name = fmt.Sprintf("/dev/pts/%d", n)
	slave, err = os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		t.Fatalf("open %s: %v", name, err)
	}
	return master, slave, name
}

// control runs f on f's descriptor without making it blocking.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func setSize(t *testing.T, f *os.File, rows, cols uint16) {
	t.Helper()
	err := control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
	must(t, err)
}

// ptyRun is cordon running on a terminal of the test's: the slave is its
// controlling terminal, stdin, stdout and stderr; the test holds the master.
type ptyRun struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd

	mu   sync.Mutex
	out  strings.Builder // everything read from the master, without \r
	pos  int             // expect consumed up to here
	read chan struct{}   // closed when the master reads nothing more

	done chan struct{} // closed when cordon ended
	code int
}

func (b *box) startPTY(s runSpec, rows, cols uint16) *ptyRun {
	b.t.Helper()
	master, slave, name := openPTY(b.t)
	setSize(b.t, master, rows, cols)
	if b.c.cred != nil {
		// A user's terminal is the user's.
		must(b.t, os.Chown(name, b.c.uid, b.c.gid))
	}
	s.env = append(s.env, "TERM=xterm")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cmd := b.command(ctx, s, runArgs(s)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0
	waited, err := startLocked(cmd)
	if err != nil {
		cancel()
		b.t.Fatal(err)
	}
	slave.Close()
	p := &ptyRun{t: b.t, master: master, cmd: cmd, read: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.WriteString(strings.ReplaceAll(string(buf[:n]), "\r", ""))
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer close(p.done)
		defer cancel()
		err := <-waited
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		default:
			p.code = -1
		}
	}()
	b.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		master.Close()
	})
	return p
}

func (p *ptyRun) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// expect waits until the output after the last match matches re, and
// returns the match and its groups.
func (p *ptyRun) expect(re string) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(15 * time.Second)
	for {
		p.mu.Lock()
		s := p.out.String()
		rest := s[p.pos:]
		if loc := rx.FindStringSubmatchIndex(rest); loc != nil {
			m := rx.FindStringSubmatch(rest)
			p.pos += loc[1]
			p.mu.Unlock()
			return m
		}
		p.mu.Unlock()
		select {
		case <-p.read:
			// Nothing more will come; one last look happened above.
			if time.Now().After(deadline) || p.finished() {
				p.t.Fatalf("the terminal never showed %q; it ended with:\n%q", re, rest)
			}
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the terminal did not show %q in 15s; after the last match:\n%q", re, rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *ptyRun) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// send types s on the terminal.
func (p *ptyRun) send(s string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(s)); err != nil {
		p.t.Fatalf("type %q: %v", s, err)
	}
}

// wait waits for cordon to end and returns its exit status.
func (p *ptyRun) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.t.Fatalf("cordon did not end; the terminal shows:\n%q", p.output())
	}
	select {
	case <-p.read:
	case <-time.After(2 * time.Second):
	}
	return p.code
}

// TestTerminal: on a terminal the command gets a terminal of its own, of
// the caller's size, resized with it; interactive shells have job control
// and Ctrl-C; --tty=false turns it off.
func TestTerminal(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("own terminal", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			p := b.startPTY(runSpec{args: []string{"sh", "-c",
				`tty; stty size; echo "pts: $(ls /dev/pts | tr '\n' ' ')"; echo "dev: $(ls -A /dev | tr '\n' ' ')"; test -t 0 && test -t 1 && test -t 2 && echo all-terminals; exit 5`}}, 37, 123)
			tty := p.expect(`(?m)^(\S+)\n`)[1]
			if !regexp.MustCompile(`^/dev/pts/\d+$`).MatchString(tty) {
				t.Errorf("tty inside: %q, want /dev/pts/N", tty)
			}
			p.expect(`(?m)^37 123\n`)
			pts := p.expect(`pts: (.*)\n`)[1]
			// A new devpts instance: the host's terminals are not there.
			if got := strings.Fields(pts); !slices.Equal(got, []string{"0", "ptmx"}) {
				t.Errorf("/dev/pts inside: %q, want only the sandbox's own terminal 0 and ptmx", got)
			}
			dev := strings.Fields(p.expect(`dev: (.*)\n`)[1])
			slices.Sort(dev)
			want := []string{"console", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
			if !slices.Equal(dev, want) {
				t.Errorf("/dev with a terminal: %q, want %q", dev, want)
			}
			p.expect(`all-terminals\n`)
			if code := p.wait(); code != 5 {
				t.Errorf("exit status %d, want 5; terminal:\n%q", code, p.output())
			}
		})
		t.Run("resize reaches the command", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			p := b.startPTY(runSpec{args: []string{"sh", "-c",
				`trap 'echo "winch $(stty size)"; exit 7' WINCH; stty size; echo ready; while :; do sleep 0.05; done`}}, 24, 80)
			p.expect(`24 80\nready\n`)
			setSize(t, p.master, 50, 100)
			p.expect(`winch 50 100\n`)
			if code := p.wait(); code != 7 {
				t.Errorf("exit status %d, want 7", code)
			}
		})
		t.Run("interactive bash", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("bash"))
			b := newBox(t, c)
			p := b.startPTY(runSpec{args: []string{"bash", "--norc", "--noprofile", "-i"}, env: []string{"PS1=prompt$ "}}, 30, 100)
			p.expect(`prompt\$ `)

			// Job control: a background job, listed, then killed.
			bg := uniqueSleep(100)
			p.send("sleep " + bg + " &\n")
			p.expect(`\[1\] \d+\n`)
			if n := waitProcs(10*time.Second, func(n int) bool { return n == 1 }, "sleep "+bg); n != 1 {
				t.Fatalf("the background sleep does not run")
			}
			p.send("jobs; echo jobs-$((20+1))\n")
			p.expect(`\[1\]\+\s+Running\s+sleep ` + regexp.QuoteMeta(bg) + ` &\n`)
			p.expect(`jobs-21\n`)
			p.send("kill %1; wait; echo killed-$((20+2))\n")
			p.expect(`killed-22\n`)
			if n := waitProcs(5*time.Second, func(n int) bool { return n == 0 }, "sleep "+bg); n != 0 {
				t.Errorf("kill %%1 did not end the background job")
			}

			// Ctrl-C interrupts the foreground command, not the shell.
			fg := uniqueSleep(100)
			p.send("sleep " + fg + "; echo status-$?\n")
			if n := waitProcs(10*time.Second, func(n int) bool { return n == 1 }, "sleep "+fg); n != 1 {
				t.Fatalf("the foreground sleep does not run")
			}
			p.send("\x03")
			p.expect(`\^C`)
			if n := waitProcs(5*time.Second, func(n int) bool { return n == 0 }, "sleep "+fg); n != 0 {
				t.Fatalf("Ctrl-C did not interrupt the foreground sleep; terminal:\n%q", p.output())
			}
			p.send("echo alive-$((6*7))\n")
			p.expect(`alive-42\n`)

			p.send("exit 4\n")
			if code := p.wait(); code != 4 {
				t.Errorf("exit 4: exit status %d", code)
			}
			out := p.output()
			for _, bad := range []string{"no job control", "cannot set terminal process group", "Inappropriate ioctl"} {
				if strings.Contains(out, bad) {
					t.Errorf("bash says %q: no job control\n%q", bad, out)
				}
			}
		})
		t.Run("--tty=false", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			p := b.startPTY(runSpec{flags: []string{"--tty=false"}, args: []string{"sh", "-c",
				`echo "dev: $(ls -A /dev | tr '\n' ' ')"; echo "pts: $(ls /dev/pts | tr '\n' ' ')"; echo "tty: $(tty)"; exit 6`}}, 24, 80)
			dev := strings.Fields(p.expect(`dev: (.*)\n`)[1])
			if slices.Contains(dev, "console") {
				t.Errorf("--tty=false: /dev/console exists inside: %q", dev)
			}
			pts := strings.Fields(p.expect(`pts: (.*)\n`)[1])
			if !slices.Equal(pts, []string{"ptmx"}) {
				t.Errorf("--tty=false: /dev/pts inside holds %q, want no terminal of the sandbox's own", pts)
			}
			tty := p.expect(`tty: (.*)\n`)[1]
			t.Logf("--tty=false on a terminal: tty inside says %q", tty)
			if code := p.wait(); code != 6 {
				t.Errorf("exit status %d, want 6", code)
			}
		})
	})
}
