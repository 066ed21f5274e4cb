package main

import (
	"testing"

	"cordon.dev/cordon/probe"
)

// TestSayOnce: a warning is said once per boot, or once per agent session
// when the run names one; a new session, or another warning, is said
// again; with neither a boot id nor a session, always.
func TestSayOnce(t *testing.T) {
	t.Setenv("CORDON_STATE_ROOT", t.TempDir())
	boot := probe.Result{BootID: "9e5386b5-0000-4000-8000-000000000000"}
	degraded, limits := []string{"no cgroup limits"}, []string{"memory is not limited"}
	for _, tc := range []struct {
		name    string
		pr      probe.Result
		session string
		what    []string
		want    bool
	}{
		{"boot, first", boot, "", degraded, true},
		{"boot, again", boot, "", degraded, false},
		{"boot, another warning", boot, "", limits, true},
		{"a session, first", boot, "0b6e3c1e-7c55-4d1e-9d0c-2f6f4e7b1a90", degraded, true},
		{"the session, again", boot, "0b6e3c1e-7c55-4d1e-9d0c-2f6f4e7b1a90", degraded, false},
		{"the session, another warning", boot, "0b6e3c1e-7c55-4d1e-9d0c-2f6f4e7b1a90", limits, true},
		{"another session", boot, "7f1c0b7e-1111-4222-8333-944445555666", degraded, true},
		{"a session id that is no file name", boot, "../../x/..", degraded, true},
		{"it, again", boot, "../../x/..", degraded, false},
		{"a session, no boot id", probe.Result{}, "s", degraded, true},
		{"it, again, no boot id", probe.Result{}, "s", degraded, false},
		{"no boot id, no session", probe.Result{}, "", degraded, true},
		{"no boot id, no session, again", probe.Result{}, "", degraded, true},
	} {
		if got := sayOnce(tc.pr, tc.session, tc.what); got != tc.want {
			t.Errorf("%s: sayOnce = %v, want %v", tc.name, got, tc.want)
		}
	}
}
