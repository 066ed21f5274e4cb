package darwin

import (
	"fmt"
	"io"
	"sync"
)

// limitWriter passes on the first limit bytes written to it and counts
// the rest: an agent reads every byte a command prints, and an endless
// one must not flood it. Done writes a marker line saying how much was
// dropped, as cordon does on Linux.
type limitWriter struct {
	mu      sync.Mutex
	w       io.Writer
	name    string
	limit   int64
	n       int64
	dropped int64
}

func newLimitWriter(w io.Writer, name string, limit int64) *limitWriter {
	return &limitWriter{w: w, name: name, limit: limit}
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := min(int64(len(p)), max(l.limit-l.n, 0))
	if keep > 0 {
		if _, err := l.w.Write(p[:keep]); err != nil {
			return 0, err
		}
		l.n += keep
	}
	l.dropped += int64(len(p)) - keep
	return len(p), nil
}

// Done writes the marker line when anything was dropped.
func (l *limitWriter) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped > 0 {
		fmt.Fprintf(l.w, "\n[cordon: %s truncated: %d bytes kept, %d dropped (output limit)]\n", l.name, l.n, l.dropped)
	}
}
