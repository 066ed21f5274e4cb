package runtime

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// limitedOutput passes the command's stdout and stderr on, keeping the first
// limit bytes of each and dropping the rest: an agent reads every byte a
// command prints, and an endless one must not flood it. A marker line says
// how much was dropped.
type limitedOutput struct {
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	done             sync.WaitGroup
}

func newLimitedOutput(stdout, stderr *os.File, limit int64) (*limitedOutput, error) {
	o := &limitedOutput{}
	var err error
	if o.stdoutR, o.stdoutW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	if o.stderrR, o.stderrW, err = os.Pipe(); err != nil {
		o.stdoutR.Close()
		o.stdoutW.Close()
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	o.done.Add(2)
	go o.copy(stdout, o.stdoutR, limit, "stdout")
	go o.copy(stderr, o.stderrR, limit, "stderr")
	return o, nil
}

// started closes cordon's copies of the write ends, once the sandbox has
// its own: the copies then end when the sandbox's last writer is gone.
func (o *limitedOutput) started() {
	o.stdoutW.Close()
	o.stderrW.Close()
}

// wait waits until everything the command wrote has been passed on.
func (o *limitedOutput) wait() {
	o.started()
	o.done.Wait()
}

func (o *limitedOutput) copy(dst io.Writer, src *os.File, limit int64, name string) {
	defer o.done.Done()
	defer src.Close()
	n, _ := io.CopyN(dst, src, limit)
	if n < limit {
		return
	}
	// Past the limit nothing is written to dst, so no write sees a reader
	// that went away (cordon run ... | head): the command would run on for
	// ever, its output read and dropped. Without a limit it would get
	// EPIPE (SIGPIPE); so it does here, once dst is gone.
	gone := writerGone(dst)
	buf := make([]byte, 32<<10)
	var dropped int64
	for {
		n, err := src.Read(buf)
		dropped += int64(n)
		if err != nil {
			break
		}
		if gone() {
			return
		}
	}
	if dropped > 0 {
		fmt.Fprintf(dst, "\n[cordon: %s truncated: %d bytes kept, %d dropped (output limit)]\n", name, limit, dropped)
	}
}

// writerGone returns a check of whether w is a descriptor whose other end
// is gone: a pipe without a reader, a socket shut or a terminal hung up.
func writerGone(w io.Writer) func() bool {
	f, ok := w.(*os.File)
	if !ok {
		return func() bool { return false }
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return func() bool { return false }
	}
	return func() bool {
		gone := false
		_ = rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if n, err := unix.Poll(fds, 0); err == nil && n == 1 {
				gone = fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
			}
		})
		return gone
	}
}

// limitWriter passes on the first limit bytes written to it, then counts.
type limitWriter struct {
	w       io.Writer
	limit   int64
	n       int64
	dropped int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if keep := l.limit - l.n; keep > 0 {
		k := min(int64(len(p)), keep)
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.n += k
		l.dropped += int64(len(p)) - k
		return len(p), nil
	}
	l.dropped += int64(len(p))
	return len(p), nil
}
