package policy

import (
	"errors"
	"fmt"
)

// ErrSettings is wrapped by every error about settings: a file that cannot
// be read or parsed, an unknown key, a wrong type, a bad entry.
var ErrSettings = errors.New("invalid settings")

// SettingsError is a problem at a position in a settings file (or in a
// flag, where File names the flag and Pos is zero).
type SettingsError struct {
	File string
	Pos  Pos
	Msg  string
}

func (e *SettingsError) Error() string {
	if e.Pos.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Unwrap lets callers test for ErrSettings.
func (e *SettingsError) Unwrap() error { return ErrSettings }

// ErrHook is wrapped by the errors of a hook that failed (cordon.hooks):
// it could not start, ended with a non-zero status, ran out of time, or
// answered something cordon cannot read.
var ErrHook = errors.New("hook failed")

// ErrHookInput is wrapped by the errors of ParseClaudeHook: input that is
// not Claude Code's PreToolUse JSON, or that cordon cannot pass on
// faithfully.
var ErrHookInput = errors.New("malformed hook input")

// DeniedError is a denial (Decision.Err): the rule or policy entry that
// denied, when one did, and the reason.
type DeniedError struct {
	Rule   string
	Reason string
}

func (e *DeniedError) Error() string { return "denied: " + e.Reason }
