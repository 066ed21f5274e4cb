package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInstallClaudeHook installs cordon's hook into each settings file of
// testdata/claudehook, then removes it, against golden files; it checks
// that installing twice changes nothing, that a file that had no hook of
// cordon's comes back byte for byte, and that what is written is the
// file's content plus the hook, nothing else.
func TestInstallClaudeHook(t *testing.T) {
	// Files uninstall does not give back as they were: an empty file
	// becomes {}, and an empty list of hooks goes with cordon's.
	emptied := map[string]bool{"empty": true, "tabs": true}
	files, err := filepath.Glob("testdata/claudehook/*.json")
	must(t, err)
	if len(files) == 0 {
		t.Fatal("no test files")
	}
	h := ClaudeHookEntry("/usr/local/bin/cordon")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(file)
			must(t, err)
			before, err := ClaudeHooks(in)
			must(t, err)

			installed, changed, err := InstallClaudeHook(in, h)
			must(t, err)
			if !changed {
				t.Error("install: unchanged")
			}
			golden(t, file, ".install.golden", installed)
			if _, err := parseJSON(installed); err != nil {
				t.Fatalf("install wrote a file that does not parse: %v\n%s", err, installed)
			}
			hooks, err := ClaudeHooks(installed)
			must(t, err)
			var pre []ClaudeHook
			for _, got := range hooks {
				if got.Event == EventPreToolUse {
					pre = append(pre, got)
				}
			}
			if diff := cmp.Diff([]ClaudeHook{h}, pre); diff != "" {
				t.Errorf("cordon's PreToolUse hooks after install (-want +got):\n%s", diff)
			}
			checkOnlyHooksChanged(t, in, installed)

			again, changed, err := InstallClaudeHook(installed, h)
			must(t, err)
			if changed || !bytes.Equal(again, installed) {
				t.Errorf("a second install changed the file:\n%s", again)
			}

			other := ClaudeHookEntry("/opt/cordon/bin/cordon")
			moved, changed, err := InstallClaudeHook(installed, other)
			must(t, err)
			hooks, err = ClaudeHooks(moved)
			must(t, err)
			n := 0
			for _, got := range hooks {
				if got.Event == EventPreToolUse {
					n++
					if got != other {
						t.Errorf("after a reinstall from elsewhere: %+v", got)
					}
				}
			}
			if !changed || n != 1 {
				t.Errorf("a reinstall from elsewhere: changed %v, %d hooks of cordon's", changed, n)
			}

			removed, changed, err := UninstallClaudeHook(installed)
			must(t, err)
			if !changed {
				t.Error("uninstall: unchanged")
			}
			golden(t, file, ".uninstall.golden", removed)
			if hooks, _ := ClaudeHooks(removed); len(hooks) != 0 {
				t.Errorf("hooks of cordon's left after uninstall: %+v", hooks)
			}
			if len(before) == 0 && !emptied[name] && !bytes.Equal(removed, in) {
				t.Errorf("install then uninstall changed the file:\n--- before\n%s\n--- after\n%s", in, removed)
			}
			if _, changed, _ := UninstallClaudeHook(removed); changed {
				t.Error("a second uninstall changed the file")
			}
		})
	}
}

func golden(t *testing.T, file, suffix string, got []byte) {
	t.Helper()
	path := strings.TrimSuffix(file, ".json") + suffix
	if *update {
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// checkOnlyHooksChanged decodes both files and compares them without
// their "hooks".
func checkOnlyHooksChanged(t *testing.T, before, after []byte) {
	t.Helper()
	decode := func(data []byte) map[string]any {
		m := map[string]any{}
		if len(bytes.TrimSpace(data)) > 0 {
			must(t, json.Unmarshal(data, &m))
		}
		delete(m, "hooks")
		return m
	}
	if diff := cmp.Diff(decode(before), decode(after)); diff != "" {
		t.Errorf("install changed more than hooks (-before +after):\n%s", diff)
	}
}

func TestInstallClaudeHookRefuses(t *testing.T) {
	h := ClaudeHookEntry("/usr/local/bin/cordon")
	for _, tc := range []struct{ name, in, err string }{
		{"comment", "{\n  // mine\n  \"model\": \"opus\"\n}", "2:3: comments are not allowed in JSON"},
		{"array", `[]`, "1:1: not a JSON object"},
		{"trailing comma", `{"model": "opus",}`, "1:18: trailing comma before '}'"},
		{"duplicate", `{"hooks": {}, "hooks": {}}`, `1:15: duplicate key "hooks"`},
		{"hooks not an object", `{"hooks": []}`, "1:11: hooks is not an object"},
		{"event not a list", `{"hooks": {"PreToolUse": {}}}`, "1:26: hooks.PreToolUse is not an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := InstallClaudeHook([]byte(tc.in), h)
			if err == nil || err.Error() != tc.err {
				t.Errorf("error %v, want %s", err, tc.err)
			}
		})
	}
}

func TestCordonCommand(t *testing.T) {
	for _, tc := range []struct {
		command, program string
		ok               bool
	}{
		{"/usr/local/bin/cordon hook claude", "/usr/local/bin/cordon", true},
		{"'/home/ana/my tools/cordon' hook claude --settings x", "/home/ana/my tools/cordon", true},
		{`"/opt/cordon-1.2/cordon" hook claude`, "/opt/cordon-1.2/cordon", true},
		{`/opt/with\ space/cordon hook claude`, "/opt/with space/cordon", true},
		{"cordon hook claude", "cordon", true},
		{"cordon check -- x", "", false},
		{"/usr/bin/audit hook claude", "", false},
		{"cordon hook", "", false},
		{"", "", false},
	} {
		program, ok := CordonCommand(tc.command)
		if program != tc.program || ok != tc.ok {
			t.Errorf("CordonCommand(%q) = %q, %v; want %q, %v", tc.command, program, ok, tc.program, tc.ok)
		}
	}
}

// TestJudgedTools checks that every tool the matcher names is one cordon
// judges by what it does, not by rules alone.
func TestJudgedTools(t *testing.T) {
	for _, tool := range JudgedTools() {
		req := Request{Tool: tool, Command: "ls", Path: "f"}
		if req.kind() == kindOther {
			t.Errorf("%s is in the matcher but judged as any other tool", tool)
		}
	}
	if h := ClaudeHookEntry("/c"); !strings.Contains("|"+h.Matcher+"|", "|Bash|") || h.Timeout <= maxHookTimeout.Seconds() {
		t.Errorf("hook entry %+v", h)
	}
}

func TestReadClaudeSwitches(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ClaudeSwitches
	}{
		{`{}`, ClaudeSwitches{}},
		{``, ClaudeSwitches{}},
		{`{"sandbox": {"enabled": true}}`, ClaudeSwitches{Sandbox: true}},
		{`{"sandbox": {"enabled": false, "autoAllowBashIfSandboxed": true}}`, ClaudeSwitches{}},
		{`{"disableAllHooks": true, "allowManagedHooksOnly": true}`, ClaudeSwitches{DisableAllHooks: true, ManagedHooksOnly: true}},
	} {
		got, err := ReadClaudeSwitches([]byte(tc.in))
		must(t, err)
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzInstallClaudeHook installs and removes cordon's hook in any settings
// file that parses: the result parses, holds cordon's hook exactly once
// (none after the removal), and keeps every other key.
func FuzzInstallClaudeHook(f *testing.F) {
	files, _ := filepath.Glob("testdata/claudehook/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	h := ClaudeHookEntry("/usr/local/bin/cordon")
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, err := settingsRoot(in); err != nil {
			return
		}
		installed, _, err := InstallClaudeHook(in, h)
		if err != nil {
			return // hooks or an event's list of another type
		}
		if _, err := settingsRoot(installed); err != nil {
			t.Fatalf("install wrote a file that does not parse: %v\n%q", err, installed)
		}
		hooks, _ := ClaudeHooks(installed)
		n := 0
		for _, got := range hooks {
			if got.Event == EventPreToolUse {
				n++
				if got != h {
					t.Fatalf("hook %+v after install of %q", got, in)
				}
			}
		}
		if n != 1 {
			t.Fatalf("%d hooks of cordon's after install of %q:\n%s", n, in, installed)
		}
		var before, after map[string]any
		if json.Unmarshal(in, &before) == nil && json.Unmarshal(installed, &after) == nil {
			delete(before, "hooks")
			delete(after, "hooks")
			if diff := cmp.Diff(before, after); diff != "" {
				t.Fatalf("install changed more than hooks:\n%s", diff)
			}
		}
		removed, _, err := UninstallClaudeHook(installed)
		if err != nil {
			t.Fatal(err)
		}
		if hooks, err := ClaudeHooks(removed); err != nil || len(hooks) != 0 {
			t.Fatalf("after uninstall: %v %+v\n%s", err, hooks, removed)
		}
	})
}
