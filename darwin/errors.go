package darwin

import "errors"

// ErrInvalid is wrapped by errors about a policy or request that cannot be
// compiled into a profile: a relative path, a path Seatbelt cannot express,
// a bad run tag, network filtering without the proxy's ports.
var ErrInvalid = errors.New("invalid macOS sandbox request")

// ExitCordonFailed is the status Run returns when cordon itself could not
// carry out the run; nothing ran.
const ExitCordonFailed = 125

// Errors of LookCommand: the command cannot be executed.
var (
	ErrNotFound      = errors.New("command not found")
	ErrNotExecutable = errors.New("permission denied")
)
