package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

// TestWithoutSecrets: URLs carrying a password stay out whatever the
// variable's name; cordon.env.allow lets one in. (Names are the policy's
// cordon.env.deny: TestEnvFilter.)
func TestWithoutSecrets(t *testing.T) {
	env := []string{
		"DATABASE_URL=postgres://app:pw@db/app", "REDIS_URL=redis://:pw@cache:6379", "CONN=amqp://u:p@mq/",
		"LOCAL_DB=postgres://localhost/app", "USER_URL=https://user@example.com/", "HTTP_URL=https://example.com/a:b@c",
		"PATH=/usr/bin", "EDITOR=vi",
	}
	want := []string{"LOCAL_DB=postgres://localhost/app", "USER_URL=https://user@example.com/", "HTTP_URL=https://example.com/a:b@c", "PATH=/usr/bin", "EDITOR=vi"}
	if diff := cmp.Diff(want, withoutSecrets(env, nil)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got := withoutSecrets(env, []string{"DATABASE_URL"})
	want = append([]string{"DATABASE_URL=postgres://app:pw@db/app"}, want...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with cordon.env.allow (-want +got):\n%s", diff)
	}
}

// TestLandlockStatus: the spec says whether its Landlock rules will be
// enforced on the machine it was compiled for.
func TestLandlockStatus(t *testing.T) {
	ll := WithAnnotations(map[string]string{AnnotationLandlock: `[{"path":"/","access":"r"}]`})
	withABI := probe.Result{ProbedAt: time.Unix(1, 0)}
	withABI.Landlock.Available, withABI.Landlock.ABI = true, 6
	without := probe.Result{ProbedAt: time.Unix(1, 0)}
	for _, tc := range []struct {
		name string
		pr   probe.Result
		want string
	}{{"abi", withABI, "ABI 6"}, {"unavailable", without, "unavailable"}, {"not probed", probe.Result{}, "not probed"}} {
		t.Run(tc.name, func(t *testing.T) {
			s := Base()
			for _, o := range []Opt{ll, WithLandlockStatus(tc.pr)} {
				if err := o(s); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.Annotations[AnnotationLandlockStatus]; got != tc.want {
				t.Errorf("status %q, want %q", got, tc.want)
			}
		})
	}
	s := Base()
	if err := WithLandlockStatus(withABI)(s); err != nil || s.Annotations[AnnotationLandlockStatus] != "" {
		t.Errorf("a spec without Landlock rules got a status: %v %v", s.Annotations, err)
	}
}

// TestTrustReachesNoDeeperThanProtection: a trusted directory trusts the
// workspaces down to policy.TrustDepth below it, and the plan protects
// their settings down to NestedDepth below a writable root or a trusted
// directory in one. A trust reaching deeper would trust settings a
// sandboxed command could have written (a hook runs on the host).
func TestTrustReachesNoDeeperThanProtection(t *testing.T) {
	if policy.TrustDepth > NestedDepth {
		t.Errorf("policy.TrustDepth is %d, deeper than the plan protects (NestedDepth %d)", policy.TrustDepth, NestedDepth)
	}
}

// TestProcessHome: a caller without $HOME gets the policy's home, not
// the one libcontainer would set (the sandbox root's, /root); a caller's
// own $HOME stays.
func TestProcessHome(t *testing.T) {
	p, err := policy.Default("/work/app", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"none", []string{"PATH=/bin"}, "HOME=/home/u"},
		{"its own", []string{"PATH=/bin", "HOME=/srv/x"}, "HOME=/srv/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Base()
			if err := WithProcess(p, Request{Args: []string{"true"}, Cwd: "/work/app", Env: tc.env}, false)(s); err != nil {
				t.Fatal(err)
			}
			var homes []string
			for _, e := range s.Process.Env {
				if strings.HasPrefix(e, "HOME=") {
					homes = append(homes, e)
				}
			}
			if len(homes) != 1 || homes[0] != tc.want {
				t.Errorf("HOME in the environment: %q; want %q", homes, tc.want)
			}
		})
	}
}
