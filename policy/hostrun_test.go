package policy

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/internal/paths"
)

func TestHostRunFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"w/scripts/fmt.sh":       {Data: []byte("x")},
		"w/scripts/status.sh":    {Data: []byte("x")},
		"w/tools/check.py":       {Data: []byte("x")},
		"w/mcp/server.js":        {Data: []byte("x")},
		"w/bin/lint":             {Data: []byte("x")},
		"w/link.sh":              {Data: []byte("scripts/fmt.sh"), Mode: 0o777 | 1<<27}, // fs.ModeSymlink
		"w/dir/.keep":            {Data: []byte("x")},
		"h/bin/key.sh":           {Data: []byte("x")},
		"h/.claude/hooks/n.sh":   {Data: []byte("x")},
		"elsewhere/outside.sh":   {Data: []byte("x")},
		"w/with space/run me.sh": {Data: []byte("x")},
	}
	for _, tc := range []struct {
		name     string
		settings string
		want     []string
	}{
		{"a hook by $CLAUDE_PROJECT_DIR", `{"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/fmt.sh"}]}]}}`,
			[]string{"/w/scripts/fmt.sh"}},
		{"${CLAUDE_PROJECT_DIR}, an interpreter's argument after cd", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cd ${CLAUDE_PROJECT_DIR} && python3 tools/check.py --strict"}]}]}}`,
			[]string{"/w/tools/check.py"}},
		{"the status line, the key helper in the home", `{"statusLine": {"type": "command", "command": "bash ./scripts/status.sh"}, "apiKeyHelper": "~/bin/key.sh"}`,
			[]string{"/h/bin/key.sh", "/w/scripts/status.sh"}},
		{"a stdio MCP server", `{"mcpServers": {"a": {"command": "node", "args": ["./mcp/server.js", "--port", "1"]}, "b": {"type": "http", "url": "https://x"}}}`,
			[]string{"/w/mcp/server.js"}},
		{"a relative command with a slash, a quoted name with spaces", `{"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "bin/lint; 'with space/run me.sh'"}]}]}}`,
			[]string{"/w/bin/lint", "/w/with space/run me.sh"}},
		{"a symlink and its target", `{"apiKeyHelper": "./link.sh"}`, []string{"/w/link.sh", "/w/scripts/fmt.sh"}},
		{"not named: commands on $PATH, directories, options, other variables, outside, missing", `{"hooks": {"Stop": [{"hooks": [
			{"type": "command", "command": "npx prettier --write ."},
			{"type": "command", "command": "ls dir; $HOOK_DIR/x.sh; /elsewhere/outside.sh; ./missing.sh; cat ../w/scripts/*.sh"}]}]}}`, nil},
		{"wrong shapes are skipped", `{"hooks": {"Stop": "x"}, "statusLine": "bash ./scripts/status.sh", "apiKeyHelper": 3, "mcpServers": []}`, nil},
		{"not JSON", `{`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hostRunFiles(fsys, hostCommands([]byte(tc.settings)), "/w", "/h")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzHostCommands: any settings file or .mcp.json is read without a
// panic, and every file found is below the workspace or the home.
func FuzzHostCommands(f *testing.F) {
	f.Add(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cd ${CLAUDE_PROJECT_DIR} && python3 tools/check.py"}]}]}}`)
	f.Add(`{"mcpServers": {"a": {"command": "node", "args": ["./mcp/server.js"]}}, "apiKeyHelper": "~/bin/key.sh"}`)
	f.Add(`{"statusLine": {"command": "bash -c './scripts/fmt.sh $(cat x)'"}}`)
	fsys := fstest.MapFS{"w/tools/check.py": {}, "w/mcp/server.js": {}, "h/bin/key.sh": {}, "w/scripts/fmt.sh": {}, "x/y.sh": {}}
	f.Fuzz(func(t *testing.T, settings string) {
		for _, p := range hostRunFiles(fsys, hostCommands([]byte(settings)), "/w", "/h") {
			if !paths.Below(p, "/w") && !paths.Below(p, "/h") {
				t.Fatalf("%q is outside the workspace and the home", p)
			}
		}
	})
}
