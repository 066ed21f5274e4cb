//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cordon.dev/cordon/policy"
)

// TestHookCwdCarriesOver: a Bash call rewritten by cordon hook claude, run
// by bash as Claude Code runs one in its shell (eval, then pwd -P once it
// succeeded), leaves that shell where the sandboxed command ended, when the
// command succeeded and the directory is the host's own; otherwise the
// shell stays in the workspace. Cold, through cordon serve, and in the
// container mode (no namespaces: the command sees the host itself, but
// not what Landlock hides).
func TestHookCwdCarriesOver(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, name := range []string{"cold", "warm", "container"} {
			t.Run(name, func(t *testing.T) {
				sb := newServeBox(t, c)
				env := []string{sb.stateEnv, "CORDON_SERVE=0"}
				switch name {
				case "warm":
					sb.serve()
					env = []string{sb.stateEnv}
				case "container":
					sb.settings(`{"cordon": {"containerMode": true}}`)
				}
				ws := sb.ws
				must(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
				must(t, os.Symlink("sub", filepath.Join(ws, "hostlink")))
				// A host directory of the name the sandbox makes in its
				// private /tmp: not the one the sandbox saw.
				tmp := filepath.Join("/tmp", "cordon-it-cwd-"+sb.token)
				must(t, os.Mkdir(tmp, 0o755))
				t.Cleanup(func() { os.RemoveAll(tmp) })
				sb.chown()
				for _, tc := range []struct {
					command string
					dir     string // where the shell ends: absolute, or in the workspace
					status  int
					// in the container mode, when it differs
					container *struct {
						dir    string
						status int
					}
				}{
					{"cd sub && " + whoRuns, "sub", 0, nil},
					{"mkdir -p made/deeper && cd made/deeper", "made/deeper", 0, nil},
					{"cd hostlink", "sub", 0, nil},
					{"[ -e /dev/fd/3 ] || cd sub", "sub", 0, nil},
					{"cd /usr/share", "/usr/share", 0, nil},
					{"ln -s /usr/share link && cd link", "/usr/share", 0, nil},
					{"cd sub && false", ".", 1, nil},
					{"cd sub; exit 0", ".", 0, nil},
					// the host's own /tmp in the container mode
					{"mkdir -p " + tmp + " && cd " + tmp, ".", 0, &struct {
						dir    string
						status int
					}{tmp, 0}},
					// hidden: not even entered, or entered where Landlock
					// keeps it unreadable
					{"cd ~/.ssh", ".", 1, &struct {
						dir    string
						status int
					}{".", 0}},
					{"cd /proc/self", ".", 0, nil},
					{"mkdir gone && cd gone && rmdir ../gone", ".", 0, nil},
				} {
					a := sb.hook(tc.command, "bypassPermissions")
					rewritten := updatedCommand(t, a)
					r := sb.bash(`eval `+policy.ShellQuote(rewritten)+` < /dev/null; s=$?; printf '\nstatus=%s %s\n' "$s" "$(pwd -P)"`, env...)
					want, status := tc.dir, tc.status
					if name == "container" && tc.container != nil {
						want, status = tc.container.dir, tc.container.status
					}
					if !filepath.IsAbs(want) {
						want = filepath.Join(ws, want)
					}
					if !strings.HasSuffix(r.stdout, "\nstatus="+strconv.Itoa(status)+" "+want+"\n") {
						t.Errorf("%q: the shell ended in %q, want status=%d %s\n%s", tc.command, lastLine(r.stdout), status, want, r)
					}
					if strings.HasPrefix(tc.command, "cd sub && "+whoRuns) && !strings.HasPrefix(r.stdout, map[string]string{"cold": "cold", "warm": "warm", "container": "cold"}[name]+"\n") {
						t.Errorf("the command did not run %s:\n%s", name, r)
					}
				}
			})
		}
	})
}

func lastLine(s string) string {
	l := lines(s)
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1]
}
