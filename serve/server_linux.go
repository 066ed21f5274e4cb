package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/runtime"
)

// state is a serving daemon's.
type state struct {
	pool   *pool
	active atomic.Int64
	last   atomic.Int64 // unix nanoseconds of the last request's end
	stop   chan struct{}
	once   sync.Once
	ln     *net.UnixListener
	wg     sync.WaitGroup
}

// Serve answers requests on ln until ctx is done, the daemon has been idle
// for s.Idle, or it is stale. Sandboxes ready when it returns are ended.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	if s.Pool <= 0 {
		s.Pool = 4
	}
	s.st = &state{stop: make(chan struct{})}
	s.st.ln = ln
	s.st.last.Store(time.Now().UnixNano())
	host, err := runtime.HostPaths(s.Root)
	if err != nil {
		return err
	}
	if err := runtime.Prepare(host); err != nil {
		return err
	}
	s.st.pool = newPool(s.Pool, 1, func(sp *specs.Spec, o runtime.Options) (*runtime.Pooled, error) {
		// The sandbox root gets a mountpoint for a new top-level entry.
		if err := runtime.Prepare(host); err != nil {
			return nil, err
		}
		return runtime.NewPooled(sp, o)
	})
	s.st.pool.log = s.logf
	defer func() { s.logf("pool: %s", s.st.pool.stats()) }()
	defer s.st.pool.close()
	if err := watchMounts(s.st.pool.changed, s.st.stop); err != nil {
		return fmt.Errorf("watch the mount table: %w", err)
	}
	_, _ = runtime.GC(s.Root)
	go s.housekeeping(ctx)

	var backoff time.Duration
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			select {
			case <-s.st.stop:
				s.st.wg.Wait()
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if acceptAgain(err) {
				// Out of descriptors or memory for a moment (many
				// clients at once under a low RLIMIT_NOFILE): the
				// connections wait in the backlog, as net/http's do.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			s.shutdown()
			s.st.wg.Wait()
			return err
		}
		backoff = 0
		s.st.active.Add(1)
		s.st.wg.Add(1)
		go func() {
			defer s.st.wg.Done()
			defer func() {
				s.st.last.Store(time.Now().UnixNano())
				s.st.active.Add(-1)
			}()
			s.handle(ctx, c)
		}()
	}
}

// shutdown stops accepting requests; those being run go on to their end.
func (s *Server) shutdown() {
	s.st.once.Do(func() {
		close(s.st.stop)
		s.st.ln.Close()
	})
}

// housekeeping ends the daemon when ctx is done or it has been idle, and
// keeps the pool fresh.
func (s *Server) housekeeping(ctx context.Context) {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	gc := time.Now()
	var lastStats string
	for {
		select {
		case <-ctx.Done():
			s.shutdown()
			return
		case <-s.st.stop:
			return
		case <-tick.C:
		}
		idle := time.Since(time.Unix(0, s.st.last.Load()))
		if s.Idle > 0 && s.st.active.Load() == 0 && idle > s.Idle {
			s.logf("idle for %s: exiting", idle.Round(time.Second))
			s.shutdown()
			return
		}
		if s.Stale != nil && s.st.active.Load() == 0 && s.Stale() {
			s.logf("stale (cordon's binary or settings changed): exiting")
			s.shutdown()
			return
		}
		s.st.pool.sweep()
		if st := s.st.pool.stats(); st != lastStats {
			s.logf("pool: %s", st)
			lastStats = st
		}
		if time.Since(gc) > time.Minute {
			_, _ = runtime.GC(s.Root)
			gc = time.Now()
		}
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "cordon serve: "+format+"\n", args...)
	}
}

// handle runs one request.
func (s *Server) handle(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	// Only the daemon's own user: anyone else would run commands as it.
	if uid, err := peerUID(c); err != nil || uid != os.Geteuid() {
		return
	}
	req, stdio, rest, err := readRequest(c)
	if err != nil {
		_, _ = c.Write(Line(Error{TypeError, 125, "bad request: " + err.Error()}))
		return
	}
	// The client's descriptors go as soon as the answer is written: a
	// caller that reads the command's output to its end waits for every
	// copy to close, and the sandbox's destruction comes after.
	closeStdio := func() {
		for i, f := range stdio {
			if f != nil {
				f.Close()
				stdio[i] = nil
			}
		}
	}
	stderr := stdio[2]
	defer closeStdio()
	if req.Binary != "" && req.Binary != s.Binary {
		_, _ = c.Write(Line(Fallback{TypeFallback, "the daemon runs another cordon binary"}))
		return
	}
	if s.Stale != nil && s.Stale() {
		_, _ = c.Write(Line(Fallback{TypeFallback, "the daemon is stale (cordon's binary or settings changed)"}))
		s.shutdown()
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 16)
	// The client's end of the connection: signals for the command, and
	// the client's going away, which ends the run as cordon's death ends
	// a cold one.
	go func() {
		defer cancel()
		readSignals(io.MultiReader(bytes.NewReader(rest), c), sigs)
	}()
	var mu sync.Mutex
	write := func(m any) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = c.Write(Line(m))
	}
	fail := func(err error) {
		fmt.Fprintf(stderr, "cordon: %v\n", err)
		write(Error{TypeError, 125, err.Error()})
		closeStdio()
	}

	r, err := s.Compile(ctx, req, stdio)
	var declined *Declined
	if errors.As(err, &declined) {
		write(Fallback{TypeFallback, declined.Reason})
		return
	}
	if err != nil {
		fail(err)
		return
	}
	if r.Direct != nil {
		status := r.Direct(ctx)
		// The descriptors first: the client reads its output to the end
		// once it has the status.
		closeStdio()
		write(Exit{TypeExit, status, nil})
		return
	}
	var notes []string
	notify := r.Options.Notify
	r.Options.Notify = func(msg string) {
		mu.Lock()
		notes = append(notes, msg)
		mu.Unlock()
		if notify != nil {
			notify(msg)
		}
	}
	p, key, err := s.sandbox(r)
	if err != nil {
		// Nothing ran: the client runs the command cold, which says why
		// if it fails again. Said, not hidden: a daemon that cannot make
		// sandboxes is a daemon to look at (its log has the ones it
		// could not make ahead).
		s.logf("make a sandbox for a command: %v", err)
		fmt.Fprintf(stderr, "cordon: warning: cordon serve could not make a sandbox (%v): the command runs without it, cold\n", err)
		if r.Abandon != nil {
			r.Abandon()
		}
		write(Fallback{TypeFallback, "no sandbox could be made: " + err.Error()})
		return
	}
	if r.Bind != nil {
		r.Bind(p.ID())
	}
	write(Started{TypeStarted, p.ID()})
	status, err := p.Run(ctx, r.Spec, r.Options, sigs)
	// After the answer: the client need not wait for the cgroup to go.
	defer s.release(p, key)
	if r.Done != nil {
		r.Done(status, err)
	}
	if err != nil {
		fail(err)
		return
	}
	mu.Lock()
	ns := notes
	mu.Unlock()
	write(Exit{TypeExit, status, ns})
	closeStdio()
}

// sandbox returns the sandbox for a run, from the pool or made for it,
// and its shelf's key ("" when it is the run's alone).
func (s *Server) sandbox(r *Run) (*runtime.Pooled, string, error) {
	if r.Alone {
		p, err := runtime.NewPooled(r.Spec, r.Sandbox)
		return p, "", err
	}
	key, err := runtime.PoolKey(r.Spec)
	if err != nil {
		return nil, "", err
	}
	key += "/" + r.Key
	p, err := s.st.pool.get(key, r.Spec, r.Sandbox)
	return p, key, err
}

// release destroys a used sandbox; the pool makes the next ones of its
// kind.
func (s *Server) release(p *runtime.Pooled, key string) {
	p.Release()
	if key != "" {
		s.st.pool.done(key)
	}
}

// readRequest reads the request line and the descriptors that come with
// it (stdin, stdout, stderr, and for --cwd-fd a fourth); rest is what was
// read past the line.
func readRequest(c *net.UnixConn) (_ *Request, stdio []*os.File, rest []byte, err error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	var buf []byte
	var fds []int
	chunk := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(16*4))
	defer func() {
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
	}()
	for {
		n, oobn, _, _, rerr := c.ReadMsgUnix(chunk, oob)
		if oobn > 0 {
			msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
			if perr != nil {
				return nil, stdio, nil, perr
			}
			for i := range msgs {
				got, perr := unix.ParseUnixRights(&msgs[i])
				if perr == nil {
					for _, fd := range got {
						unix.CloseOnExec(fd)
					}
					fds = append(fds, got...)
				}
			}
		}
		buf = append(buf, chunk[:n]...)
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			rest = buf[i+1:]
			buf = buf[:i]
			break
		}
		if rerr != nil {
			return nil, stdio, nil, rerr
		}
		if n == 0 {
			return nil, stdio, nil, io.ErrUnexpectedEOF
		}
		if len(buf) > MaxRequest {
			return nil, stdio, nil, errors.New("request too long")
		}
	}
	var req Request
	if err := json.Unmarshal(buf, &req); err != nil {
		return nil, stdio, nil, err
	}
	if err := req.Check(); err != nil {
		return nil, stdio, nil, err
	}
	if len(fds) != 3 && len(fds) != 4 {
		return nil, stdio, nil, fmt.Errorf("%d descriptors with the request (stdin, stdout and stderr, and one for --cwd-fd: 3 or 4)", len(fds))
	}
	for i, fd := range fds {
		stdio = append(stdio, os.NewFile(uintptr(fd), "client-"+strconv.Itoa(i)))
	}
	return &req, stdio, rest, nil
}

// readSignals passes the client's signal messages on until its end of the
// connection closes.
func readSignals(r io.Reader, sigs chan<- os.Signal) {
	dec := json.NewDecoder(r)
	for {
		var m Signal
		if err := dec.Decode(&m); err != nil {
			return
		}
		if m.Type == TypeSignal && m.Signal > 0 && m.Signal < 65 {
			select {
			case sigs <- syscall.Signal(m.Signal):
			default:
			}
		}
	}
}

// acceptAgain reports whether accept failed for a moment: the process or
// the machine is out of descriptors or memory, or a client gave up.
func acceptAgain(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.ECONNABORTED)
}
