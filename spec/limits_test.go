package spec

import (
	"testing"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

// TestMemoryLimit: a share of the machine is never rounded down to no
// limit, and with both a size and a share (an untrusted workspace's size
// under the user's share) the smaller applies.
func TestMemoryLimit(t *testing.T) {
	pr := probe.Result{MemTotal: 8 << 30}
	tests := []struct {
		name string
		l    policy.Limits
		want int64
	}{
		{"none", policy.Limits{}, 0},
		{"bytes", policy.Limits{Memory: 1 << 30}, 1 << 30},
		{"share", policy.Limits{MemoryPercent: 50}, 4 << 30},
		{"a tiny share is not no limit", policy.Limits{MemoryPercent: 1e-12}, 1},
		{"bytes below the share", policy.Limits{Memory: 1 << 30, MemoryPercent: 50}, 1 << 30},
		{"share below the bytes", policy.Limits{Memory: 1 << 40, MemoryPercent: 50}, 4 << 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MemoryLimit(tc.l, pr); got != tc.want {
				t.Errorf("MemoryLimit(%+v) = %d, want %d", tc.l, got, tc.want)
			}
		})
	}
	if got := MemoryLimit(policy.Limits{Memory: 1 << 30, MemoryPercent: 50}, probe.Result{}); got != 1<<30 {
		t.Errorf("MemoryLimit without the machine's memory = %d, want the size", got)
	}
}
