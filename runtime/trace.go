package runtime

import (
	"fmt"
	"os"
	goruntime "runtime"
	"time"
)

// processStart is about when this process started: when the runtime
// package is initialised, after the Go runtime and the packages it
// imports (GODEBUG=inittrace=1 puts all package initialisation at under
// 1 ms).
var processStart = time.Now()

// traceOn is whether CORDON_TRACE is set: the first tool for finding
// where startup time goes.
var traceOn = os.Getenv("CORDON_TRACE") != ""

// Trace prints step, with the time since the process started, to stderr
// when CORDON_TRACE is set: for the steps of cordon's commands around a
// sandbox (see tracer for the sandbox's own).
func Trace(step string) {
	if traceOn {
		fmt.Fprintf(os.Stderr, "cordon: trace %8.3fms %s\n", ms(time.Since(processStart)), step)
	}
}

// tracer prints how long the steps of a sandbox took, to stderr, when
// CORDON_TRACE is set: the time since the sandbox was begun and, in
// brackets, since the process started.
type tracer struct {
	start time.Time
	on    bool
}

func newTracer() *tracer {
	return &tracer{start: time.Now(), on: traceOn}
}

func (t *tracer) mark(step string) {
	if t.on {
		now := time.Now()
		fmt.Fprintf(os.Stderr, "cordon: trace %8.3fms (%8.3fms) %s\n", ms(now.Sub(t.start)), ms(now.Sub(processStart)), step)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// stuckAfter is how long a step may take before a tracer's watch prints
// every goroutine's stack.
const stuckAfter = 10 * time.Second

// watch prints every goroutine's stack to stderr, once, when step has not
// ended stuckAfter from now, if tracing is on: a sandbox that does not
// start says where cordon waits (SIGQUIT cannot: cordon takes every
// signal for its command by then). Call the returned function when the
// step ends.
func (t *tracer) watch(step string) (done func()) {
	if !t.on {
		return func() {}
	}
	timer := time.AfterFunc(stuckAfter, func() {
		fmt.Fprintf(os.Stderr, "cordon: trace: %s has taken %v; cordon's goroutines:\n", step, stuckAfter)
		buf := make([]byte, 1<<20)
		os.Stderr.Write(buf[:goruntime.Stack(buf, true)])
	})
	return func() { timer.Stop() }
}
