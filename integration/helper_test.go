//go:build linux

package integration

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv turns this test binary into a small tool for the inside of a
// sandbox, so that no test needs python or netcat there:
//
//	CORDON_IT_HELPER=listen helper ADDR   accept one TCP connection, print what it sent
//	CORDON_IT_HELPER=sockets helper       try the socket families seccomp decides on
//	CORDON_IT_HELPER=userns helper        run /bin/true in a new user namespace
const helperEnv = "CORDON_IT_HELPER"

// helperModes are the variables that turn this test binary into a tool
// (VAR=MODE binary ARGS...), each with the function that runs its modes
// and returns the exit status, or badMode for a mode or arguments it does
// not know. TestMain runs the first one set, before anything else.
var helperModes = []struct {
	env string
	run func(mode string, args []string) int
}{
	{escHelperEnv, escHelper},
	{netServerEnv, netHelperMain},
	{ociEnv, ociHelperMain},
	{helperEnv, helperMain},
}

// badMode is what a helper mode's function returns for a mode or
// arguments it does not know.
const badMode = -1

// runHelper runs the helper mode set in the environment, if any: ok is
// false when none is.
func runHelper() (status int, ok bool) {
	for _, h := range helperModes {
		mode := os.Getenv(h.env)
		if mode == "" {
			continue
		}
		if status = h.run(mode, os.Args[1:]); status == badMode {
			fmt.Fprintf(os.Stderr, "%s: bad mode %q %q\n", h.env, mode, os.Args[1:])
			return 2, true
		}
		return status, true
	}
	return 0, false
}

func helperMain(mode string, args []string) int {
	switch mode {
	case "listen":
		if len(args) != 1 {
			break
		}
		return helperListen(args[0])
	case "sockets":
		return helperSockets()
	case "userns":
		return helperUserNS()
	}
	return badMode
}

func helperListen(addr string) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Printf("listen: %v\n", err)
		return 1
	}
	defer l.Close()
	fmt.Println("listening")
	_ = l.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := l.Accept()
	if err != nil {
		fmt.Printf("accept: %v\n", err)
		return 1
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	data, err := io.ReadAll(c)
	if err != nil {
		fmt.Printf("read: %v\n", err)
		return 1
	}
	fmt.Printf("got: %s", data)
	return 0
}

// helperSockets prints one line per attempt: "NAME: ok" or "NAME: ERRNO".
func helperSockets() int {
	try := func(name string, f func() error) {
		err := f()
		var errno unix.Errno
		switch {
		case err == nil:
			fmt.Printf("%s: ok\n", name)
		case errors.As(err, &errno):
			fmt.Printf("%s: %s\n", name, unix.ErrnoName(errno))
		default:
			fmt.Printf("%s: %v\n", name, err)
		}
	}
	try("socket(AF_UNIX)", func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	try("socket(AF_UNIX, SOCK_DGRAM)", func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	try("socketpair(AF_UNIX)", func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	})
	try("socket(AF_INET)", func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	return 0
}

func helperUserNS() int {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "new user namespace: %v\n", err)
		return 1
	}
	return 0
}
