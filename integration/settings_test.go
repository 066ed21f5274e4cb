//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The settings tests (issue 3): every rule kind, the discovery and
// precedence of the settings files, trust, bad input and `cordon config`,
// each run as root and as the unprivileged user, each judged from the host:
// what the command saw is compared with secrets it must not see, what it
// did is read back from the host file system.

// untrustedReason is what cordon config says about a widening entry of an
// untrusted workspace.
const untrustedReason = "the workspace is not trusted (cordon trust): its settings may only tighten the sandbox"

// writeAt writes content to rel below the box's directory ("home/...",
// "ws/...", ...), making the directories on the way, gives everything to
// the caller again and returns the absolute path.
func (b *box) writeAt(rel, content string) string {
	b.t.Helper()
	p := filepath.Join(b.dir, rel)
	must(b.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(b.t, os.WriteFile(p, []byte(content), 0o644))
	b.chown()
	return p
}

// mkdirAt makes a directory below the box's directory.
func (b *box) mkdirAt(rel string) string {
	b.t.Helper()
	p := filepath.Join(b.dir, rel)
	must(b.t, os.MkdirAll(p, 0o755))
	b.chown()
	return p
}

// shIn runs `cordon run FLAGS -- sh -c SCRIPT`.
func (b *box) shIn(flags []string, script string) result {
	b.t.Helper()
	return b.runSpec(runSpec{flags: flags, args: []string{"sh", "-c", script}})
}

// pos returns "LINE:COL" (1-based, in bytes) of the first occurrence of
// needle in content: where cordon must say a settings entry is.
func pos(t testing.TB, content, needle string) string {
	t.Helper()
	i := strings.Index(content, needle)
	if i < 0 {
		t.Fatalf("pos: %q not in %q", needle, content)
	}
	line := strings.Count(content[:i], "\n") + 1
	col := i - strings.LastIndex(content[:i], "\n")
	return fmt.Sprintf("%d:%d", line, col)
}

// configOut is what `cordon config --json` prints.
type configOut struct {
	Workspace string `json:"workspace"`
	Trusted   bool   `json:"trusted"`
	Mode      string `json:"mode"`
	Report    struct {
		Files []struct {
			Path    string `json:"path"`
			Scope   string `json:"scope"`
			Trusted bool   `json:"trusted"`
		} `json:"files"`
		Values []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Source string `json:"source"`
		} `json:"values"`
		Ignored []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Source string `json:"source"`
			Reason string `json:"reason"`
		} `json:"ignored"`
		Notes []string `json:"notes"`
	} `json:"report"`
	Policy struct {
		Filesystem struct {
			AllowRead, DenyRead, AllowWrite, DenyWrite []string
			AllowGitConfig                             bool
		}
		Network struct {
			AllowedDomains, DeniedDomains []string
		}
		Sandbox struct {
			Disabled bool
		}
	} `json:"policy"`
}

// config runs `cordon config --json FLAGS` as the caller, in s.dir (the
// workspace by default), and decodes it.
func (b *box) config(s runSpec, flags ...string) configOut {
	b.t.Helper()
	r := b.cordon(s, append([]string{"config", "--json"}, flags...)...)
	if r.code != 0 {
		b.t.Fatalf("cordon config --json %s:\n%s", quote(flags), r)
	}
	var c configOut
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		b.t.Fatalf("cordon config --json: %v\n%s", err, r)
	}
	return c
}

// source returns where cordon config says the value of key came from, or
// "" when the value is not in effect.
func (c configOut) source(key, value string) string {
	for _, v := range c.Report.Values {
		if v.Key == key && v.Value == value {
			return v.Source
		}
	}
	return ""
}

// ignoredAt returns the reason cordon config gives for ignoring key=value
// at source, or "" when it does not list it.
func (c configOut) ignoredAt(key, value, source string) string {
	for _, i := range c.Report.Ignored {
		if i.Key == key && i.Value == value && i.Source == source {
			return i.Reason
		}
	}
	return ""
}

func (c configOut) files() []string {
	var out []string
	for _, f := range c.Report.Files {
		out = append(out, f.Scope+" "+f.Path)
	}
	return out
}

// checkHidden fails the test when a secret (content only the host knows)
// shows in what the command printed.
func checkHidden(t *testing.T, r result, what, secret string) {
	t.Helper()
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("%s was read inside the sandbox:\n%s", what, r)
	}
}

// checkShown fails the test when content does not show in stdout: the
// control that keeps checkHidden from passing on a sandbox that reads
// nothing.
func checkShown(t *testing.T, r result, what, content string) {
	t.Helper()
	if !strings.Contains(r.stdout, content) {
		t.Errorf("%s must be readable inside the sandbox (want %q in stdout):\n%s", what, content, r)
	}
}

// TestSettingsRuleKinds: each kind of file system and network rule, from
// a settings file (or flag) of the kind people write, takes effect.
func TestSettingsRuleKinds(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("denyRead file", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			secret := "private-file-" + b.token
			b.writeAt("home/private/secret.txt", secret+"\n")
			b.writeAt("home/private/public.txt", "public-"+b.token+"\n")
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/private/secret.txt"]}}}`)
			r := b.sh(`cat ~/private/secret.txt; cat ~/private/public.txt`)
			checkHidden(t, r, "a file named by denyRead", secret)
			checkShown(t, r, "its sibling", "public-"+b.token)
			if !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("want Permission denied:\n%s", r)
			}
		})

		t.Run("denyRead directory", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			secret := "private-dir-" + b.token
			b.writeAt("home/private/a/secret.txt", secret+"\n")
			b.writeAt("home/.claude/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/private"]}}}`)
			r := b.sh(`ls -R ~/private; cat ~/private/a/secret.txt; cat ~/outside.txt`)
			checkHidden(t, r, "a file in a directory named by denyRead", secret)
			if strings.Contains(r.stdout, "secret.txt") {
				t.Errorf("the denied directory can be listed:\n%s", r)
			}
			checkShown(t, r, "~/outside.txt", "original")
		})

		t.Run("denyRead glob", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/keys/a.key", "key-a-"+b.token+"\n")
			b.writeAt("home/keys/sub/b.key", "key-b-"+b.token+"\n")
			b.writeAt("home/keys/c.txt", "text-c-"+b.token+"\n")
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/keys/**/*.key"]}}}`)
			r := b.sh(`cat ~/keys/a.key ~/keys/sub/b.key ~/keys/c.txt`)
			checkHidden(t, r, "~/keys/a.key (matches the glob)", "key-a-"+b.token)
			checkHidden(t, r, "~/keys/sub/b.key (matches the glob)", "key-b-"+b.token)
			checkShown(t, r, "~/keys/c.txt (does not match)", "text-c-"+b.token)
		})

		t.Run("denyRead through a symlink", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/real/one.txt", "one-"+b.token+"\n")
			b.writeAt("home/real/two.txt", "two-"+b.token+"\n")
			b.writeAt("home/real/three.txt", "three-"+b.token+"\n")
			must(t, os.Symlink(filepath.Join(b.home, "real"), filepath.Join(b.home, "link")))
			b.chown()
			// one.txt is named through the link, two.txt by its real
			// path; each is read both ways.
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/link/one.txt", "~/real/two.txt"]}}}`)
			r := b.sh(`cat ~/real/one.txt ~/link/one.txt ~/link/two.txt ~/real/two.txt ~/link/three.txt`)
			checkHidden(t, r, "a file denied through a symlink to its directory", "one-"+b.token)
			checkHidden(t, r, "a file denied by its real path, read through a symlink", "two-"+b.token)
			checkShown(t, r, "a sibling read through the symlink", "three-"+b.token)
		})

		t.Run("literal path and glob in sandbox-runtime's settings", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/data/odd[1].txt", "bracket-"+b.token+"\n")
			b.writeAt("home/data/odd1.txt", "plain-"+b.token+"\n")
			b.writeAt("home/data/odd2.txt", "glob-match-"+b.token+"\n")
			b.writeAt("home/data/x[2].txt", "unnamed-"+b.token+"\n")
			// {"path", "literal": true} names odd[1].txt itself; the bare
			// string ".../odd[2].txt" is a glob matching odd2.txt only;
			// nothing names x[2].txt.
			b.writeAt("home/.srt-settings.json", fmt.Sprintf(`{"filesystem": {"denyRead": [{"path": "%[1]s/data/odd[1].txt", "literal": true}, "%[1]s/data/odd[2].txt"]}}`, b.home))
			r := b.sh(`cd ~/data && cat 'odd[1].txt' odd1.txt odd2.txt 'x[2].txt'`)
			checkHidden(t, r, "the literal path odd[1].txt", "bracket-"+b.token)
			checkShown(t, r, "odd1.txt (the literal entry is no glob)", "plain-"+b.token)
			checkHidden(t, r, "odd2.txt (matches the glob odd[2].txt)", "glob-match-"+b.token)
			checkShown(t, r, "x[2].txt (named by nothing)", "unnamed-"+b.token)
		})

		t.Run("allowRead inside denyRead", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/vault/secret.txt", "vault-secret-"+b.token+"\n")
			b.writeAt("home/vault/shared/readme.txt", "vault-shared-"+b.token+"\n")
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/vault"], "allowRead": ["~/vault/shared"]}}}`)
			r := b.sh(`cat ~/vault/shared/readme.txt; cat ~/vault/secret.txt; ls ~/vault`)
			checkShown(t, r, "a path allowRead re-opens inside a denyRead", "vault-shared-"+b.token)
			checkHidden(t, r, "the rest of the denied directory", "vault-secret-"+b.token)
			if strings.Contains(r.stdout, "secret.txt") {
				t.Errorf("the denied directory can be listed:\n%s", r)
			}
		})

		// sandbox-runtime's own example: deny a broad region, re-allow
		// the current directory inside it. allowRead widens reads; it
		// must not make a writable path read-only.
		t.Run("allowRead of the workspace inside a denyRead", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("ws/code.txt", "code-"+b.token+"\n")
			b.writeAt("home/.srt-settings.json", fmt.Sprintf(`{"filesystem": {"denyRead": [%q], "allowRead": ["."]}}`, b.dir))
			r := b.sh(`cat code.txt; cat ~/outside.txt; echo new > new.txt`)
			checkShown(t, r, "the re-allowed workspace", "code-"+b.token)
			checkHidden(t, r, "~/outside.txt (in the denied region)", "original")
			if readFile(filepath.Join(b.ws, "new.txt")) != "new\n" {
				t.Errorf("allowRead of the workspace made it read-only:\n%s", r)
			}
		})

		t.Run("allowWrite", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.mkdirAt("home/extra")
			b.mkdirAt("home/other")
			script := `echo extra-` + b.token + ` > ~/extra/new.txt`
			// The control: without the setting the same write fails.
			if r := b.sh(script); r.code == 0 || exists(filepath.Join(b.home, "extra/new.txt")) {
				t.Fatalf("~/extra is writable without allowWrite:\n%s", r)
			}
			b.writeAt("home/.claude/settings.json", `{"sandbox": {"filesystem": {"allowWrite": ["~/extra"]}}}`)
			r := b.sh(script + ` && mkdir ~/extra/d && echo deep > ~/extra/d/f && echo x > ~/other/new.txt`)
			if got := readFile(filepath.Join(b.home, "extra/new.txt")); got != "extra-"+b.token+"\n" {
				t.Errorf("a write in the allowWrite directory did not land on the host: %q\n%s", got, r)
			}
			if got := readFile(filepath.Join(b.home, "extra/d/f")); got != "deep\n" {
				t.Errorf("a new directory in the allowWrite directory did not land on the host: %q\n%s", got, r)
			}
			if r.code == 0 || exists(filepath.Join(b.home, "other/new.txt")) {
				t.Errorf("a sibling of the allowWrite directory is writable:\n%s", r)
			}
		})

		t.Run("denyWrite in the workspace", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			locked := b.writeAt("ws/locked.txt", "locked\n")
			b.writeAt("ws/.claude/settings.json", `{"sandbox": {"filesystem": {"denyWrite": ["./locked.txt"]}}}`)
			for _, script := range []string{"echo changed > locked.txt", "echo more >> locked.txt", "rm -f locked.txt", "mv locked.txt moved.txt", "chmod 600 locked.txt"} {
				if r := b.sh(script); r.code == 0 {
					t.Errorf("%q succeeded on a denyWrite file:\n%s", script, r)
				}
			}
			if got := readFile(locked); got != "locked\n" {
				t.Errorf("the denyWrite file changed on the host: %q", got)
			}
			if fi, err := os.Stat(locked); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("the denyWrite file's mode changed on the host: %v %v", fi.Mode(), err)
			}
			// The control: the rest of the workspace stays writable.
			if r := b.sh("echo ok > free.txt"); r.code != 0 || readFile(filepath.Join(b.ws, "free.txt")) != "ok\n" {
				t.Errorf("the workspace is not writable any more:\n%s", r)
			}
		})

		// The always-protected paths pin their parent directories; a
		// denyWrite path must not be got around by renaming its parent
		// and making the path anew either.
		t.Run("denyWrite: renaming the parent directory", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			conf := b.writeAt("ws/conf/app.yaml", "original\n")
			r := b.shIn([]string{"--deny-write", conf}, `mv conf conf.orig && mkdir conf && echo evil > conf/app.yaml`)
			if got := readFile(conf); got != "original\n" {
				t.Errorf("the denyWrite file %s holds %q on the host after its parent directory was renamed:\n%s", conf, got, r)
			}
		})

		// No placeholder may be left on the host: a denyWrite path that
		// does not exist yet is refused when it is made (or, without the
		// guard, moved aside after the run); what the command made there
		// must not stay, as it does not for a glob's new match.
		t.Run("denyWrite of a path that does not exist yet", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			plain := filepath.Join(b.ws, "release/VERSION")
			globbed := filepath.Join(b.ws, "release/CHECKSU[M]")
			r := b.shIn([]string{"--deny-write", plain, "--deny-write", globbed},
				`mkdir -p release && echo evil > release/VERSION && echo evil > release/CHECKSUM`)
			checkNotMade(t, r, filepath.Join(b.ws, "release/CHECKSUM"))
			if got := readFile(plain); got == "evil\n" {
				t.Errorf("%s, named by denyWrite and created during the run, stays on the host with what the command wrote "+
					"(the same path written as a glob is moved aside):\n%s", plain, r)
			}
		})

		t.Run("denyWrite glob", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			pem := b.writeAt("ws/certs/server.pem", "cert\n")
			b.writeAt("ws/certs/notes.txt", "notes\n")
			r := b.shIn([]string{"--deny-write", b.ws + "/**/*.pem"},
				`echo evil > certs/server.pem; rm -f certs/server.pem; mv certs/server.pem certs/x; echo ok >> certs/notes.txt`)
			if got := readFile(pem); got != "cert\n" {
				t.Errorf("a file matching a denyWrite glob changed on the host: %q\n%s", got, r)
			}
			if got := readFile(filepath.Join(b.ws, "certs/notes.txt")); got != "notes\nok\n" {
				t.Errorf("a file not matching the glob was not writable: %q\n%s", got, r)
			}
		})

		t.Run("denyWrite inside allowWrite", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.mkdirAt("home/extra")
			ro := b.writeAt("home/extra/ro/keep.txt", "keep\n")
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"allowWrite": ["~/extra"], "denyWrite": ["~/extra/ro"]}}}`)
			r := b.sh(`echo ok > ~/extra/new.txt; echo evil > ~/extra/ro/keep.txt; echo evil > ~/extra/ro/new.txt`)
			if readFile(filepath.Join(b.home, "extra/new.txt")) != "ok\n" {
				t.Errorf("the allowWrite directory is not writable:\n%s", r)
			}
			if readFile(ro) != "keep\n" || exists(filepath.Join(b.home, "extra/ro/new.txt")) {
				t.Errorf("a denyWrite inside an allowWrite did not close it (denyWrite must win):\n%s", r)
			}
		})

		// sandbox-runtime: "denyWrite takes precedence over allowWrite";
		// cordon's issue: managed values cannot be loosened from below.
		// A narrower allowWrite must not re-open a denied directory.
		t.Run("allowWrite inside denyWrite", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.mkdirAt("ws/vendor/cache")
			r := b.shIn([]string{"--deny-write", b.ws + "/vendor", "--allow-write", b.ws + "/vendor/cache"},
				`echo evil > vendor/cache/new.txt; echo evil > vendor/new.txt`)
			if exists(filepath.Join(b.ws, "vendor/new.txt")) {
				t.Errorf("the denyWrite directory itself is writable:\n%s", r)
			}
			if exists(filepath.Join(b.ws, "vendor/cache/new.txt")) {
				t.Errorf("an allowWrite inside a denyWrite re-opened it: denyWrite must win over allowWrite, "+
					"as the notes of cordon config and sandbox-runtime say (else a user allowWrite loosens a managed denyWrite):\n%s", r)
			}
		})

		t.Run("network allowedDomains", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			content := `{"sandbox": {"network": {"allowedDomains": ["API.Example.com.", "*.pkg.example.org:443"], "deniedDomains": ["ads.example.com"]}}}`
			file := b.writeAt("home/.claude/settings.json", content)
			cfg := b.config(runSpec{}, "--allow-domain", "flag.example.net")
			for _, want := range []struct{ key, value, source string }{
				// Normalised: lowercase, no trailing dot.
				{"sandbox.network.allowedDomains", "api.example.com", file + ":" + pos(t, content, `"API.`)},
				{"sandbox.network.allowedDomains", "*.pkg.example.org:443", file + ":" + pos(t, content, `"*.pkg`)},
				{"sandbox.network.deniedDomains", "ads.example.com", file + ":" + pos(t, content, `"ads.`)},
				{"sandbox.network.allowedDomains", "flag.example.net", "--allow-domain"},
			} {
				if got := cfg.source(want.key, want.value); got != want.source {
					t.Errorf("cordon config: %s %s from %q, want %q", want.key, want.value, got, want.source)
				}
			}
			if d := cmp.Diff([]string{"api.example.com", "*.pkg.example.org:443", "flag.example.net"}, cfg.Policy.Network.AllowedDomains); d != "" {
				t.Errorf("policy.Network.AllowedDomains (-want +got):\n%s", d)
			}
			// The command is pointed at cordon's proxy inside, on the
			// default port or the one the settings name.
			r := b.run("env")
			if !containsLine(r.stdout, "HTTPS_PROXY=http://127.0.0.1:3128") {
				t.Errorf("with allowedDomains: want HTTPS_PROXY=http://127.0.0.1:3128 inside:\n%s", r)
			}
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"network": {"httpProxyPort": 3999}}}`)
			if r := b.run("env"); !containsLine(r.stdout, "HTTPS_PROXY=http://127.0.0.1:3999") {
				t.Errorf("httpProxyPort 3999: want HTTPS_PROXY=http://127.0.0.1:3999 inside:\n%s", r)
			}
			// The control: no domain, no proxy.
			none := newBox(t, c)
			if r := none.run("env"); strings.Contains(r.stdout, "PROXY=") {
				t.Errorf("without allowedDomains the command is pointed at a proxy:\n%s", r)
			}
		})

		t.Run("network: the proxy applies the settings", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("curl"))
			b := newBox(t, c)
			b.writeAt("home/.claude/settings.json", `{"sandbox": {"network": {"allowedDomains": ["api.example.com"], "deniedDomains": ["ads.example.com"]}}}`)
			r := b.sh(`curl -sS --max-time 10 -o /dev/null https://ads.example.com/; curl -sS --max-time 10 -o /dev/null http://other.example.net/; true`)
			for _, want := range []string{
				"cordon: blocked connection to ads.example.com:443 (deniedDomains: ads.example.com",
				"cordon: blocked connection to other.example.net:80 (not in allowedDomains",
			} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("want %q on stderr:\n%s", want, r)
				}
			}
		})

		t.Run("permission rules", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/private/secret.txt", "rule-secret-"+b.token+"\n")
			b.mkdirAt("home/edit-ok")
			locked := b.writeAt("ws/locked.txt", "locked\n")
			content := `{
  "permissions": {
    "allow": ["Edit(~/edit-ok)", "WebFetch(domain:docs.example.com)", "Bash(make test:*)"],
    "deny": ["Read(~/private/secret.txt)", "Edit(./locked.txt)", "WebFetch(domain:evil.example.com)"]
  }
}`
			file := b.writeAt("home/.claude/settings.json", content)
			r := b.sh(`cat ~/private/secret.txt; echo evil > locked.txt; echo ok > ~/edit-ok/new.txt`)
			checkHidden(t, r, "a file a Read() deny rule names", "rule-secret-"+b.token)
			if readFile(locked) != "locked\n" {
				t.Errorf("a file an Edit() deny rule names changed on the host:\n%s", r)
			}
			if readFile(filepath.Join(b.home, "edit-ok/new.txt")) != "ok\n" {
				t.Errorf("a directory an Edit() allow rule names is not writable:\n%s", r)
			}
			cfg := b.config(runSpec{})
			for _, want := range []struct{ key, value, needle string }{
				{"sandbox.filesystem.allowWrite", filepath.Join(b.home, "edit-ok"), `"Edit(~/edit-ok)"`},
				{"sandbox.filesystem.denyRead", filepath.Join(b.home, "private/secret.txt"), `"Read(~/private`},
				{"sandbox.filesystem.denyWrite", locked, `"Edit(./locked`},
				{"sandbox.network.allowedDomains", "docs.example.com", `"WebFetch(domain:docs`},
				{"sandbox.network.deniedDomains", "evil.example.com", `"WebFetch(domain:evil`},
				{"permissions.allow", "Bash(make test:*)", `"Bash(make`},
			} {
				if got, src := cfg.source(want.key, want.value), file+":"+pos(t, content, want.needle); got != src {
					t.Errorf("cordon config: %s %s from %q, want %q (the rule's position)", want.key, want.value, got, src)
				}
			}
		})

		// Edit(/src/**) is how Claude Code users name a writable tree. Its
		// existing matches must stay ordinary files: removable, renamable.
		t.Run("Edit rule with a glob", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/edit-tree/sub/old.txt", "old\n")
			b.writeAt("home/.claude/settings.json", `{"permissions": {"allow": ["Edit(~/edit-tree/**)"]}}`)
			r := b.sh(`echo new > ~/edit-tree/new.txt; rm ~/edit-tree/sub/old.txt; mv ~/edit-tree/sub ~/edit-tree/renamed`)
			if readFile(filepath.Join(b.home, "edit-tree/new.txt")) != "new\n" {
				t.Errorf("a new file under Edit(~/edit-tree/**) was not written:\n%s", r)
			}
			if exists(filepath.Join(b.home, "edit-tree/sub/old.txt")) || !exists(filepath.Join(b.home, "edit-tree/renamed")) {
				t.Errorf("files under Edit(~/edit-tree/**) cannot be removed or renamed (each existing match is a mount point of its own):\n%s", r)
			}
		})

		t.Run("allowGitConfig", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("git"))
			b := newBox(t, c)
			if out, err := b.hostGit(b.ws, "init", "-q"); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			cfgFile := filepath.Join(b.ws, ".git/config")
			before := readFile(cfgFile)
			// A key git would run something for (core.pager): without
			// allowGitConfig the guard keeps it out (safe keys, such as
			// user.name, are written: docs/security.md).
			script := `git config core.pager cordon-it-` + b.token
			if r := b.sh(script); r.code == 0 || readFile(cfgFile) != before {
				t.Fatalf("the control: core.pager reaches .git/config without allowGitConfig:\n%s", r)
			}
			b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"allowGitConfig": true}}}`)
			r := b.sh(script + ` && echo evil > .git/hooks/pre-commit`)
			if !strings.Contains(readFile(cfgFile), "cordon-it-"+b.token) {
				t.Errorf("allowGitConfig: git config did not change .git/config on the host:\n%s", r)
			}
			if exists(filepath.Join(b.ws, ".git/hooks/pre-commit")) {
				t.Errorf("allowGitConfig opened .git/hooks too:\n%s", r)
			}
		})

		t.Run("allowSocketpair", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			for _, tc := range []struct {
				value bool
				want  string
			}{{false, "socketpair(AF_UNIX): EPERM"}, {true, "socketpair(AF_UNIX): ok"}} {
				b.writeAt("home/.config/cordon/settings.json", fmt.Sprintf(`{"cordon": {"allowSocketpair": %v}}`, tc.value))
				r := b.runSpec(runSpec{args: []string{helperBin}, env: []string{helperEnv + "=sockets"}})
				if !containsLine(r.stdout, tc.want) {
					t.Errorf("cordon.allowSocketpair %v: want %q:\n%s", tc.value, tc.want, r)
				}
				if !containsLine(r.stdout, "socket(AF_UNIX): EPERM") {
					t.Errorf("cordon.allowSocketpair %v: socket(AF_UNIX) must stay refused:\n%s", tc.value, r)
				}
			}
		})

		t.Run("env", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/.config/cordon/settings.json", `{"cordon": {"env": {"set": {"CORDON_IT_SET": "set-value"}, "allow": ["MY_CI_TOKEN"], "deny": ["CORDON_IT_DENIED*"]}}}`)
			r := b.runSpec(runSpec{args: []string{"env"}, env: []string{
				"MY_CI_TOKEN=ci-" + b.token, "OTHER_TOKEN=other-" + b.token, "CORDON_IT_DENIED_X=denied-" + b.token, "CORDON_IT_KEPT=kept",
			}})
			for _, want := range []string{"CORDON_IT_SET=set-value", "MY_CI_TOKEN=ci-" + b.token, "CORDON_IT_KEPT=kept"} {
				if !containsLine(r.stdout, want) {
					t.Errorf("want %s inside:\n%s", want, r)
				}
			}
			for _, secret := range []string{"other-" + b.token, "denied-" + b.token} {
				if strings.Contains(r.stdout, secret) {
					t.Errorf("%s reached the sandbox:\n%s", secret, r)
				}
			}
		})

		// Claude Code's path forms: //abs, ~/home, /project-relative,
		// ./cwd-relative (and bare), run from a subdirectory of the
		// workspace so that the last two differ; sandbox-runtime's:
		// absolute and cwd-relative.
		t.Run("path semantics", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			sub := b.mkdirAt("ws/sub")
			// Claude Code's sandbox block: "/x" and "//x" absolute, "x" and
			// "./x" in the project (the workspace); a permission rule's "/x"
			// in the project, "x" below the current directory.
			for _, rel := range []string{"abs-secret", "abs2-secret", "home/home-secret", "ws/proj-secret", "ws/bare-secret", "ws/rule-proj", "ws/sub/rule-cwd",
				"srt-abs", "ws/sub/srt-rel",
				// controls: the same names where the other forms would put them
				"ws/abs-secret", "ws/sub/proj-secret", "ws/sub/bare-secret", "ws/sub/rule-proj", "ws/rule-cwd", "ws/srt-rel"} {
				b.writeAt(rel, "<"+rel+">"+b.token+"\n")
			}
			b.writeAt("ws/.claude/settings.json", fmt.Sprintf(`{"sandbox": {"filesystem": {"denyRead": ["%s/abs-secret", "/%s/abs2-secret", "~/home-secret", "./proj-secret", "bare-secret"]}},
				"permissions": {"deny": ["Read(/rule-proj)", "Read(./rule-cwd)"]}}`, b.dir, b.dir))
			b.writeAt("home/.srt-settings.json", fmt.Sprintf(`{"filesystem": {"denyRead": ["%s/srt-abs", "srt-rel"]}}`, b.dir))
			r := b.runSpec(runSpec{dir: sub, flags: []string{"--workspace", b.ws}, args: []string{"sh", "-c",
				`cat ` + strings.Join([]string{b.dir + "/abs-secret", b.dir + "/abs2-secret", b.home + "/home-secret", b.ws + "/proj-secret", b.ws + "/bare-secret",
					b.ws + "/rule-proj", sub + "/rule-cwd", b.dir + "/srt-abs", sub + "/srt-rel",
					b.ws + "/abs-secret", sub + "/proj-secret", sub + "/bare-secret", sub + "/rule-proj", b.ws + "/rule-cwd", b.ws + "/srt-rel"}, " ")}})
			for _, rel := range []string{"abs-secret", "abs2-secret", "home/home-secret", "ws/proj-secret", "ws/bare-secret", "ws/rule-proj", "ws/sub/rule-cwd", "srt-abs", "ws/sub/srt-rel"} {
				checkHidden(t, r, rel, "<"+rel+">"+b.token)
			}
			for _, rel := range []string{"ws/abs-secret", "ws/sub/proj-secret", "ws/sub/bare-secret", "ws/sub/rule-proj", "ws/rule-cwd", "ws/srt-rel"} {
				checkShown(t, r, rel+" (named by no rule)", "<"+rel+">"+b.token)
			}
		})
	})
}

// hostGit runs git on the host as the box's caller, as the user would
// before or after a run.
func (b *box) hostGit(dir string, args ...string) (string, error) {
	return b.hostCommand(dir, "git", args...)
}

// hostCommand runs a command on the host as the box's caller, with the
// box's home and git's identity.
func (b *box) hostCommand(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "PATH="+sandboxPath, "HOME="+b.home, "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitEnv is git's identity and no system configuration, on the host and
// inside.
func gitEnv() []string {
	return []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=cordon-it", "GIT_AUTHOR_EMAIL=it@cordon.invalid",
		"GIT_COMMITTER_NAME=cordon-it", "GIT_COMMITTER_EMAIL=it@cordon.invalid"}
}

// TestSettingsDiscovery: every settings file of the discovery list is read
// from where people keep it, lists from all of them merge, and a scalar
// takes the value of the highest file.
func TestSettingsDiscovery(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("every file, lists merge", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			type src struct{ name, rel, content string }
			deny := func(p string) string { return `{"sandbox": {"filesystem": {"denyRead": ["` + p + `"]}}}` }
			files := []src{
				// lowest precedence first, as cordon config lists them
				{"srt-user", "home/.srt-settings.json", `{"filesystem": {"denyRead": ["~/s/srt-user"]}}`},
				// Claude Code's own keys in its files are not cordon's business.
				{"claude-user", "home/.claude/settings.json", `{"model": "opus", "hooks": {"PreToolUse": []}, "env": {"X": "1"}, "sandbox": {"filesystem": {"denyRead": ["~/s/claude-user"]}}}`},
				{"cordon-user", "home/.config/cordon/settings.json", deny("~/s/cordon-user")},
				{"claude-project", "ws/.claude/settings.json", deny("~/s/claude-project")},
				{"cordon-project", "ws/.cordon/settings.json", deny("~/s/cordon-project")},
				{"claude-local", "ws/.claude/settings.local.json", deny("~/s/claude-local")},
				{"cordon-local", "ws/.cordon/settings.local.json", deny("~/s/cordon-local")},
				{"flag-file", "flag-settings.json", deny("~/s/flag-file")},
			}
			var wantFiles []string
			scopes := []string{"user", "user", "user", "project", "project", "local", "local", "flag"}
			for i, f := range files {
				p := b.writeAt(f.rel, f.content)
				wantFiles = append(wantFiles, scopes[i]+" "+p)
			}
			for _, name := range []string{"srt-user", "claude-user", "cordon-user", "claude-project", "cordon-project", "claude-local", "cordon-local", "flag-file", "flag", "none"} {
				b.writeAt("home/s/"+name, name+"-"+b.token+"\n")
			}
			flags := []string{"--settings", filepath.Join(b.dir, "flag-settings.json"), "--deny-read", b.home + "/s/flag"}
			r := b.shIn(flags, `cd ~/s && for f in *; do cat "$f"; done; true`)
			for _, f := range append(files, src{name: "flag"}) {
				checkHidden(t, r, "~/s/"+f.name+" (denied by "+f.rel+")", f.name+"-"+b.token)
			}
			checkShown(t, r, "~/s/none", "none-"+b.token)

			cfg := b.config(runSpec{}, flags...)
			if d := cmp.Diff(wantFiles, cfg.files()); d != "" {
				t.Errorf("cordon config: settings files, lowest precedence first (-want +got):\n%s", d)
			}
			for _, f := range files {
				p := filepath.Join(b.dir, f.rel)
				want := p + ":" + pos(t, f.content, `"~/s/`)
				if got := cfg.source("sandbox.filesystem.denyRead", b.home+"/s/"+f.name); got != want {
					t.Errorf("cordon config: denyRead ~/s/%s from %q, want %q", f.name, got, want)
				}
			}
			if got := cfg.source("sandbox.filesystem.denyRead", b.home+"/s/flag"); got != "--deny-read" {
				t.Errorf("cordon config: denyRead ~/s/flag from %q, want --deny-read", got)
			}
		})

		t.Run("XDG_CONFIG_HOME", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			dflt := b.writeAt("home/.config/cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/default-xdg"]}}}`)
			xdg := b.writeAt("xdg/cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["~/set-xdg"]}}}`)
			if got := b.config(runSpec{}).files(); !slices.Contains(got, "user "+dflt) || slices.Contains(got, "user "+xdg) {
				t.Errorf("XDG_CONFIG_HOME unset: want %s read and not %s; read %q", dflt, xdg, got)
			}
			got := b.config(runSpec{env: []string{"XDG_CONFIG_HOME=" + filepath.Join(b.dir, "xdg")}}).files()
			if slices.Contains(got, "user "+dflt) || !slices.Contains(got, "user "+xdg) {
				t.Errorf("XDG_CONFIG_HOME set: want %s read and not %s; read %q", xdg, dflt, got)
			}
		})

		// Each step adds a file (or flag) one level up and flips the mode:
		// read-only (Claude Code's "plan") or writable ("workspace-write").
		// The workspace is trusted, or its files could not widen the mode.
		t.Run("scalar precedence", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/.claude/settings.json", `{"permissions": {"defaultMode": "plan"}}`)
			b.writeAt("flag-ww.json", `{"cordon": {"mode": "workspace-write"}}`)
			b.writeAt("flag-plan.json", `{"permissions": {"defaultMode": "plan"}}`)
			steps := []struct {
				add      string // file to write before the step ("" for none)
				content  string
				flags    []string
				writable bool
				from     string // the source of the mode: a file below the box, or a flag
			}{
				{"", "", nil, false, "home/.claude/settings.json"},
				{"home/.config/cordon/settings.json", fmt.Sprintf(`{"cordon": {"mode": "workspace-write", "trustedWorkspaces": [%q]}}`, b.ws), nil, true, "home/.config/cordon/settings.json"},
				{"ws/.claude/settings.json", `{"permissions": {"defaultMode": "plan"}}`, nil, false, "ws/.claude/settings.json"},
				{"ws/.cordon/settings.json", `{"cordon": {"mode": "workspace-write"}}`, nil, true, "ws/.cordon/settings.json"},
				{"ws/.claude/settings.local.json", `{"permissions": {"defaultMode": "plan"}}`, nil, false, "ws/.claude/settings.local.json"},
				{"ws/.cordon/settings.local.json", `{"cordon": {"mode": "workspace-write"}}`, nil, true, "ws/.cordon/settings.local.json"},
				{"", "", []string{"--settings", filepath.Join(b.dir, "flag-plan.json")}, false, "flag-plan.json"},
				{"", "", []string{"--settings", filepath.Join(b.dir, "flag-plan.json"), "--mode", "workspace-write"}, true, "--mode"},
				{"", "", []string{"--settings", filepath.Join(b.dir, "flag-ww.json"), "--mode", "plan"}, false, "--mode"},
			}
			for i, st := range steps {
				if st.add != "" {
					b.writeAt(st.add, st.content)
				}
				marker := fmt.Sprintf("step-%d", i)
				r := b.shIn(st.flags, "touch "+marker)
				if got := exists(filepath.Join(b.ws, marker)); got != st.writable {
					t.Errorf("step %d (%s %s): workspace writable = %v, want %v:\n%s", i, st.add, quote(st.flags), got, st.writable, r)
				}
				cfg := b.config(runSpec{}, st.flags...)
				src := ""
				for _, v := range cfg.Report.Values {
					if v.Key == "mode" {
						src = v.Source
					}
				}
				want := st.from
				if !strings.HasPrefix(want, "--") {
					want = filepath.Join(b.dir, st.from) + ":"
				}
				if !strings.HasPrefix(src, want) {
					t.Errorf("step %d: cordon config: mode from %q, want %s...", i, src, want)
				}
			}
		})

		// sandbox-runtime documents `srt --settings FILE` with its own
		// top-level shape. Read by cordon as a Claude Code file (any name
		// but *.srt-settings.json or *.srt.json), its "filesystem" and
		// "network" keys are dropped without a word: a denyRead that does
		// nothing. Either is acceptable: it applies, or cordon refuses it.
		t.Run("--settings file in sandbox-runtime's shape", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/team-secret", "team-secret-"+b.token+"\n")
			f := b.writeAt("policy.json", `{"filesystem": {"denyRead": ["~/team-secret"]}, "network": {"allowedDomains": []}}`)
			r := b.shIn([]string{"--settings", f}, `cat ~/team-secret`)
			if r.code != 125 {
				checkHidden(t, r, "a file the --settings file (sandbox-runtime's shape) denies", "team-secret-"+b.token)
			}
		})
	})
}

// TestSettingsTrust: an untrusted workspace's own settings may only
// tighten its sandbox; `cordon trust` lets them widen it, `--revoke` takes
// that back, and a workspace cannot trust itself.
func TestSettingsTrust(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("tighten only until trusted", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			outside := b.mkdirAt("outside")
			locked := b.writeAt("ws/locked.txt", "locked\n")
			content := fmt.Sprintf(`{
  "sandbox": {
    "enabled": false,
    "filesystem": {
      "allowWrite": [
        "/%s"
      ],
      "allowRead": [
        "~/.ssh",
        "~/.aws/credentials"
      ],
      "denyWrite": [
        "/locked.txt"
      ]
    }
  },
  "cordon": {
    "env": {"set": {"CORDON_IT_PLANTED": "planted"}}
  }
}
`, outside)
			file := b.writeAt("ws/.cordon/settings.json", content)
			at := func(needle string) string { return file + ":" + pos(t, content, needle) }
			userFile := filepath.Join(b.home, ".config/cordon/settings.json")
			script := `echo out-` + b.token + ` > ` + outside + `/new.txt; cat ~/.ssh/id_ed25519; cat ~/.aws/credentials; echo evil > locked.txt; echo "planted=$CORDON_IT_PLANTED"`
			sshSecret := "secret-ssh-" + b.token
			awsSecret := "secret-aws-" + b.token

			// Untrusted: the tightening applies, nothing else.
			r := b.sh(script)
			if exists(filepath.Join(outside, "new.txt")) {
				t.Errorf("untrusted: the workspace's allowWrite opened a directory outside:\n%s", r)
			}
			checkHidden(t, r, "untrusted: ~/.ssh (allowRead of the workspace)", sshSecret)
			checkHidden(t, r, "untrusted: ~/.aws/credentials (allowRead of the workspace)", awsSecret)
			if !containsLine(r.stdout, "planted=") {
				t.Errorf("untrusted: the workspace's env.set reached the command:\n%s", r)
			}
			if readFile(locked) != "locked\n" {
				t.Errorf("untrusted: the workspace's denyWrite (tightening) did not apply:\n%s", r)
			}
			cfg := b.config(runSpec{})
			if cfg.Trusted {
				t.Errorf("cordon config: trusted before cordon trust")
			}
			for _, ig := range []struct{ key, value, needle string }{
				{"sandbox.enabled", "false", "false"},
				{"sandbox.filesystem.allowWrite", outside, `"/` + outside},
				{"sandbox.filesystem.allowRead", filepath.Join(b.home, ".ssh"), `"~/.ssh"`},
				{"cordon.env.set.CORDON_IT_PLANTED", "planted", `"planted"`},
			} {
				if got := cfg.ignoredAt(ig.key, ig.value, at(ig.needle)); got != untrustedReason {
					t.Errorf("cordon config: want %s %s (%s) ignored, %q; got reason %q", ig.key, ig.value, at(ig.needle), untrustedReason, got)
				}
			}
			if got := cfg.source("sandbox.filesystem.denyWrite", locked); got != at(`"/locked.txt"`) {
				t.Errorf("cordon config: denyWrite %s from %q, want %q", locked, got, at(`"/locked.txt"`))
			}

			// cordon trust, as the caller: it writes the user's file.
			tr := b.cordon(runSpec{}, "trust", b.ws)
			if tr.code != 0 || !strings.Contains(tr.stdout, "trusted "+b.ws) {
				t.Fatalf("cordon trust:\n%s", tr)
			}
			var user struct {
				Cordon struct {
					TrustedWorkspaces []string `json:"trustedWorkspaces"`
				} `json:"cordon"`
			}
			if err := json.Unmarshal([]byte(readFile(userFile)), &user); err != nil || !slices.Contains(user.Cordon.TrustedWorkspaces, b.ws) {
				t.Errorf("cordon trust: %s does not list %s: %v\n%s", userFile, b.ws, err, readFile(userFile))
			}
			if fi, err := os.Stat(userFile); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != c.uid {
				t.Errorf("cordon trust: %s is not the caller's (uid %d): %v", userFile, c.uid, err)
			}
			if again := b.cordon(runSpec{}, "trust"); again.code != 0 || !strings.Contains(again.stdout, "nothing to do") {
				t.Errorf("cordon trust twice:\n%s", again)
			}

			r = b.sh(script)
			if got := readFile(filepath.Join(outside, "new.txt")); got != "out-"+b.token+"\n" {
				t.Errorf("trusted: the workspace's allowWrite did not apply (%q):\n%s", got, r)
			}
			checkShown(t, r, "trusted: ~/.aws/credentials (allowRead of the workspace)", awsSecret)
			// allowRead naming the denied directory itself: "allowRead
			// takes precedence over denyRead" (sandbox-runtime, and the
			// note of cordon config).
			checkShown(t, r, "trusted: ~/.ssh (allowRead naming the default denyRead itself)", sshSecret)
			if !containsLine(r.stdout, "planted=planted") {
				t.Errorf("trusted: the workspace's env.set did not apply:\n%s", r)
			}
			if readFile(locked) != "locked\n" {
				t.Errorf("trusted: the workspace's denyWrite no longer applies:\n%s", r)
			}
			cfg = b.config(runSpec{})
			if !cfg.Trusted || !cfg.Policy.Sandbox.Disabled || cfg.source("sandbox.enabled", "false") != at("false") {
				t.Errorf("cordon config after trust: trusted %v, sandbox disabled %v from %q", cfg.Trusted, cfg.Policy.Sandbox.Disabled, cfg.source("sandbox.enabled", "false"))
			}

			// Revoked: back to tightening only.
			must(t, os.Remove(filepath.Join(outside, "new.txt")))
			rv := b.cordon(runSpec{}, "trust", "--revoke", b.ws)
			if rv.code != 0 || !strings.Contains(rv.stdout, "no longer trusted") {
				t.Fatalf("cordon trust --revoke:\n%s", rv)
			}
			r = b.sh(script)
			if exists(filepath.Join(outside, "new.txt")) {
				t.Errorf("revoked: the workspace's allowWrite still applies:\n%s", r)
			}
			checkHidden(t, r, "revoked: ~/.aws/credentials", awsSecret)
			if b.config(runSpec{}).Trusted {
				t.Errorf("cordon config: trusted after --revoke")
			}
		})

		t.Run("trusting a parent directory", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("ws/.cordon/settings.json", `{"cordon": {"mode": "danger-full-access"}}`)
			if r := b.cordon(runSpec{dir: b.dir}, "trust", "."); r.code != 0 {
				t.Fatalf("cordon trust .:\n%s", r)
			}
			if cfg := b.config(runSpec{}); !cfg.Trusted || cfg.Mode != "danger-full-access" {
				t.Errorf("a workspace below a trusted directory: trusted %v, mode %s", cfg.Trusted, cfg.Mode)
			}
			// The sibling that shares the prefix is not below it.
			sib := b.dir + "-sibling"
			must(t, os.Mkdir(sib, 0o755))
			t.Cleanup(func() { os.RemoveAll(sib) })
			if c.cred != nil {
				must(t, os.Chown(sib, c.uid, c.gid))
			}
			if cfg := b.config(runSpec{dir: sib}); cfg.Trusted {
				t.Errorf("%s-sibling is trusted by the trust of %s", b.dir, b.dir)
			}
		})

		for _, rel := range []string{"ws/.cordon/settings.json", "ws/.claude/settings.local.json"} {
			t.Run("a workspace cannot trust itself: "+rel, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				content := fmt.Sprintf(`{"cordon": {"trustedWorkspaces": [%q]}, "sandbox": {"filesystem": {"allowWrite": ["//etc"]}}}`, b.ws)
				file := b.writeAt(rel, content)
				r := b.sh("touch ran")
				want := "cordon: " + file + ":" + pos(t, content, "[") + ": cordon.trustedWorkspaces is only honoured in user or managed settings: a workspace cannot trust itself\n"
				if r.code != 125 || r.stderr != want {
					t.Errorf("want exit 125 and\n%s\n%s", want, r)
				}
				if exists(filepath.Join(b.ws, "ran")) {
					t.Errorf("the command ran")
				}
			})
		}

		t.Run("a command inside cannot trust its workspace", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.run("/.cordon/cordon", "trust", ".")
			userFile := filepath.Join(b.home, ".config/cordon/settings.json")
			if r.code == 0 || exists(userFile) {
				t.Errorf("cordon trust inside the sandbox succeeded (%s: %s):\n%s", userFile, readFile(userFile), r)
			}
		})
	})
}

// TestSettingsBadInput: a settings file or flag that cannot be read
// exactly as written stops cordon before anything runs: exit 125 and one
// line naming the file, line and column.
func TestSettingsBadInput(t *testing.T) {
	t.Parallel()
	type badCase struct {
		name    string
		rel     string // the file below the box
		content string
		at      string   // "LINE:COL" the error must name; "" to compute from needle
		needle  string   // the text the position points at
		flags   []string // more flags (a flag case has no file)
		msg     string   // what the line must say after the position
	}
	cases := []badCase{
		{name: "invalid JSON", rel: "home/.claude/settings.json", content: "{\n  \"sandbox\": {\n    \"enabled\": true,\n  }\n}\n",
			at: "4:3", msg: "trailing comma before '}'"},
		{name: "not JSON at all", rel: "ws/.claude/settings.json", content: "sandbox: {enabled: false}\n",
			at: "1:1", msg: "expected a value"},
		{name: "duplicate key", rel: "home/.claude/settings.json", content: `{"sandbox": {"enabled": true, "enabled": false}}`,
			needle: `"enabled": false`, msg: `duplicate key "enabled"`},
		{name: "unknown key in sandbox.filesystem", rel: "ws/.cordon/settings.json", content: "{\n  \"sandbox\": {\n    \"filesystem\": {\"denyReed\": [\"x\"]}\n  }\n}\n",
			needle: `"denyReed"`, msg: `unknown key "denyReed" in sandbox.filesystem (did you mean "denyRead"?)`},
		{name: "unknown key in sandbox.network", rel: "ws/.claude/settings.json", content: `{"sandbox": {"network": {"allowedDomain": ["a.example"]}}}`,
			needle: `"allowedDomain"`, msg: `unknown key "allowedDomain" in sandbox.network (did you mean "allowedDomains"?)`},
		{name: "unknown key in permissions", rel: "home/.claude/settings.json", content: `{"permissions": {"alow": ["Bash"]}}`,
			needle: `"alow"`, msg: `unknown key "alow" in permissions (did you mean "allow"?)`},
		{name: "unknown key in cordon", rel: "home/.config/cordon/settings.json", content: `{"cordon": {"limits": {"memroy": "1G"}}}`,
			needle: `"memroy"`, msg: `unknown key "memroy" in cordon.limits (did you mean "memory"?)`},
		{name: "unknown top-level key in cordon's file", rel: "home/.config/cordon/settings.json", content: `{"sandbx": {}}`,
			needle: `"sandbx"`, msg: `unknown key "sandbx" in the settings (did you mean "sandbox"?)`},
		{name: "unknown top-level key in sandbox-runtime's file", rel: "home/.srt-settings.json", content: `{"filesytem": {}}`,
			needle: `"filesytem"`, msg: `unknown key "filesytem" in the settings (did you mean "filesystem"?)`},
		{name: "wrong type: string for a list", rel: "home/.srt-settings.json", content: `{"filesystem": {"allowWrite": "/tmp"}}`,
			needle: `"/tmp"`, msg: "filesystem.allowWrite must be an array of paths, not string"},
		{name: "wrong type: string for a boolean", rel: "home/.claude/settings.json", content: `{"sandbox": {"enabled": "yes"}}`,
			needle: `"yes"`, msg: "sandbox.enabled must be true or false, not string"},
		{name: "wrong type: sandbox not an object", rel: "ws/.claude/settings.json", content: `{"sandbox": true}`,
			needle: `true`, msg: "sandbox must be an object"},
		{name: "empty path", rel: "home/.claude/settings.json", content: `{"sandbox": {"filesystem": {"denyRead": [""]}}}`,
			needle: `""`, msg: "sandbox.filesystem.denyRead: empty path"},
		{name: "another user's home", rel: "home/.claude/settings.json", content: `{"sandbox": {"filesystem": {"denyWrite": ["~root/x"]}}}`,
			needle: `"~root`, msg: `only the caller's own home (~/...) can be named`},
		{name: "glob that can match nothing", rel: "ws/.cordon/settings.json", content: `{"sandbox": {"filesystem": {"denyWrite": ["/a/[]x"]}}}`,
			needle: `"/a/`, msg: "is not a valid pattern"},
		{name: "** inside a name", rel: "home/.config/cordon/settings.json", content: `{"sandbox": {"filesystem": {"denyRead": ["~/a**"]}}}`,
			needle: `"~/a`, msg: "** must be a whole path element"},
		{name: "malformed domain", rel: "home/.claude/settings.json", content: `{"sandbox": {"network": {"allowedDomains": ["https://x.example/p"]}}}`,
			needle: `"https`, msg: `"https://x.example/p" is not a host name`},
		{name: "too broad a wildcard", rel: "ws/.claude/settings.json", content: `{"sandbox": {"network": {"deniedDomains": ["*.com"]}}}`,
			needle: `"*.com"`, msg: "is too broad"},
		{name: "bad port", rel: "home/.claude/settings.json", content: `{"sandbox": {"network": {"httpProxyPort": 70000}}}`,
			needle: `70000`, msg: "sandbox.network.httpProxyPort must be a port number from 1 to 65535"},
		{name: "bad rule: no closing paren", rel: "home/.claude/settings.json", content: `{"permissions": {"deny": ["Read("]}}`,
			needle: `"Read(`, msg: `rule "Read(": missing the closing )`},
		{name: "bad rule: empty parens", rel: "ws/.claude/settings.local.json", content: `{"permissions": {"ask": ["Bash()"]}}`,
			needle: `"Bash()"`, msg: `empty ( ); write Bash alone to mean every use`},
		{name: "bad rule: WebFetch without domain:", rel: "home/.claude/settings.json", content: `{"permissions": {"deny": ["WebFetch(example.com)"]}}`,
			needle: `"WebFetch`, msg: "WebFetch takes domain:NAME"},
		{name: "bad mode", rel: "home/.config/cordon/settings.json", content: `{"cordon": {"mode": "yolo"}}`,
			needle: `"yolo"`, msg: `cordon.mode: unknown mode "yolo"`},
		{name: "bad size", rel: "home/.config/cordon/settings.json", content: `{"cordon": {"limits": {"memory": "lots"}}}`,
			needle: `"lots"`, msg: "cordon.limits.memory must be a size"},
		{name: "managed-only lock in user settings", rel: "home/.config/cordon/settings.json", content: `{"cordon": {"allowManagedDomainsOnly": true}}`,
			needle: `true`, msg: "cordon.allowManagedDomainsOnly is only honoured in managed settings"},
		{name: "sandbox-runtime key cordon cannot honour", rel: "home/.srt-settings.json", content: `{"network": {"filterRequest": "allowAll"}}`,
			needle: `"allowAll"`, msg: "network.filterRequest is a function of sandbox-runtime's library"},
		{name: "sandbox-runtime filesystem.disabled", rel: "home/.srt-settings.json", content: `{"filesystem": {"disabled": true}}`,
			needle: `true`, msg: "filesystem.disabled is not supported by cordon"},
		{name: "error in a --settings file", rel: "team.json", content: `{"sandbox": {"filesystem": {"allowWrite": [1]}}}`,
			needle: `1]`, msg: "sandbox.filesystem.allowWrite must contain paths (strings), not number"},
		{name: "--mode", flags: []string{"--mode", "bogus"}, msg: `--mode: unknown mode "bogus"`},
		{name: "--deny-read empty", flags: []string{"--deny-read", ""}, msg: "--deny-read: empty path"},
		{name: "--allow-write bad glob", flags: []string{"--allow-write", "/x/{a"}, msg: "--allow-write: \"/x/{a\" is not a valid pattern"},
		{name: "--allow-domain URL", flags: []string{"--allow-domain", "http://x.example"}, msg: `--allow-domain: "http://x.example" is not a host name`},
		{name: "--settings missing", flags: []string{"--settings", "missing.json"}, msg: "missing.json: cannot read: no such file or directory"},
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("control", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			if r := b.sh("touch ran"); r.code != 0 || !exists(filepath.Join(b.ws, "ran")) {
				t.Fatalf("the command that marks a run did not run:\n%s", r)
			}
		})
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				flags := tc.flags
				prefix := "cordon: "
				if tc.rel != "" {
					file := b.writeAt(tc.rel, tc.content)
					at := tc.at
					if at == "" {
						at = pos(t, tc.content, tc.needle)
					}
					prefix += file + ":" + at + ": "
					if tc.rel == "team.json" {
						flags = append(flags, "--settings", file)
					}
				}
				r := b.shIn(flags, "touch ran")
				if r.code != 125 {
					t.Errorf("want exit 125:\n%s", r)
				}
				if ls := lines(r.stderr); len(ls) != 1 || !strings.HasPrefix(ls[0]+"\n", prefix) || !strings.Contains(ls[0], tc.msg) {
					t.Errorf("want one line on stderr: %s...%s...\n%s", prefix, tc.msg, r)
				}
				if exists(filepath.Join(b.ws, "ran")) {
					t.Errorf("the command ran")
				}
				// cordon config fails the same way.
				if cf := b.cordon(runSpec{}, append([]string{"config"}, flags...)...); cf.code != 125 || cf.stderr != r.stderr {
					t.Errorf("cordon config: want exit 125 and the same line:\n%s", cf)
				}
			})
		}
	})
}

// TestSettingsConfig: cordon config prints every value with the file,
// line and column it came from, what it ignored and why, and the
// allowRead/denyWrite asymmetry.
func TestSettingsConfig(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		project := "{\n  \"sandbox\": {\n    \"allowUnsandboxedCommands\": true,\n    \"filesystem\": {\n      \"allowWrite\": [\"~/extra\"],\n      \"denyWrite\": [\"/Makefile\"]\n    }\n  }\n}\n"
		pFile := b.writeAt("ws/.cordon/settings.json", project)
		srt := `{"ripgrep": {"command": "rg"}, "filesystem": {"denyRead": ["~/srt-denied"]}}`
		sFile := b.writeAt("home/.srt-settings.json", srt)
		user := `{"cordon": {"limits": {"pids": 256}}}`
		uFile := b.writeAt("home/.config/cordon/settings.json", user)

		r := b.cordon(runSpec{}, "config")
		if r.code != 0 {
			t.Fatalf("cordon config:\n%s", r)
		}
		out := r.stdout
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^workspace\s+` + regexp.QuoteMeta(b.ws) + ` \(not trusted`),
			regexp.MustCompile(`(?m)^mode\s+workspace-write$`),
			regexp.MustCompile(`(?m)^\s+user\s+` + regexp.QuoteMeta(sFile) + `$`),
			regexp.MustCompile(`(?m)^\s+project\s+` + regexp.QuoteMeta(pFile) + `$`),
			regexp.MustCompile(`(?m)^\s+sandbox\.filesystem\.denyWrite\s+` + regexp.QuoteMeta(b.ws+"/Makefile") + `\s+` + regexp.QuoteMeta(pFile+":"+pos(t, project, `"/Makefile"`)) + `$`),
			regexp.MustCompile(`(?m)^\s+sandbox\.filesystem\.denyRead\s+` + regexp.QuoteMeta(b.home+"/srt-denied") + `\s+` + regexp.QuoteMeta(sFile+":"+pos(t, srt, `"~/srt`)) + `$`),
			regexp.MustCompile(`(?m)^\s+sandbox\.filesystem\.denyRead\s+` + regexp.QuoteMeta(b.home+"/.ssh") + `\s+\(embedded default policy\):\d+:\d+$`),
			regexp.MustCompile(`(?m)^\s+cordon\.limits\.pids\s+256\s+` + regexp.QuoteMeta(uFile+":"+pos(t, user, "256")) + `$`),
			regexp.MustCompile(`(?m)^ignored:$`),
			regexp.MustCompile(`(?m)^\s+sandbox\.filesystem\.allowWrite ` + regexp.QuoteMeta(b.home+"/extra") + ` \(` + regexp.QuoteMeta(pFile+":"+pos(t, project, `"~/extra"`)) + `\): ` + regexp.QuoteMeta(untrustedReason) + `$`),
			regexp.MustCompile(`(?m)^\s+sandbox\.allowUnsandboxedCommands true \(` + regexp.QuoteMeta(pFile+":"+pos(t, project, "true")) + `\): ` + regexp.QuoteMeta(untrustedReason) + `$`),
			regexp.MustCompile(`(?m)^\s+ripgrep \(` + regexp.QuoteMeta(sFile+":"+pos(t, srt, `"ripgrep"`)) + `\): cordon does not search for files with ripgrep$`),
			regexp.MustCompile(`(?m)^notes:$`),
			regexp.MustCompile(`(?m)^\s+- .*allowRead inside a denyRead re-opens.*allowRead wins`),
			regexp.MustCompile(`(?m)^\s+- .*denyWrite inside an allowWrite closes.*denyWrite wins`),
			regexp.MustCompile(`(?m)^\s+- always read-only in every writable root.*\.git/hooks.*\.bashrc.*\.cordon`),
			regexp.MustCompile(`(?m)^\s+- the workspace is not trusted.*cordon trust ` + regexp.QuoteMeta(b.ws)),
		} {
			if !want.MatchString(out) {
				t.Errorf("cordon config: no line matching %s in\n%s", want, out)
			}
		}

		cfg := b.config(runSpec{})
		if cfg.Workspace != b.ws || cfg.Trusted || cfg.Mode != "workspace-write" {
			t.Errorf("cordon config --json: workspace %q trusted %v mode %q", cfg.Workspace, cfg.Trusted, cfg.Mode)
		}
		if got := cfg.source("cordon.limits.pids", "256"); got != uFile+":"+pos(t, user, "256") {
			t.Errorf("cordon config --json: cordon.limits.pids from %q", got)
		}
		if got := cfg.ignoredAt("sandbox.filesystem.allowWrite", b.home+"/extra", pFile+":"+pos(t, project, `"~/extra"`)); got != untrustedReason {
			t.Errorf("cordon config --json: allowWrite of the untrusted workspace not listed as ignored (%q)", got)
		}
		if slices.Contains(cfg.Policy.Filesystem.AllowWrite, b.home+"/extra") {
			t.Errorf("cordon config --json: the ignored allowWrite is in the policy")
		}
		notes := strings.Join(cfg.Report.Notes, "\n")
		if !strings.Contains(notes, "allowRead wins") || !strings.Contains(notes, "denyWrite wins") {
			t.Errorf("cordon config --json: the allowRead/denyWrite asymmetry is not in the notes:\n%s", notes)
		}
	})
}
