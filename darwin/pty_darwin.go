package darwin

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

// PTY is a pseudo-terminal for one command: cordon keeps the master, the
// command gets the slave as its controlling terminal.
type PTY struct {
	master, slave *os.File
	name          string
	copied        chan struct{} // closed when the command's output is copied out
}

// OpenPTY opens a new pseudo-terminal.
func OpenPTY() (*PTY, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	name := new([128]byte)
	for _, step := range []struct {
		what string
		req  uintptr
		arg  unsafe.Pointer
	}{
		{"grant", syscall.TIOCPTYGRANT, nil},
		{"unlock", syscall.TIOCPTYUNLK, nil},
		{"name", syscall.TIOCPTYGNAME, unsafe.Pointer(name)},
	} {
		if err := ioctl(m, step.req, step.arg); err != nil {
			m.Close()
			return nil, fmt.Errorf("pseudo-terminal %s: %w", step.what, err)
		}
	}
	p := &PTY{master: m, name: string(name[:bytes.IndexByte(name[:], 0)])}
	if p.slave, err = os.OpenFile(p.name, os.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		m.Close()
		return nil, fmt.Errorf("open %s: %w", p.name, err)
	}
	return p, nil
}

// Name returns the terminal's device, /dev/ttysN: the profile's
// Request.TTY.
func (p *PTY) Name() string { return p.name }

// Close closes both ends.
func (p *PTY) Close() error {
	p.slave.Close()
	return p.master.Close()
}

// attach makes the terminal cmd's stdio and controlling terminal, and
// starts copying in and out. The returned func restores the caller's
// terminal and stops following its size.
func (p *PTY) attach(cmd *exec.Cmd, in io.Reader, out io.Writer) (func(), error) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, p.slave, p.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if out == nil {
		out = io.Discard
	}
	p.copied = make(chan struct{})
	go func() {
		_, _ = io.Copy(out, p.master) // ends with EIO once every holder of the slave is gone
		close(p.copied)
	}()
	restore := func() {}
	if term, ok := in.(*os.File); ok {
		if saved, err := makeRaw(term); err == nil {
			resize := func() {
				var ws winsize
				if ioctl(term, syscall.TIOCGWINSZ, unsafe.Pointer(&ws)) == nil {
					_ = ioctl(p.master, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
				}
			}
			resize()
			winch := make(chan os.Signal, 1)
			signal.Notify(winch, syscall.SIGWINCH)
			go func() {
				for range winch {
					resize()
				}
			}()
			restore = func() {
				signal.Stop(winch)
				close(winch)
				_ = ioctl(term, syscall.TIOCSETA, unsafe.Pointer(saved))
			}
		}
	}
	if in != nil {
		go func() { _, _ = io.Copy(p.master, in) }()
	}
	return restore, nil
}

// started drops cordon's copy of the slave once the command holds it, so
// that the output copy ends when the command's side closes.
func (p *PTY) started() { p.slave.Close() }

// drain waits up to d for the command's output to be copied out.
func (p *PTY) drain(d time.Duration) {
	select {
	case <-p.copied:
	case <-time.After(d):
		p.master.Close()
		<-p.copied
	}
}

// winsize is struct winsize of <sys/ttycom.h>.
type winsize struct{ Row, Col, Xpixel, Ypixel uint16 }

// makeRaw puts the terminal f in raw mode and returns its previous state;
// it fails when f is not a terminal.
func makeRaw(f *os.File) (*syscall.Termios, error) {
	saved := new(syscall.Termios)
	if err := ioctl(f, syscall.TIOCGETA, unsafe.Pointer(saved)); err != nil {
		return nil, err
	}
	raw := *saved
	raw.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP | syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON
	raw.Oflag &^= syscall.OPOST
	raw.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	raw.Cflag &^= syscall.CSIZE | syscall.PARENB
	raw.Cflag |= syscall.CS8
	raw.Cc[syscall.VMIN], raw.Cc[syscall.VTIME] = 1, 0
	if err := ioctl(f, syscall.TIOCSETA, unsafe.Pointer(&raw)); err != nil {
		return nil, err
	}
	return saved, nil
}

// ioctl runs ioctl(2) on f without taking f out of Go's poller (f.Fd
// would make it blocking, and Close could then not end a pending Read).
func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}
