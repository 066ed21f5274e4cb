package runtime

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSweepDue(t *testing.T) {
	tests := []struct {
		name  string
		swept time.Duration // how long ago the last sweep was; 0 for never
		due   bool
	}{
		{"never swept", 0, true},
		{"just swept", time.Second, false},
		{"swept within the minute", sweepEvery - 5*time.Second, false},
		{"swept a minute ago", sweepEvery + time.Second, true},
		{"swept an hour ago", time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			stamp := filepath.Join(root, sweptFile)
			if tt.swept != 0 {
				if err := os.WriteFile(stamp, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				then := time.Now().Add(-tt.swept)
				if err := os.Chtimes(stamp, then, then); err != nil {
					t.Fatal(err)
				}
			}
			if got := sweepDue(root); got != tt.due {
				t.Fatalf("sweepDue = %v, want %v", got, tt.due)
			}
			// A sweep now is recorded: the next run does not sweep again.
			if got := sweepDue(root); got {
				t.Errorf("sweepDue right after a sweep = true, want false")
			}
		})
	}
}
