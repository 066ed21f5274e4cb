// Package claudecode drives the real Claude Code for cordon's end-to-end
// tests and benchmarks: it installs the pinned release from npm into a
// cache once per machine, and stands in for the Messages API with a
// scripted model (Server), so that Claude Code runs offline and its tool
// calls — and what it returns to the model for each — are known. It
// decides nothing about cordon; the tests judge.
package claudecode

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
)

// Version is the Claude Code release the tests drive.
const Version = "2.1.328"

// CacheDir is where Install puts Claude Code by default: a directory every
// user can read (the tests run it as an unprivileged user too).
func CacheDir() string {
	if os.Geteuid() == 0 {
		return "/var/cache/cordon-it"
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "cordon-it")
	}
	return filepath.Join(os.TempDir(), "cordon-it")
}

// Install returns the path of Claude Code's native binary, installing the
// release Version with npm into cache/claude-code-VERSION first when it is
// not there (about 370 MB). The binary is the platform's optional
// dependency's: the package's postinstall script, which only copies it and
// wants Node 22, is not run.
func Install(cache string) (string, error) {
	pkg, ok := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
	if runtime.GOOS != "linux" || !ok {
		return "", fmt.Errorf("no Claude Code package for %s/%s here", runtime.GOOS, runtime.GOARCH)
	}
	return NPMInstall(cache, "@anthropic-ai/claude-code", Version,
		filepath.Join("node_modules", "@anthropic-ai", "claude-code-"+pkg, "claude"))
}

// NPMInstall returns the path of file (relative to the install's prefix)
// of the npm package name at version, installing it into
// cache/BASE-VERSION (BASE: the name's last part) first when file is not
// there: scripts not run, beside it first and renamed into place, and a
// lock keeps concurrent installs apart.
func NPMInstall(cache, name, version, file string) (string, error) {
	dir := filepath.Join(cache, filepath.Base(name)+"-"+version)
	want := filepath.Join(dir, file)
	if _, err := os.Stat(want); err == nil {
		return want, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(cache, "."+filepath.Base(name)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(want); err == nil {
		return want, nil // installed while we waited
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm, to install %s@%s: %w", name, version, err)
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command(npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save", "--prefix", tmp, name+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("npm install %s@%s: %v\n%s", name, version, err, out.Bytes())
	}
	if _, err := os.Stat(filepath.Join(tmp, file)); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("npm installed %s@%s without %s (%v)\n%s", name, version, file, err, out.Bytes())
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return want, nil
}

// Env is the environment Claude Code runs in against a stand-in: home is
// its own fresh home, base the stand-in's URL; PATH and the locale come
// from path and the rest is left out.
func Env(home, base, path string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + path,
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=sk-ant-cordon-test",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

// Args are the arguments of one headless session on prompt, its events
// in stream-json; more are added after.
func Args(prompt string, more ...string) []string {
	return append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose"}, more...)
}
