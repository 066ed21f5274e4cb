package stack

import (
	"runtime"
	"testing"
)

// stackInUse is the stack the runtime holds for goroutines, in bytes.
func stackInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.StackInuse
}

// TestGrow checks that Grow leaves a goroutine a stack of at least its
// frame: goroutines that called it hold that much more stack than as many
// that did not.
func TestGrow(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("Grow does nothing on " + runtime.GOARCH)
	}
	const n = 16
	measure := func(grow bool) uint64 {
		before := stackInUse()
		ready, done := make(chan struct{}), make(chan struct{})
		for range n {
			go func() {
				if grow {
					Grow()
				}
				ready <- struct{}{}
				<-done
			}()
		}
		for range n {
			<-ready
		}
		after := stackInUse()
		close(done)
		return after - before
	}
	plain, grown := measure(false), measure(true)
	if grown < plain+n*frame {
		t.Errorf("%d goroutines that called Grow hold %d bytes of stack, those that did not %d: want at least %d more", n, grown, plain, n*frame)
	}
}
