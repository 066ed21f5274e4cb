//go:build !linux || !cgo

package serve

// DeclinedEarly reports whether the C client handed this process's
// cordon run to the daemon and was declined: never without it.
func DeclinedEarly() bool { return false }

// ClientFlags are the flags the C client lets through: none without it.
func ClientFlags() map[string]bool { return nil }

// ClientScan is where the C client finds the command: -1, it leaves every
// command line to Go.
func ClientScan([]string) int { return -1 }

// ClientHookInputLimit is the most of cordon hook claude's input the C
// client keeps: none without it.
func ClientHookInputLimit() int64 { return 0 }
