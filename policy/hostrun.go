package policy

import (
	"encoding/json"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/policy/shell"
)

// Claude Code starts commands on the host by itself, outside any sandbox:
// its hooks (after every tool call, at the start of a session, ...), the
// status line, the helpers that print an API key or refresh cloud
// credentials, and the MCP servers .mcp.json describes. .claude/hooks and
// .mcp.json are protected, but such a command may name a script anywhere
// in the workspace ("$CLAUDE_PROJECT_DIR"/scripts/fmt.sh, python3
// tools/check.py, node ./mcp/server.js): a sandboxed command that rewrote
// it would have it run on the host at the next tool call, with nobody
// asked. hostRunFiles finds those scripts so that they stay read-only.

// hostCommandKeys are the settings keys whose string value is a command
// Claude Code runs on the host.
var hostCommandKeys = []string{"apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"}

// hostCommands returns the commands a Claude Code settings file (or
// .mcp.json) has Claude Code run on the host. What does not have the
// expected shape is skipped: this only ever adds protection.
func hostCommands(data []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	var out []string
	str := func(raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	command := func(raw json.RawMessage) { // {"type": "command", "command": "..."}
		var c struct {
			Command json.RawMessage `json:"command"`
		}
		if json.Unmarshal(raw, &c) == nil {
			str(c.Command)
		}
	}
	for _, k := range hostCommandKeys {
		str(top[k])
	}
	command(top["statusLine"])
	command(top["fileSuggestion"])
	var events map[string][]struct {
		Hooks []json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(top["hooks"], &events) == nil {
		for _, event := range slices.Sorted(maps.Keys(events)) {
			for _, m := range events[event] {
				for _, h := range m.Hooks {
					command(h)
				}
			}
		}
	}
	// .mcp.json: a stdio server is a command and its arguments.
	var servers map[string]struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if json.Unmarshal(top["mcpServers"], &servers) == nil {
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			s := servers[name]
			if s.Command == "" {
				continue
			}
			words := append([]string{s.Command}, s.Args...)
			for i, w := range words {
				words[i] = singleQuote(w)
			}
			out = append(out, strings.Join(words, " "))
		}
	}
	return out
}

// hostRunFiles returns the files below the workspace or the home
// directory that the commands name, as a command or as an argument: those
// that exist and are not directories, and, for a symlink, its target too.
// $CLAUDE_PROJECT_DIR is the workspace, ~ and $HOME the home; a relative
// name is taken from the workspace, where Claude Code starts them. Words
// known only at run time are skipped. Which of them a sandbox could write
// is for spec's mount plan and darwin's profile to work out.
func hostRunFiles(fsys fs.FS, commands []string, ws, home string) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, c := range commands {
		script, _ := shell.Parse(c)
		if script == nil {
			continue
		}
		for _, cmd := range script.Commands {
			for _, w := range append([]shell.Word{cmd.Name}, cmd.Args...) {
				p, ok := hostRunPath(w, ws, home)
				if !ok {
					continue
				}
				fi, err := fs.Lstat(fsys, strings.TrimPrefix(p, "/"))
				if err != nil || fi.IsDir() {
					continue
				}
				add(p)
				if fi.Mode()&fs.ModeSymlink != 0 {
					if t, ok := linkedFile(fsys, p); ok {
						add(t)
					}
				}
			}
		}
	}
	return out
}

// linkedFile returns the file the symbolic link p points to, cleaned and
// absolute, if it exists and is not a directory.
func linkedFile(fsys fs.FS, p string) (string, bool) {
	t, err := fs.ReadLink(fsys, strings.TrimPrefix(p, "/"))
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	t = filepath.Clean(t)
	if fi, err := fs.Stat(fsys, strings.TrimPrefix(t, "/")); err != nil || fi.IsDir() {
		return "", false
	}
	return t, true
}

// hostRunPath is the absolute path word names, if it may name a file:
// not an option, not a bare command name (found on $PATH), not a word
// that depends on anything but $CLAUDE_PROJECT_DIR and the home.
func hostRunPath(w shell.Word, ws, home string) (string, bool) {
	v := w.Value
	if w.Home {
		v = home + strings.TrimPrefix(v, "~")
	}
	for _, name := range []string{"${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"} {
		v = strings.ReplaceAll(v, name, ws)
	}
	if strings.ContainsAny(v, "$`*?[") || v == "" || strings.HasPrefix(v, "-") || !strings.Contains(v, "/") && !strings.Contains(v, ".") {
		return "", false
	}
	if !filepath.IsAbs(v) {
		v = filepath.Join(ws, v)
	}
	v = filepath.Clean(v)
	if !paths.Below(v, ws) && !paths.Below(v, home) {
		return "", false
	}
	return v, true
}

// readHostCommands reads .mcp.json in the workspace (Claude Code's project
// MCP servers) for hostCommands; a missing or unreadable file has none.
func readHostCommands(fsys fs.FS, ws string) []string {
	data, err := readSettingsFile(fsys, strings.TrimPrefix(filepath.Join(ws, ".mcp.json"), "/"))
	if err != nil {
		return nil
	}
	return hostCommands(data)
}
