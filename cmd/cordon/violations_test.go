package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"90m", now.Add(-90 * time.Minute), false},
		{"2h", now.Add(-2 * time.Hour), false},
		{"7d", now.AddDate(0, 0, -7), false},
		{"0s", now, false},
		{"2026-11-20T08:30:00Z", time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC), false},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local), false},
		{"-2h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"d", time.Time{}, true},
		{"", time.Time{}, true},
	}
	for _, tc := range tests {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (error: %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"90m", "7d", "2026-11-20", "2026-11-20T08:30:00Z", "-1h", "d", "99999999999d", "1e9h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err == nil && got.After(now) && !strings.Contains(s, "T") && !strings.Contains(s, "-") {
			t.Errorf("parseSince(%q) = %v, after now for a duration", s, got)
		}
	})
}
