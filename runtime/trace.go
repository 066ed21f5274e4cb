package runtime

import (
	"fmt"
	"os"
	"time"
)

// tracer prints how long the steps of a run took, to stderr, when
// CORDON_TRACE is set: the first tool for finding where startup time goes.
type tracer struct {
	start time.Time
	on    bool
}

func newTracer() *tracer {
	return &tracer{start: time.Now(), on: os.Getenv("CORDON_TRACE") != ""}
}

func (t *tracer) mark(step string) {
	if t.on {
		fmt.Fprintf(os.Stderr, "cordon: trace %8.3fms %s\n", float64(time.Since(t.start).Microseconds())/1000, step)
	}
}
