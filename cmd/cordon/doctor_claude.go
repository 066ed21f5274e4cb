package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"

	"cordon.dev/cordon/policy"
)

// claudeReport is what cordon doctor says of Claude Code's hook: whether
// a settings file runs cordon's hook for Bash, and whether the cordon it
// names is there to run.
type claudeReport struct {
	// Installed: a settings file runs cordon's hook before Bash calls,
	// with a cordon that is there, and Claude Code runs it.
	Installed bool         `json:"installed"`
	Lines     []claudeLine `json:"lines"`
}

// claudeLine is one line of the report: a hook found (name: its file), or
// a switch that stops hooks or that puts cordon inside Claude Code's own
// sandbox.
type claudeLine struct {
	Status string `json:"status"` // ok or missing
	Name   string `json:"name"`
	Detail string `json:"detail"`
}

// checkClaude reads Claude Code's settings files that apply in dir: the
// managed ones, the user's, and the project's.
func checkClaude(dir string) claudeReport {
	var rep claudeReport
	user, err := claudeUserSettings(os.Getenv)
	if err != nil {
		rep.Lines = append(rep.Lines, claudeLine{"missing", "user settings", err.Error()})
	}
	managed := claudeManagedSettings()
	files := append(append([]string(nil), managed...), user,
		filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.local.json"))
	type found struct {
		file string
		h    policy.ClaudeHook
	}
	var hooks []found
	var managedOnly, disabled string
	for _, f := range files {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			var hs []policy.ClaudeHook
			if hs, err = policy.ClaudeHooks(data); err == nil {
				for _, h := range hs {
					hooks = append(hooks, found{f, h})
				}
			}
		}
		if err != nil {
			rep.Lines = append(rep.Lines, claudeLine{"missing", f, err.Error()})
			continue
		}
		sw, _ := policy.ReadClaudeSwitches(data)
		if sw.Sandbox {
			rep.Lines = append(rep.Lines, claudeLine{"missing", f, "sandbox.enabled: Claude Code's own sandbox is on, and cordon runs inside its bubblewrap (turn it off)"})
		}
		if sw.DisableAllHooks {
			disabled = f
		}
		if sw.ManagedHooksOnly && isIn(f, managed) {
			managedOnly = f
		}
	}
	for _, fh := range hooks {
		l := claudeLine{Status: "ok", Name: fh.file, Detail: fmt.Sprintf("%s (%s): %s", fh.h.Event, fh.h.Matcher, fh.h.Command)}
		if why := hookProblem(fh.h); why != "" {
			l.Status, l.Detail = "missing", l.Detail+": "+why
		}
		switch {
		case disabled != "":
			l.Status, l.Detail = "missing", l.Detail+": "+disabled+" sets disableAllHooks"
		case managedOnly != "" && !isIn(fh.file, managed):
			l.Status, l.Detail = "missing", l.Detail+": "+managedOnly+" allows only managed hooks"
		}
		if l.Status == "ok" && fh.h.Event == policy.EventPreToolUse && matches(fh.h.Matcher, "Bash") {
			rep.Installed = true
		}
		rep.Lines = append(rep.Lines, l)
	}
	if !rep.Installed {
		rep.Lines = append(rep.Lines, claudeLine{"missing", "hook", "no settings file runs cordon's hook before Bash calls: Claude Code runs them unsandboxed (cordon install claude)"})
	}
	return rep
}

func isIn(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hookProblem says why Claude Code would not run a hook of cordon's as
// meant: Claude Code lets a call through, unsandboxed, when the hook's
// program is not there.
func hookProblem(h policy.ClaudeHook) string {
	if h.Command == "" {
		return "not a command hook"
	}
	prog, _ := policy.CordonCommand(h.Command)
	if !filepath.IsAbs(prog) {
		return "not an absolute path: it depends on Claude Code's $PATH"
	}
	if err := executable(prog); err != nil {
		return err.Error()
	}
	return ""
}

// matches reports whether a hook matcher (a tool name, a | list, or a
// regular expression; empty or * for every tool) covers tool.
func matches(matcher, tool string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	if re, err := regexp.Compile("^(?:" + matcher + ")$"); err == nil {
		return re.MatchString(tool)
	}
	for _, m := range strings.Split(matcher, "|") {
		if strings.TrimSpace(m) == tool {
			return true
		}
	}
	return false
}

// writeText writes the report under its heading, one line per finding.
func (rep claudeReport) writeText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Claude Code:\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, l := range rep.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Status, l.Name, l.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String()+"\n")
	return err
}
