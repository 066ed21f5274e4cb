package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// socketPair is a connected pair of unix stream sockets.
func socketPair(t *testing.T) (client, server *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

func TestReadRequest(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name  string
		fds   []int
		line  string
		after string
		ok    bool
	}{
		{"three descriptors", []int{int(r.Fd()), int(w.Fd()), int(w.Fd())}, `{"cordon":1,"args":["--","true"],"cwd":"/"}`, `{"type":"signal","signal":15}`, true},
		{"two descriptors", []int{int(r.Fd()), int(w.Fd())}, `{"cordon":1,"args":["--","true"],"cwd":"/"}`, "", false},
		{"no descriptors", nil, `{"cordon":1,"args":["--","true"],"cwd":"/"}`, "", false},
		{"not JSON", []int{int(r.Fd()), int(w.Fd()), int(w.Fd())}, `cordon run -- true`, "", false},
		{"an unchecked request", []int{int(r.Fd()), int(w.Fd()), int(w.Fd())}, `{"cordon":1,"args":[],"cwd":"/"}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := socketPair(t)
			data := []byte(tc.line + "\n" + tc.after)
			var oob []byte
			if tc.fds != nil {
				oob = syscall.UnixRights(tc.fds...)
			}
			if _, _, err := client.WriteMsgUnix(data[:1], oob, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Write(data[1:]); err != nil {
				t.Fatal(err)
			}
			client.CloseWrite()
			req, stdio, rest, err := readRequest(server)
			if (err == nil) != tc.ok {
				t.Fatalf("readRequest: %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				return
			}
			for _, f := range stdio {
				defer f.Close()
			}
			if req.Args[1] != "true" || stdio[2] == nil {
				t.Errorf("request %+v, stdio %v", req, stdio)
			}
			// What came after the line is the client's signals.
			if !strings.HasPrefix(tc.after, string(rest)) {
				t.Errorf("rest %q, want a prefix of %q", rest, tc.after)
			}
		})
	}
}

// TestAcceptAgain: accept out of descriptors (many clients at once under a
// low RLIMIT_NOFILE) is a failure of the moment, which the daemon waits
// out; it used to end cordon serve.
func TestAcceptAgain(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: dir + "/s", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	// No descriptor left above those open now.
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	top := f.Fd()
	f.Close()
	low := syscall.Rlimit{Cur: uint64(top), Max: saved.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	_, acceptErr := ln.AcceptUnix()
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	if acceptErr == nil || !acceptAgain(acceptErr) {
		t.Errorf("accept with no descriptor left: %v, want an error acceptAgain takes", acceptErr)
	}
	if acceptAgain(net.ErrClosed) {
		t.Error("a closed listener is not a failure of the moment")
	}
}

// TestHandleNoSandbox: a request whose sandbox cannot be made falls back
// to the client (nothing ran), said on the command's stderr; the run is
// abandoned, not reported as done.
func TestHandleNoSandbox(t *testing.T) {
	client, server := socketPair(t)
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer errR.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var abandoned, done atomic.Bool
	s := &Server{Compile: func(context.Context, *Request, []*os.File) (*Run, error) {
		// A run of its own (Alone) whose spec no sandbox can be made of.
		return &Run{Spec: &specs.Spec{}, Alone: true, Abandon: func() { abandoned.Store(true) }, Done: func(int, error) { done.Store(true) }}, nil
	}}
	line := []byte(`{"cordon":1,"args":["--","true"],"cwd":"/"}` + "\n")
	if _, _, err := client.WriteMsgUnix(line, syscall.UnixRights(int(null.Fd()), int(null.Fd()), int(errW.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	errW.Close()
	go s.handle(context.Background(), server)
	answer, err := bufio.NewReader(client).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(answer, `{"type":"fallback","reason":"no sandbox could be made: `) {
		t.Errorf("answer %q, want a fallback", answer)
	}
	said, _ := io.ReadAll(errR)
	if !strings.HasPrefix(string(said), "cordon: warning: cordon serve could not make a sandbox (") {
		t.Errorf("the command's stderr: %q, want the warning", said)
	}
	if !abandoned.Load() || done.Load() {
		t.Errorf("abandoned %v, done %v: want abandoned only", abandoned.Load(), done.Load())
	}
}
