package main

import (
	"os/user"
	"testing"
)

// TestHomeDir: $HOME when it is set, else the caller's home in the
// password database.
func TestHomeDir(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		t.Fatalf("this user has no home in the password database: %v", err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"set", map[string]string{"HOME": "/srv/agent"}, "/srv/agent"},
		{"unset", map[string]string{}, u.HomeDir},
		{"empty", map[string]string{"HOME": ""}, u.HomeDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := homeDir(func(k string) string { return tc.env[k] })
			if err != nil || got != tc.want {
				t.Errorf("homeDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
