package darwin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cordon.dev/cordon/policy"
)

// sandbox-runtime's profiles for the same settings, for the side-by-side
// tables: the npm package pinned in testdata/srt, installed by the test
// into a cache directory of its own, and its macOS profile generator run
// under node by testdata/srt/profile.mjs.

// srtCase is one profile to ask sandbox-runtime for.
type srtCase struct {
	Name        string         `json:"name"`
	Cwd         string         `json:"cwd"`
	Home        string         `json:"home"`
	ReadConfig  map[string]any `json:"readConfig"`
	WriteConfig map[string]any `json:"writeConfig"`
	Options     map[string]any `json:"options"`
}

// srtTempDir is sandbox-runtime's TMPDIR for the command (its
// SANDBOX_OWN_WRITE_PATHS), as a Mac spells it.
const srtTempDir = "/private/tmp/claude"

// srtPorts are the proxy ports sandbox-runtime gets when cordon has none:
// it starts its proxy whatever allowedDomains says.
const srtHTTPPort, srtSOCKSPort = 13128, 11080

// needOrSkip skips the test for a missing need, or fails it when
// CORDON_INTEGRATION=1 (CI), where every need must be met.
func needOrSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CORDON_INTEGRATION") == "1" {
		t.Fatalf("needs "+format+" (CORDON_INTEGRATION=1: a missing need is a failure)", args...)
	}
	t.Skipf("needs "+format, args...)
}

// srtInstall installs the package testdata/srt/package-lock.json pins,
// once per lock file, under the user's cache directory, and returns the
// directory holding its node_modules.
func srtInstall(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			needOrSkip(t, "%s (Debian's nodejs and npm; scripts/deps.sh installs them)", tool)
		}
	}
	var lock []byte
	sum := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "srt", f))
		if err != nil {
			t.Fatal(err)
		}
		sum.Write(b)
		if f == "package-lock.json" {
			lock = b
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "cordon-test")
	dir := filepath.Join(parent, "srt-"+hex.EncodeToString(sum.Sum(nil))[:16])
	if srtInstalled(dir) {
		return dir
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside it and renamed into place: another test process
	// installing at the same time never sees half a tree.
	tmp, err := os.MkdirTemp(parent, "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkg, err := os.ReadFile(filepath.Join("testdata", "srt", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for attempt := 0; attempt < 3; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
		cmd.Dir = tmp
		// npm refuses nothing for an engines mismatch without engine-strict.
		cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_engine_strict=false")
		out, err = cmd.CombinedOutput()
		cancel()
		if err == nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 2 * time.Second)
	}
	if err != nil {
		needOrSkip(t, "sandbox-runtime from npm (npm ci: %v: %s)", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !srtInstalled(dir) {
		t.Fatalf("install sandbox-runtime into %s: %v", dir, err)
	}
	if !srtInstalled(dir) {
		t.Fatalf("sandbox-runtime is not in %s after npm ci", dir)
	}
	return dir
}

// srtInstalled reports whether dir holds the pinned sandbox-runtime.
func srtInstalled(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@anthropic-ai", "sandbox-runtime", "package.json"))
	if err != nil {
		return false
	}
	var pkg struct{ Version string }
	return json.Unmarshal(b, &pkg) == nil && pkg.Version == "0.0.83"
}

// srtProfiles runs sandbox-runtime's generator for cases.
func srtProfiles(t *testing.T, cases []srtCase) map[string]string {
	t.Helper()
	dir := srtInstall(t)
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "srt", "profile.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	profiles := map[string]string{}
	if err := json.Unmarshal(out, &profiles); err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	return profiles
}

// srtSettings returns sandbox-runtime's settings equivalent to a cordon
// policy and request: the same lists (braces expanded, paths spelt as a Mac
// resolves them: /tmp, /var and /etc through /private, and a literal path
// also through the symbolic links of the request's file system, as
// sandbox-runtime's realpath would), the workspace among the writable
// paths unless the mode is read-only, the proxy's ports, the same network
// switches. Its own defaults (TMPDIR /tmp/claude, ~/.npm/_logs, ...) are
// added by profile.mjs, as its manager adds them. A glob whose fixed part
// holds an escaped metacharacter has no spelling in sandbox-runtime's
// syntax (it has no escapes) and is left out.
func srtSettings(t *testing.T, name string, p *policy.Policy, r Request) srtCase {
	t.Helper()
	res := resolver{fsys: r.FS}
	split := func(list []string, always string) (globs, literals []string) {
		for _, e := range list {
			if e == always || !policy.IsGlob(e) {
				lit := e
				if e != always {
					lit = policy.UnescapePattern(e)
				}
				for _, sp := range res.spellings(path.Clean(lit)) {
					literals = append(literals, sp)
				}
				continue
			}
			alts, err := expandBraces(e)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range alts {
				if i := strings.IndexAny(a, `\*?[`); i >= 0 && a[i] == '\\' {
					continue
				}
				globs = append(globs, canonical(a))
			}
		}
		return globs, literals
	}
	denyRead, literalDenyRead := split(p.Filesystem.DenyRead, "")
	allowRead, literalAllowRead := split(p.Filesystem.AllowRead, "")
	allowWrite, literalAllowWrite := split(p.WritableRoots(), p.Workspace)
	denyWrite, literalDenyWrite := split(p.Filesystem.DenyWrite, "")
	opts := map[string]any{
		"allowGitConfig":               p.Filesystem.AllowGitConfig,
		"allowLocalBinding":            p.Network.AllowLocalBinding,
		"allowAllUnixSockets":          p.Network.AllowAllUnixSockets,
		"allowPty":                     r.Terminal,
		"enableWeakerNetworkIsolation": p.Sandbox.EnableWeakerNetworkIsolation,
		"httpProxyPort":                srtHTTPPort,
		"socksProxyPort":               srtSOCKSPort,
	}
	if networkOn(p) {
		delete(opts, "httpProxyPort")
		delete(opts, "socksProxyPort")
		if r.HTTPProxyPort != 0 {
			opts["httpProxyPort"] = r.HTTPProxyPort
		}
		if r.SOCKSProxyPort != 0 {
			opts["socksProxyPort"] = r.SOCKSProxyPort
		}
	}
	sockets := []string{}
	for _, s := range p.Network.AllowUnixSockets {
		sockets = append(sockets, res.spellings(s)...)
	}
	opts["allowUnixSockets"] = sockets
	if len(p.Network.AllowMachLookup) > 0 {
		opts["allowMachLookup"] = p.Network.AllowMachLookup
	}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return srtCase{
		Name: name, Cwd: res.resolve(r.Cwd), Home: home,
		ReadConfig: map[string]any{
			"denyOnly": nonNil(denyRead), "literalDenyOnly": nonNil(literalDenyRead),
			"allowWithinDeny": nonNil(allowRead), "literalAllowWithinDeny": nonNil(literalAllowRead),
		},
		WriteConfig: map[string]any{
			"allowOnly": nonNil(allowWrite), "literalAllowOnly": nonNil(literalAllowWrite),
			"denyWithinAllow": nonNil(denyWrite), "literalDenyWithinAllow": nonNil(literalDenyWrite),
		},
		Options: opts,
	}
}

// TestSRTProfileRuns: sandbox-runtime's generator runs, and its profile is
// one the evaluator reads.
func TestSRTProfileRuns(t *testing.T) {
	p, r := profileCase{}.build(t)
	profiles := srtProfiles(t, []srtCase{srtSettings(t, "default", p, r)})
	sb, err := loadSBPL(profiles["default"], nil)
	if err != nil {
		t.Fatalf("sandbox-runtime's profile: %v\n%s", err, profiles["default"])
	}
	v, err := sb.decide(file("file-read-data", home+"/.ssh/id_ed25519"))
	if err != nil || v.allow {
		t.Errorf("sandbox-runtime reads ~/.ssh: %v (line %d, %v)", v.allow, v.line, err)
	}
}
