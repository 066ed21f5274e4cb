package shell

import "errors"

// Errors Parse returns (wrapped); a script with any of them is never allowed
// by a rule and classifies as DangerFullAccess.
var (
	// ErrSyntax: bash would refuse the input, or run only its first lines.
	ErrSyntax = errors.New("shell syntax error")
	// ErrTooLarge: the input is longer than the parser accepts.
	ErrTooLarge = errors.New("command too large to analyse")
	// ErrTooComplex: the input expands into more commands, nesting or work
	// than the parser follows.
	ErrTooComplex = errors.New("command too complex to analyse")
	// ErrNUL: the input contains a NUL byte, which bash and the rules see
	// differently.
	ErrNUL = errors.New("command contains a NUL byte")
)

// ErrPattern is wrapped by the errors of ParsePattern.
var ErrPattern = errors.New("bad Bash rule")
