package main

import (
	"strings"
	"time"

	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
)

// Pieces of a macOS run that are pure functions: the command's
// environment, the record of a Seatbelt denial, the wait for the unified
// log. The run is seatbelt_run.go; run_darwin.go gives it the system.

// seatbeltEnv is the environment of a command under sandbox-exec:
// darwin.Environ's, and with the proxy the variables that point at it
// (replacing the caller's own, which the sandbox could not reach). self is
// cordon's binary, for git's ssh to tunnel through the proxy.
func seatbeltEnv(p *policy.Policy, r darwin.Request, environ []string, proxied bool, self string) []string {
	env := darwin.Environ(p, r, environ)
	if !proxied {
		return env
	}
	px := netproxy.Env(r.HTTPProxyPort, r.SOCKSProxyPort, self)
	names := map[string]bool{}
	for _, kv := range px {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	out := env[:0:0]
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, px...)
}

// seatbeltViolation is the record of a denial the unified log reported,
// as the Explainer explained it.
func seatbeltViolation(v darwin.Violation, r darwin.Refusal) runtime.Violation {
	return runtime.Violation{
		Time:    v.Time,
		Kind:    r.Kind,
		Command: v.Process,
		PID:     v.PID,
		Syscall: r.Operation,
		Args:    r.Args,
		Path:    r.Path,
		Host:    r.Host,
		Port:    r.Port,
		Reason:  r.Reason,
		Hint:    r.Hint,
	}
}

// logFlush is how long a run waits, once the command has ended, for
// denials still on their way to the unified log before it stops reading
// it: longer after a failure, which a denial likely caused, than after a
// success, which every command of an agent would otherwise pay.
func logFlush(status int) time.Duration {
	if status != 0 {
		return 250 * time.Millisecond
	}
	return 25 * time.Millisecond
}
