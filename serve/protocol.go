// Package serve is cordon serve: a per-user daemon on a unix socket that
// keeps sandboxes made ahead of their commands, one pool per policy, and
// runs in them the commands that cordon run — or any client that speaks
// the protocol of docs/protocol.md — hands it, each command in a fresh
// sandbox of its own. It decides which sandbox a command gets (one made
// for exactly the spec the command compiles to, and still intact) and
// enforces that only its own user talks to it.
package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Version is the protocol's version, the request's "cordon" member.
const Version = 1

// SocketName is the daemon's socket in cordon's state directory
// (runtime.StateRoot).
const SocketName = "serve.sock"

// Socket returns the daemon's socket under the state directory root.
func Socket(root string) string { return filepath.Join(root, SocketName) }

// DisableEnv, set to 0, keeps cordon run from using or starting the
// daemon: every run is a cold run.
const DisableEnv = "CORDON_SERVE"

// Disabled reports whether the environment turns the daemon off.
func Disabled() bool { return os.Getenv(DisableEnv) == "0" }

// Request is the first line a client sends: cordon run's command line and
// where it runs. The command's standard input, output and error go with
// it, as three descriptors (SCM_RIGHTS) attached to its first bytes.
type Request struct {
	// Cordon is the protocol version, 1.
	Cordon int `json:"cordon"`
	// Args are cordon run's arguments: its flags, "--", the command and
	// its arguments.
	Args []string `json:"args"`
	// Cwd is the working directory, absolute.
	Cwd string `json:"cwd"`
	// Env is the client's environment (NAME=value), which the policy
	// filters as for cordon run.
	Env []string `json:"env"`
	// Binary, when set, names the cordon binary the client would run the
	// command with (BinaryID): a daemon running another one declines the
	// request, so that no command runs under another cordon's rules.
	Binary string `json:"binary,omitempty"`
	// Hook, when set (HookClaude), asks for the answer of cordon hook
	// claude instead of a run: Args are its flags, stdin its input, and
	// its answer goes to stdout, as the process would give them.
	Hook string `json:"hook,omitempty"`
}

// HookClaude is the Hook of a request for cordon hook claude's answer.
const HookClaude = "claude"

// BinaryID names the cordon binary at path as it is now: its device,
// inode, size and modification time.
func BinaryID(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", errors.New("binary id: no stat data")
	}
	return fmt.Sprintf("%d:%d:%d:%d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano()), nil
}

// MaxRequest bounds a request line: arguments and environment as
// execve(2) takes them, and room for JSON's escapes.
const MaxRequest = 8 << 20

// Check validates a request.
func (r *Request) Check() error {
	switch {
	case r.Cordon != Version:
		return fmt.Errorf("protocol version %d (this daemon speaks %d)", r.Cordon, Version)
	case r.Hook != "" && r.Hook != HookClaude:
		return fmt.Errorf("hook %q (this daemon answers %q)", r.Hook, HookClaude)
	case len(r.Args) == 0 && r.Hook == "":
		return errors.New("no arguments")
	case !filepath.IsAbs(r.Cwd):
		return fmt.Errorf("working directory %q is not absolute", r.Cwd)
	case strings.ContainsRune(r.Cwd, 0):
		return errors.New("working directory with a NUL byte")
	}
	// execve(2) takes no NUL inside a string, and the sandbox's init reads
	// the command as NUL-terminated strings: one inside would split an
	// entry in two, past the policy's environment filter.
	for _, a := range r.Args {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %q with a NUL byte", a)
		}
	}
	for _, kv := range r.Env {
		switch {
		case strings.ContainsRune(kv, 0):
			return fmt.Errorf("environment entry %q with a NUL byte", kv)
		case !strings.Contains(kv, "="):
			return fmt.Errorf("environment entry %q has no =", kv)
		}
	}
	return nil
}

// Message types, the "type" member of every line after the request.
const (
	// TypeStarted: the command runs, in sandbox "id".
	TypeStarted = "started"
	// TypeExit: the run is over; "status" is cordon run's exit status (the
	// command's, 128+N for a signal N, 124 for the timeout), "notes" what
	// cordon said on the command's stderr after it.
	TypeExit = "exit"
	// TypeError: cordon failed; "status" is 125 and "message" says why,
	// as cordon run says it on stderr (where it was said too).
	TypeError = "error"
	// TypeFallback: the daemon does not run this request ("reason"): the
	// client runs it itself. Nothing ran.
	TypeFallback = "fallback"
	// TypeSignal, from the client: pass "signal" on to the command.
	TypeSignal = "signal"
)

// Started says the command runs.
type Started struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Exit ends a run. Type and Status come first, in this order, on every
// line: a client may read them without a JSON parser.
type Exit struct {
	Type   string   `json:"type"`
	Status int      `json:"status"`
	Notes  []string `json:"notes,omitempty"`
}

// Error ends a run that failed.
type Error struct {
	Type    string `json:"type"`
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// Fallback declines a request.
type Fallback struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// Signal is a signal for the command, sent by the client.
type Signal struct {
	Type   string `json:"type"`
	Signal int    `json:"signal"`
}

// Line encodes a message as one line.
func Line(m any) []byte {
	data, err := json.Marshal(m)
	if err != nil {
		panic(err) // the message types always encode
	}
	return append(data, '\n')
}

// Declined is the error of a request the daemon leaves to the client.
type Declined struct{ Reason string }

func (d *Declined) Error() string { return "not for cordon serve: " + d.Reason }
