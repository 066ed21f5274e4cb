package probe

import (
	"os"
	"testing"
)

// TestMain makes the test binary a probe child when Run re-executes it.
func TestMain(m *testing.M) {
	Child()
	os.Exit(m.Run())
}
