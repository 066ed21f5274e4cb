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
// shell stays in the workspace. Cold, and through cordon serve.
func TestHookCwdCarriesOver(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, warm := range []bool{false, true} {
			name := map[bool]string{false: "cold", true: "warm"}[warm]
			t.Run(name, func(t *testing.T) {
				sb := newServeBox(t, c)
				env := []string{sb.stateEnv, "CORDON_SERVE=0"}
				if warm {
					sb.serve()
					env = []string{sb.stateEnv}
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
				}{
					{"cd sub && " + whoRuns, "sub", 0},
					{"mkdir -p made/deeper && cd made/deeper", "made/deeper", 0},
					{"cd hostlink", "sub", 0},
					{"[ -e /dev/fd/3 ] || cd sub", "sub", 0},
					{"cd /usr/share", "/usr/share", 0},
					{"ln -s /usr/share link && cd link", "/usr/share", 0},
					{"cd sub && false", ".", 1},
					{"cd sub; exit 0", ".", 0},
					{"mkdir -p " + tmp + " && cd " + tmp, ".", 0},
					{"cd ~/.ssh", ".", 1}, // hidden: not even entered
					{"cd /proc/self", ".", 0},
					{"mkdir gone && cd gone && rmdir ../gone", ".", 0},
				} {
					a := sb.hook(tc.command, "bypassPermissions")
					rewritten := updatedCommand(t, a)
					r := sb.bash(`eval `+policy.ShellQuote(rewritten)+` < /dev/null; s=$?; printf '\nstatus=%s %s\n' "$s" "$(pwd -P)"`, env...)
					want := tc.dir
					if !filepath.IsAbs(want) {
						want = filepath.Join(ws, want)
					}
					if !strings.HasSuffix(r.stdout, "\nstatus="+strconv.Itoa(tc.status)+" "+want+"\n") {
						t.Errorf("%q: the shell ended in %q, want status=%d %s\n%s", tc.command, lastLine(r.stdout), tc.status, want, r)
					}
					if strings.HasPrefix(tc.command, "cd sub && "+whoRuns) && !strings.HasPrefix(r.stdout, name+"\n") {
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
