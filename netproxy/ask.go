package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"time"
)

// Question is what an Asker is asked: may the run connect to host:port? It
// is also the JSON an ask command reads on stdin and an ask socket receives.
type Question struct {
	Run  string `json:"run"`
	Host string `json:"host"`
	Port int    `json:"port"`
}

// Answer is the JSON an ask command writes on stdout and an ask socket
// sends back: {"allow": true}, {"allow": false}, or {"allow": false,
// "reason": "..."}.
type Answer struct {
	Allow  *bool  `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// Reply is an Asker's answer. Reason, when it refuses, says why: the
// refusal shows it to the command and its record keeps it.
type Reply struct {
	Allow  bool
	Reason string
}

// Asker decides about a destination that matches neither the allow nor the
// deny list. An error refuses (fail closed), and is not remembered.
type Asker interface {
	Ask(ctx context.Context, q Question) (Reply, error)
}

// AskFunc adapts a yes-or-no function to Asker.
type AskFunc func(ctx context.Context, q Question) (bool, error)

// Ask calls f.
func (f AskFunc) Ask(ctx context.Context, q Question) (Reply, error) {
	allow, err := f(ctx, q)
	return Reply{Allow: allow}, err
}

// maxAnswer bounds what is read from an ask command or socket.
const maxAnswer = 64 << 10

// AskCommand asks an external program: it gets the Question as JSON on
// stdin and answers {"allow": true} or {"allow": false} (with a "reason"
// if it likes) on stdout, exiting 0. Anything else — another exit status,
// no answer, the context's deadline — refuses.
type AskCommand struct {
	// Path is the program; Args its arguments (without Path).
	Path string
	Args []string
	// Env is the program's environment (nil: cordon's own).
	Env []string
	// Stderr receives the program's stderr (nil: discarded).
	Stderr io.Writer
}

// Ask runs the command once.
func (a *AskCommand) Ask(ctx context.Context, q Question) (Reply, error) {
	in, err := json.Marshal(q)
	if err != nil {
		return Reply{}, err
	}
	cmd := exec.CommandContext(ctx, a.Path, a.Args...)
	cmd.Env = a.Env
	cmd.Stdin = bytes.NewReader(append(in, '\n'))
	out := &limitedBuffer{max: maxAnswer}
	cmd.Stdout = out
	cmd.Stderr = a.Stderr
	// a grandchild holding stdout open must not keep the question open
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Reply{}, fmt.Errorf("ask command %s: %w", a.Path, ctx.Err())
		}
		return Reply{}, fmt.Errorf("ask command %s: %w", a.Path, err)
	}
	reply, err := parseAnswer(out.Bytes())
	if err != nil {
		return Reply{}, fmt.Errorf("ask command %s: %w", a.Path, err)
	}
	return reply, nil
}

// AskSocket asks an agent that serves a unix socket: cordon connects, writes
// the Question as one line of JSON, and reads one line of JSON, the Answer.
// A server may keep the connection open for more questions; cordon uses one
// connection per question.
type AskSocket struct {
	Path string
}

// Ask sends one question.
func (a *AskSocket) Ask(ctx context.Context, q Question) (Reply, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", a.Path)
	if err != nil {
		return Reply{}, fmt.Errorf("ask socket: %w", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	in, err := json.Marshal(q)
	if err != nil {
		return Reply{}, err
	}
	if _, err := c.Write(append(in, '\n')); err != nil {
		return Reply{}, fmt.Errorf("ask socket %s: %w", a.Path, errOr(ctx, err))
	}
	line, err := bufio.NewReaderSize(io.LimitReader(c, maxAnswer), 4096).ReadSlice('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if errors.Is(err, bufio.ErrBufferFull) {
			err = errors.New("answer line too long")
		}
		return Reply{}, fmt.Errorf("ask socket %s: %w", a.Path, errOr(ctx, err))
	}
	reply, err := parseAnswer(line)
	if err != nil {
		return Reply{}, fmt.Errorf("ask socket %s: %w", a.Path, err)
	}
	return reply, nil
}

// errOr prefers the context's error, which says why an I/O was cut short.
func errOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// parseAnswer reads {"allow": bool} with an optional string "reason",
// kept when allow is false; anything else is an error.
func parseAnswer(b []byte) (Reply, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Reply{}, errors.New("no answer")
	}
	var a Answer
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&a); err != nil {
		return Reply{}, fmt.Errorf("bad answer %q: %w", abbrev(b), err)
	}
	if dec.More() {
		return Reply{}, fmt.Errorf("bad answer %q: more than one value", abbrev(b))
	}
	if a.Allow == nil {
		return Reply{}, fmt.Errorf(`bad answer %q: no boolean "allow"`, abbrev(b))
	}
	if *a.Allow {
		return Reply{Allow: true}, nil
	}
	return Reply{Reason: a.Reason}, nil
}

func abbrev(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
