package runtime

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestLockRunAppearsLocked: another run's GC probing a run's lock while
// the run takes it never finds it free, and never makes the run fail to
// take it (TestManyRunsAtOnce saw "lock ...: resource temporarily
// unavailable").
func TestLockRunAppearsLocked(t *testing.T) {
	root := t.TempDir()
	const id = "run-0123456789ab"
	var stop atomic.Bool
	var free atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if runLocked(root, id) == lockFree {
				free.Add(1)
			}
		}
	}()
	failed := 0
	for range 3000 {
		unlock, err := lockRun(root, id)
		if err != nil {
			failed++
			continue
		}
		unlock()
	}
	stop.Store(true)
	wg.Wait()
	if failed > 0 || free.Load() > 0 {
		t.Errorf("of 3000 runs, %d could not take their lock; a probe found a lock free %d times", failed, free.Load())
	}
}
