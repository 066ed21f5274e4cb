package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/containerd/console"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// terminal connects the caller's terminal to a new pseudo-terminal inside
// the sandbox: the command gets a terminal of its own (job control, Ctrl-C
// as a keystroke), never the caller's.
type terminal struct {
	host        console.Console
	saved       *term.State
	in          *os.File
	out         *os.File
	sock, child *os.File
	master      console.Console
	// slave is the command's side, when cordon made the terminal itself
	// (the container mode); nil when the sandbox made it.
	slave  *os.File
	copied chan struct{}
	// limit bounds what is passed on of the output (0: no limit).
	limit int64
}

// newTerminal makes the terminal of a process whose caller's terminal is
// its stdin.
func newTerminal(p *libcontainer.Process, stdin, stdout *os.File) (*terminal, error) {
	host, err := console.ConsoleFromFile(stdin)
	if err != nil {
		return nil, fmt.Errorf("terminal: stdin: %w", err)
	}
	return newTerminalOn(p, host, stdin, stdout)
}

// hostConsole finds the caller's terminal as runc's exec does: stderr,
// stdout or stdin, else the controlling terminal (/dev/tty, left open).
func hostConsole(stdin, stdout, stderr *os.File) (console.Console, error) {
	for _, f := range []*os.File{stderr, stdout, stdin} {
		if f == nil {
			continue
		}
		c, err := console.ConsoleFromFile(f)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, console.ErrNotAConsole) {
			return nil, fmt.Errorf("terminal: %w", err)
		}
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	c, err := console.ConsoleFromFile(tty)
	if err != nil {
		tty.Close()
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return c, nil
}

// newTerminalOn makes the terminal of a process whose caller's terminal is
// host (raw while the process runs, its size passed on); the input is
// copied from stdin, the output to stdout.
func newTerminalOn(p *libcontainer.Process, host console.Console, stdin, stdout *os.File) (*terminal, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	t := &terminal{
		host:   host,
		in:     stdin,
		out:    stdout,
		sock:   os.NewFile(uintptr(fds[0]), "console-parent"),
		child:  os.NewFile(uintptr(fds[1]), "console-child"),
		copied: make(chan struct{}),
	}
	p.ConsoleSocket = t.child
	return t, nil
}

// attach receives the pseudo-terminal's master from the sandbox, puts the
// caller's terminal in raw mode and starts copying.
func (t *terminal) attach() error {
	t.child.Close()
	f, err := recvFile(t.sock)
	if err != nil {
		return fmt.Errorf("terminal: receive: %w", err)
	}
	master, err := console.ConsoleFromFile(f)
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	return t.start(master)
}

// start puts the caller's terminal in raw mode and starts copying to and
// from master.
func (t *terminal) start(master console.Console) error {
	var err error
	t.master = master
	t.resize()
	// Fully raw, output processing included, as ssh does: the terminal
	// inside decides how output looks.
	if t.saved, err = term.MakeRaw(int(t.host.Fd())); err != nil {
		return fmt.Errorf("terminal: raw mode: %w", err)
	}
	go func() {
		_, _ = io.Copy(t.master, t.in)
	}()
	go func() {
		defer close(t.copied)
		if t.limit <= 0 {
			_, _ = io.Copy(t.out, t.master)
			return
		}
		lw := &limitWriter{w: t.out, limit: t.limit}
		_, _ = io.Copy(lw, t.master)
		if lw.dropped > 0 {
			fmt.Fprintf(t.out, "\r\n[cordon: output truncated: %d bytes kept, %d dropped (output limit)]\r\n", t.limit, lw.dropped)
		}
	}()
	return nil
}

func (t *terminal) resize() {
	if t.master == nil {
		return
	}
	if ws, err := t.host.Size(); err == nil {
		_ = t.master.Resize(ws)
	}
}

// drain waits until what the command wrote has reached the caller (the
// copy ends when the last writer inside closes the terminal).
func (t *terminal) drain(d time.Duration) {
	if t.master == nil {
		return
	}
	select {
	case <-t.copied:
	case <-time.After(d):
	}
}

func (t *terminal) close() {
	if t.saved != nil {
		_ = term.Restore(int(t.host.Fd()), t.saved)
	}
	if t.master != nil {
		t.master.Close()
	}
	t.sock.Close()
	t.child.Close()
}

// recvFile receives one file descriptor sent with SCM_RIGHTS.
func recvFile(sock *os.File) (*os.File, error) {
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), name, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, errors.New("expected one control message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, err
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("expected one descriptor")
	}
	return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
}
