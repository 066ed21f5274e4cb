package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/policy"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "install cordon's hook into an agent's settings (cordon install claude)",
		Commands: []*cli.Command{{
			Name:  "claude",
			Usage: "write cordon's PreToolUse hook into Claude Code's user settings (or the project's)",
			Description: "Writes the hook into ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when set), or with " +
				"--project into .claude/settings.json of the current directory: cordon's absolute path, every tool " +
				"cordon judges as the matcher, a timeout longer than cordon's own. The rest of the file is kept byte " +
				"for byte, the file before the change is kept beside it (settings.json.cordon.bak), and a second run " +
				"changes nothing. Refuses when Claude Code's own sandbox is on, or when no hook of that file would run. " +
				"--uninstall removes cordon's hooks instead. See docs/claude-code.md.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "project", Usage: "the project's settings (.claude/settings.json here), not the user's"},
				&cli.BoolFlag{Name: "uninstall", Usage: "remove cordon's hooks"},
				&cli.StringFlag{Name: "cordon", Usage: "the cordon binary the hook runs, absolute (default: this one)"},
			},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				if cmd.Args().Len() > 0 {
					return fmt.Errorf("install claude takes no arguments (%q)", cmd.Args().First())
				}
				s, err := claudeSettingsScope(cmd.Bool("project"))
				if err != nil {
					return err
				}
				if cmd.Bool("uninstall") {
					return uninstallClaudeHook(s.file)
				}
				self, err := cordonPath(cmd.String("cordon"))
				if err != nil {
					return err
				}
				if err := s.refuse(); err != nil {
					return err
				}
				return installClaudeHook(s.file, policy.ClaudeHookEntry(self))
			},
		}},
	}
}

// claudeScope is a Claude Code settings file cordon install writes, with
// the files that decide whether its hooks run: the managed ones, and for a
// project the user's and the project's local one.
type claudeScope struct {
	file   string
	others []string
}

// claudeUserSettings is Claude Code's user settings file in the
// environment getenv reads.
func claudeUserSettings(getenv func(string) string) (string, error) {
	if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "settings.json"), nil
	}
	home, err := homeDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// claudeManagedSettings are Claude Code's managed settings files.
func claudeManagedSettings() []string {
	var out []string
	for _, f := range policy.DefaultManagedFiles {
		if filepath.Base(f) != "managed-settings.json" || strings.HasPrefix(f, "/etc/cordon/") {
			continue
		}
		out = append(out, f)
		more, _ := filepath.Glob(filepath.Join(filepath.Dir(f), "managed-settings.d", "*.json"))
		out = append(out, more...)
	}
	return out
}

func claudeSettingsScope(project bool) (claudeScope, error) {
	user, err := claudeUserSettings(os.Getenv)
	if err != nil {
		return claudeScope{}, err
	}
	s := claudeScope{file: user, others: claudeManagedSettings()}
	if project {
		cwd, err := os.Getwd()
		if err != nil {
			return s, fmt.Errorf("working directory: %w", err)
		}
		s.file = filepath.Join(cwd, ".claude", "settings.json")
		s.others = append(s.others, user, filepath.Join(cwd, ".claude", "settings.local.json"))
	}
	return s, nil
}

// refuse says why a hook in the scope's file would not sandbox: Claude
// Code's own sandbox is on (cordon would run inside it), or no hook of
// that file runs.
func (s claudeScope) refuse() error {
	for _, f := range append([]string{s.file}, s.others...) {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		sw, err := policy.ReadClaudeSwitches(data)
		if err != nil {
			if f == s.file {
				return fmt.Errorf("%s:%w", f, err)
			}
			continue // not the file we write: Claude Code says what is wrong with it
		}
		switch {
		case sw.Sandbox:
			return fmt.Errorf("Claude Code's own sandbox is on (%s: sandbox.enabled): turn it off first, or every command would run cordon inside its bubblewrap", f)
		case sw.DisableAllHooks:
			return fmt.Errorf("%s sets disableAllHooks: Claude Code would run no hook, cordon's neither", f)
		case sw.ManagedHooksOnly && strings.Contains(f, "managed-settings"):
			return fmt.Errorf("%s sets allowManagedHooksOnly: Claude Code would run only the managed settings' hooks (put cordon's there)", f)
		}
	}
	return nil
}

// cordonPath is the cordon binary the hook runs: path, or this one as it
// was found (a link on $PATH stays a link: an upgrade that moves the
// binary behind it keeps the hook working).
func cordonPath(path string) (string, error) {
	if path == "" {
		self, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("cordon's own path: %w", err)
		}
		path = self
		arg0 := os.Args[0]
		if !strings.Contains(arg0, "/") {
			arg0, _ = exec.LookPath(arg0)
		}
		if abs, err := filepath.Abs(arg0); err == nil && arg0 != "" && sameFile(abs, self) {
			path = abs
		}
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("--cordon %s: not an absolute path", path)
	}
	if err := executable(path); err != nil {
		return "", err
	}
	return filepath.Clean(path), nil
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// executable says why path is not a program its user can run.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

func installClaudeHook(file string, h policy.ClaudeHook) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	old, err := policy.ClaudeHooks(data)
	if err != nil {
		return fmt.Errorf("%s:%w", file, err)
	}
	out, changed, err := policy.InstallClaudeHook(data, h)
	if err != nil {
		return fmt.Errorf("%s:%w", file, err)
	}
	if !changed {
		fmt.Fprintf(stdout, "cordon: the hook is in %s already\n", file)
		return nil
	}
	backup, err := writeSettings(file, data, out)
	if err != nil {
		return err
	}
	for _, o := range old {
		if o.Event == h.Event && o != h {
			fmt.Fprintf(stdout, "cordon: replaced %s's hook %q (matcher %q)\n", o.Event, o.Command, o.Matcher)
		}
	}
	fmt.Fprintf(stdout, "cordon: installed the hook in %s%s\n", file, backup)
	return nil
}

func uninstallClaudeHook(file string) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "cordon: no hook of cordon's in %s (no such file)\n", file)
		return nil
	}
	if err != nil {
		return err
	}
	out, changed, err := policy.UninstallClaudeHook(data)
	if err != nil {
		return fmt.Errorf("%s:%w", file, err)
	}
	if !changed {
		fmt.Fprintf(stdout, "cordon: no hook of cordon's in %s\n", file)
		return nil
	}
	backup, err := writeSettings(file, data, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cordon: removed the hook from %s%s\n", file, backup)
	return nil
}

// writeSettings replaces a settings file's content (before, nil when it
// did not exist) with data, whole or not at all, keeping its mode and,
// for a symbolic link, the link (its target is written). before goes to
// FILE.cordon.bak; the answer says so.
func writeSettings(file string, before, data []byte) (string, error) {
	target := file
	if resolved, err := filepath.EvalSymlinks(file); err == nil {
		target = resolved
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", err
	}
	note := ""
	if before != nil {
		bak := file + ".cordon.bak"
		if err := os.WriteFile(bak+".tmp", before, mode); err != nil {
			return "", err
		}
		if err := os.Rename(bak+".tmp", bak); err != nil {
			return "", err
		}
		note = " (the file before: " + bak + ")"
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return note, os.Rename(tmp.Name(), target)
}
