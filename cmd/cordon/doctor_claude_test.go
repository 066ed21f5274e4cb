package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cordon.dev/cordon/policy"
)

func TestCheckClaude(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", "cordon")
	must(t, os.MkdirAll(filepath.Dir(exe), 0o755))
	must(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	notExe := filepath.Join(dir, "bin", "cordon-data")
	must(t, os.WriteFile(notExe, nil, 0o644))
	installed := func(path string) string {
		out, _, err := policy.InstallClaudeHook(nil, policy.ClaudeHookEntry(path))
		must(t, err)
		return string(out)
	}
	for _, tc := range []struct {
		name          string
		user, project string // settings files' content, "" for none
		installed     bool
		want          []string // in the lines, in order
	}{
		{name: "none", want: []string{"missing hook  no settings file runs cordon's hook"}},
		{name: "user", user: installed(exe), installed: true, want: []string{"ok home/.claude/settings.json PreToolUse (Bash|Edit"}},
		{name: "project", project: installed(exe), installed: true, want: []string{"ok project/.claude/settings.json PreToolUse"}},
		{name: "gone", user: installed(filepath.Join(dir, "old", "cordon")), want: []string{"missing home/.claude/settings.json", "no such file", "missing hook"}},
		{name: "not executable", user: installed(notExe), want: []string{"cordon-data is not an executable file", "missing hook"}},
		{name: "relative", user: `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cordon hook claude"}]}]}}`,
			want: []string{"not an absolute path", "missing hook"}},
		{name: "not for Bash", user: `{"hooks": {"PreToolUse": [{"matcher": "Read|Edit", "hooks": [{"type": "command", "command": "` + exe + ` hook claude"}]}]}}`,
			want: []string{"ok home/.claude/settings.json PreToolUse (Read|Edit)", "missing hook"}},
		{name: "every tool", user: `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "` + exe + ` hook claude"}]}]}}`,
			installed: true},
		{name: "hooks off", user: strings.Replace(installed(exe), "{", `{"disableAllHooks": true,`, 1),
			want: []string{"sets disableAllHooks", "missing hook"}},
		{name: "Claude Code's sandbox", user: installed(exe), project: `{"sandbox": {"enabled": true}}`, installed: true,
			want: []string{"missing project/.claude/settings.json sandbox.enabled: Claude Code's own sandbox is on"}},
		{name: "not JSON", user: "{,}", want: []string{"missing home/.claude/settings.json 1:2:", "missing hook"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
			for file, content := range map[string]string{
				filepath.Join(home, ".claude", "settings.json"):    tc.user,
				filepath.Join(project, ".claude", "settings.json"): tc.project,
			} {
				must(t, os.MkdirAll(filepath.Dir(file), 0o755))
				if content != "" {
					must(t, os.WriteFile(file, []byte(content), 0o644))
				}
			}
			t.Setenv("HOME", home)
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			rep := checkClaude(project)
			var text strings.Builder
			must(t, rep.writeText(&text))
			got := strings.Join(strings.Fields(strings.ReplaceAll(text.String(), root+"/", "")), " ")
			if rep.Installed != tc.installed {
				t.Errorf("installed %v, want %v\n%s", rep.Installed, tc.installed, text.String())
			}
			rest := got
			for _, w := range tc.want {
				w = strings.Join(strings.Fields(w), " ")
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("no %q (in order) in:\n%s", w, text.String())
					break
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
