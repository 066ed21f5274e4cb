package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrGone says the daemon went away while the command ran: its status is
// unknown.
var ErrGone = errors.New("cordon serve went away during the run")

// Call runs a command through the daemon at sock, as cordon run's own
// client does (docs/protocol.md): it sends req with files (stdin,
// stdout, stderr, and the descriptor of --cwd-fd when req has one), passes the
// signals from sigs on (stopping this process after the command on
// SIGTSTP, SIGTTIN and SIGTTOU), and returns the run's exit status. The daemon
// declining the request is a *Declined error; its failing, an *Failed
// error with the status (125) cordon run would exit with. Any other error
// before the command started means it did not run; ErrGone, that it may
// have.
func Call(ctx context.Context, sock string, req Request, files []*os.File, sigs <-chan os.Signal) (int, error) {
	c, err := Dial(ctx, sock)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if req.Cordon == 0 {
		req.Cordon = Version
	}
	line, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	line = append(line, '\n')
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	if _, _, err := c.WriteMsgUnix(line[:1], syscall.UnixRights(fds...), nil); err != nil {
		return 0, err
	}
	if _, err := c.Write(line[1:]); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				c.Close()
				return
			case sig := <-sigs:
				s, ok := sig.(syscall.Signal)
				if !ok {
					continue
				}
				switch s {
				case syscall.SIGCHLD, syscall.SIGURG, syscall.SIGPIPE, syscall.SIGWINCH:
					// The client's own business.
					continue
				}
				_, _ = c.Write(Line(Signal{TypeSignal, int(s)}))
				switch s {
				case syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
					// Job control, as in a cold run: the command stops,
					// then the client, so that its shell gets the prompt
					// back; SIGCONT resumes both.
					_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
				}
			}
		}
	}()
	r := bufio.NewReader(c)
	started := false
	for {
		data, err := r.ReadBytes('\n')
		if err != nil {
			if started {
				return 0, ErrGone
			}
			return 0, fmt.Errorf("cordon serve: %w", err)
		}
		var m struct {
			Type    string `json:"type"`
			Status  int    `json:"status"`
			Message string `json:"message"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return 0, fmt.Errorf("cordon serve: %w", err)
		}
		switch m.Type {
		case TypeStarted:
			started = true
		case TypeExit:
			return m.Status, nil
		case TypeError:
			return m.Status, &Failed{Status: m.Status, Message: m.Message}
		case TypeFallback:
			return 0, &Declined{Reason: m.Reason}
		}
	}
}

// Failed is cordon's own failure to run a command, as the daemon reported
// it (and said it on the command's stderr).
type Failed struct {
	Status  int
	Message string
}

func (f *Failed) Error() string { return f.Message }
