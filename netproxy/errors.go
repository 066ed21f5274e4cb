package netproxy

import "errors"

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrPattern: an allow or deny entry cannot be parsed.
	ErrPattern = errors.New("bad domain pattern")
	// ErrHost: a destination host is not a valid name or address.
	ErrHost = errors.New("bad host")
	// ErrClosed: Serve was called on, or returned because of, a closed Proxy.
	ErrClosed = errors.New("proxy closed")
	// ErrRefused: the proxy refused the destination (see RefusedError).
	ErrRefused = errors.New("refused by the network policy")
)

// RefusedError is a refusal seen by a client of the proxy (DialConnect).
type RefusedError struct {
	// Reason is the X-Proxy-Error value (blocked-by-allowlist, ...), or
	// empty when the proxy did not say.
	Reason Reason
	// Status is the HTTP status line the proxy answered with.
	Status string
	// Message is the explanation the proxy gave (the response body).
	Message string
}

func (e *RefusedError) Error() string {
	s := "proxy answered " + e.Status
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes errors.Is(err, ErrRefused) true for policy refusals.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused && e.Reason != "" }
